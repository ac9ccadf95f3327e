"""Domains and projects (Keystone's "resource" backend): hierarchy, tags, and what a
delete or a disable takes with it (assignments, application credentials, tokens)."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions
from pocketstack.identity import base, endpoint_filter, immutable, tokens
from pocketstack.identity.models import (ApplicationCredential, Assignment, Domain,
                                         DomainConfig, Group, Limit, Project, Role, User)

MAX_PROJECT_DEPTH = 5  # Keystone's [DEFAULT] max_project_tree_depth
PROJECT_COLUMNS = {"id", "name", "domain_id", "parent_id", "description", "enabled", "tags",
                   "options", "is_domain"}


def _forbidden(message: str) -> exceptions.Forbidden:
    return exceptions.Forbidden(message)


# --- domains --------------------------------------------------------------------------

def list_domains(name_filters: dict, enabled: bool | None) -> list[Domain]:
    with db.reader() as s:
        q = base.apply_name_filters(sa.select(Domain), Domain.name, name_filters)
        if enabled is not None:
            q = q.where(Domain.enabled.is_(enabled))
        return list(s.scalars(q.order_by(Domain.name)))


def get_domain(domain_id: str) -> Domain:
    with db.reader() as s:
        return base.get_or_404(s, Domain, domain_id, "domain")


def create_domain(ref: dict) -> Domain:
    domain = Domain(id=ref.get("explicit_domain_id") or base.new_id(), name=ref["name"],
                    description=ref.get("description") or "",
                    enabled=ref.get("enabled", True), tags=ref.get("tags", []), extra={})
    with base.writing("domain", ref["name"]) as s:
        if base.name_taken(s, Domain, ref["name"]):
            raise base.duplicate_name("domain", ref["name"])
        if s.get(Domain, domain.id) is not None:
            raise base.conflict("domain", f"Duplicate ID, {domain.id}")
        s.add(domain)
    return domain


def update_domain(domain_id: str, ref: dict) -> Domain:
    with base.writing("domain", ref.get("name")) as s:
        domain = base.get_or_404(s, Domain, domain_id, "domain")
        if "name" in ref and ref["name"] != domain.name and base.name_taken(
                s, Domain, ref["name"], exclude=domain_id):
            raise base.duplicate_name("domain", ref["name"])
        if ref.get("enabled") is False and domain.enabled:
            if domain_id == config.CONF.identity.default_domain_id:
                raise _forbidden("The default domain cannot be disabled: pocketstack's own "
                                 "service user lives in it.")
            tokens.revoke(s, domain_id=domain_id)
        for key in ("name", "enabled", "tags"):
            if key in ref:
                setattr(domain, key, ref[key])
        if "description" in ref:
            domain.description = ref["description"] or ""
    return domain


def delete_domain(domain_id: str) -> None:
    with db.transaction() as s:
        domain = base.get_or_404(s, Domain, domain_id, "domain")
        if domain.enabled:
            raise _forbidden("Cannot delete a domain that is enabled, please disable it first.")
        project_ids = list(s.scalars(sa.select(Project.id).where(Project.domain_id == domain_id)))
        user_ids = list(s.scalars(sa.select(User.id).where(User.domain_id == domain_id)))
        group_ids = list(s.scalars(sa.select(Group.id).where(Group.domain_id == domain_id)))
        role_ids = list(s.scalars(sa.select(Role.id).where(Role.domain_id == domain_id)))
        targets, actors = project_ids + [domain_id], user_ids + group_ids
        s.execute(sa.delete(Assignment).where(sa.or_(
            Assignment.target_id.in_(targets), Assignment.actor_id.in_(actors),
            Assignment.role_id.in_(role_ids))))
        s.execute(sa.delete(ApplicationCredential).where(
            ApplicationCredential.project_id.in_(project_ids)))
        endpoint_filter.forget_project(s, project_ids)
        s.execute(sa.delete(DomainConfig).where(DomainConfig.domain_id == domain_id))
        for model, ids in ((Project, project_ids), (User, user_ids), (Group, group_ids),
                           (Role, role_ids)):
            if ids:
                s.execute(sa.delete(model).where(model.id.in_(ids)))
        s.delete(domain)
        tokens.revoke(s, domain_id=domain_id)


# --- projects -------------------------------------------------------------------------

def get_project(project_id: str) -> Project:
    with db.reader() as s:
        return base.get_or_404(s, Project, project_id, "project")


def list_projects(*, name_filters: dict, domain_id=None, enabled=None, parent_id=None,
                  is_domain=None, tags_all=(), tags_any=(), not_tags_all=(),
                  not_tags_any=()) -> list[Project]:
    if is_domain:  # Keystone's domains are projects acting as domains
        return [] if parent_id or domain_id else list_domains(name_filters, enabled)
    with db.reader() as s:
        q = base.apply_name_filters(sa.select(Project), Project.name, name_filters)
        if domain_id is not None:
            q = q.where(Project.domain_id == domain_id)
        if enabled is not None:
            q = q.where(Project.enabled.is_(enabled))
        if parent_id is not None:
            # Top-level projects store no parent; Keystone shows the domain as their parent.
            q = q.where(sa.or_(Project.parent_id == parent_id,
                               sa.and_(Project.parent_id.is_(None),
                                       Project.domain_id == parent_id)))
        projects = list(s.scalars(q.order_by(Project.name)))
    if tags_all or tags_any or not_tags_all or not_tags_any:
        projects = [p for p in projects
                    if _tags_match(set(p.tags or []), tags_all, tags_any, not_tags_all,
                                   not_tags_any)]
    return projects


def _tags_match(have: set, all_of, any_of, not_all, not_any) -> bool:
    if all_of and not set(all_of) <= have:
        return False
    if any_of and not set(any_of) & have:
        return False
    if not_all and set(not_all) <= have:
        return False
    if not_any and set(not_any) & have:
        return False
    return True


def domain_of_parent(parent_id: str | None) -> str | None:
    """The domain a new project under ``parent_id`` (a project or a domain) would be in."""
    if not isinstance(parent_id, str):
        return None
    with db.reader() as s:
        parent = s.get(Project, parent_id)
        if parent is not None:
            return parent.domain_id
        return parent_id if s.get(Domain, parent_id) is not None else None


def ancestors(s, project: Project) -> list[Project]:
    out, parent_id = [], project.parent_id
    while parent_id and len(out) <= MAX_PROJECT_DEPTH * 4:
        parent = s.get(Project, parent_id)
        if parent is None:
            break
        out.append(parent)
        parent_id = parent.parent_id
    return out


def subtree_ids(s, project_id: str) -> list[str]:
    """The project's descendants (not the project itself), breadth first; for a domain
    (a project acting as one) every project in it."""
    if s.get(Project, project_id) is None and s.get(Domain, project_id) is not None:
        return list(s.scalars(sa.select(Project.id).where(Project.domain_id == project_id)))
    out, frontier = [], [project_id]
    while frontier:
        children = list(s.scalars(sa.select(Project.id).where(Project.parent_id.in_(frontier))))
        out += children
        frontier = children
    return out


def get_project_or_domain(project_id: str) -> Project | Domain:
    """A project, or a domain seen as the project acting as it (Keystone stores domains
    as projects with is_domain); 404 "Could not find project" when neither exists."""
    with db.reader() as s:
        found = s.get(Project, project_id) or s.get(Domain, project_id)
        if found is None:
            raise exceptions.NotFound(f"Could not find project: {project_id}.")
        return found


def create_project(ref: dict, default_domain_id: str) -> Project | Domain:
    if ref.get("is_domain"):
        # Keystone: a project acting as a domain is a root: no parent, no domain.
        if ref.get("parent_id") or ref.get("domain_id"):
            raise exceptions.ValidationError("only root projects are allowed to act as "
                                             "domains.")
        return create_domain({k: v for k, v in ref.items()
                              if k in ("name", "description", "enabled", "tags")})
    parent_id, domain_id = ref.get("parent_id"), ref.get("domain_id")
    with base.writing("project", ref["name"]) as s:
        parent = None
        if parent_id and parent_id != domain_id:
            parent = s.get(Project, parent_id)
            if parent is None and s.get(Domain, parent_id) is None:
                raise exceptions.ValidationError(
                    f"Cannot create project: parent {parent_id} does not exist.")
            if parent is None:  # the parent named is a domain: a top-level project
                if domain_id and domain_id != parent_id:
                    raise _forbidden("Cannot create project, since its parent "
                                     f"({parent_id}) is in a different domain ({domain_id}).")
                domain_id = parent_id
        if parent is not None:
            if domain_id and domain_id != parent.domain_id:
                raise _forbidden(f"Cannot create project, since its parent ({parent.id}) "
                                 f"is in a different domain ({parent.domain_id}).")
            domain_id = parent.domain_id
            chain = [parent] + ancestors(s, parent)
            if len(chain) + 1 > MAX_PROJECT_DEPTH:
                raise _forbidden(f"Max hierarchy depth reached for {parent.id} branch.")
            if ref.get("enabled", True) and not all(p.enabled for p in chain):
                raise _forbidden("Cannot create project, since it specifies its parent as "
                                 "a disabled project.")
        domain_id = domain_id or default_domain_id
        domain = s.get(Domain, domain_id)
        if domain is None:
            raise exceptions.NotFound(f"Could not find domain: {domain_id}.")
        if base.name_taken(s, Project, ref["name"], domain_id):
            raise base.conflict("project", "it is not permitted to have two projects with "
                                f"the same name in the same domain : {ref['name']}")
        project = Project(id=base.new_id(), name=ref["name"], domain_id=domain_id,
                          parent_id=parent.id if parent else None,
                          description=ref.get("description") or "",
                          enabled=ref.get("enabled", True), tags=ref.get("tags", []),
                          extra=base.extra_attributes(ref, PROJECT_COLUMNS))
        immutable.set_options(project, ref)
        s.add(project)
    return project


def update_project(project_id: str, ref: dict) -> Project:
    with base.writing("project", ref.get("name")) as s:
        project = base.get_or_404(s, Project, project_id, "project")
        immutable.check_update(project, ref)
        for key in ("domain_id", "parent_id"):
            if key in ref and ref[key] != getattr(project, key) and not (
                    key == "parent_id" and ref[key] == project.domain_id
                    and project.parent_id is None):
                raise exceptions.ValidationError(f"Update of `{key}` is not allowed.")
        if ref.get("is_domain"):
            raise exceptions.ValidationError("Update of `is_domain` is not allowed.")
        if "name" in ref and ref["name"] != project.name and base.name_taken(
                s, Project, ref["name"], project.domain_id, exclude=project.id):
            raise base.conflict("project", "it is not permitted to have two projects with "
                                f"the same name in the same domain : {ref['name']}")
        if "enabled" in ref and ref["enabled"] != project.enabled:
            if ref["enabled"] is False:
                if s.scalar(sa.select(Project.id).where(Project.parent_id == project_id,
                                                         Project.enabled.is_(True))):
                    raise _forbidden(f"Cannot disable project {project_id} since its subtree "
                                     "contains enabled projects.")
                tokens.revoke(s, project_id=project_id)
            elif not all(p.enabled for p in ancestors(s, project)):
                raise _forbidden(f"Cannot enable project {project_id} since it has disabled "
                                 "parents.")
        for key in ("name", "enabled", "tags"):
            if key in ref:
                setattr(project, key, ref[key])
        if "description" in ref:
            project.description = ref["description"] or ""
        extra = base.extra_attributes(ref, PROJECT_COLUMNS)
        if extra:
            project.extra = dict(project.extra or {}, **extra)
        immutable.set_options(project, ref)
    return project


def delete_project(project_id: str, cascade: bool = False) -> None:
    with db.transaction() as s:
        project = base.get_or_404(s, Project, project_id, "project")
        descendants = subtree_ids(s, project_id)
        if descendants and not cascade:
            raise _forbidden(f"Cannot delete the project {project_id} since it is not a leaf "
                             "in the hierarchy. Use the cascade option if you want to delete "
                             "a whole subtree.")
        ids = descendants + [project.id]
        immutable.check_delete([project, *(s.get(Project, i) for i in descendants)])
        s.execute(sa.delete(Assignment).where(Assignment.target_id.in_(ids)))
        s.execute(sa.delete(ApplicationCredential).where(
            ApplicationCredential.project_id.in_(ids)))
        s.execute(sa.delete(Limit).where(Limit.project_id.in_(ids)))
        endpoint_filter.forget_project(s, ids)
        for pid in reversed(ids):
            tokens.revoke(s, project_id=pid)
            s.execute(sa.delete(Project).where(Project.id == pid))


# --- project tags ---------------------------------------------------------------------

def set_tags(project_id: str, tags: list[str]) -> list[str]:
    with db.transaction() as s:
        project = base.get_or_404(s, Project, project_id, "project")
        immutable.check_update(project, {"tags": tags})
        project.tags = list(tags)
        return list(project.tags)


def add_tag(project_id: str, tag: str) -> list[str]:
    with db.transaction() as s:
        project = base.get_or_404(s, Project, project_id, "project")
        immutable.check_update(project, {"tags": tag})
        current = list(project.tags or [])
        if tag not in current:
            if len(current) >= 80:
                raise exceptions.ValidationError("A project cannot have more than 80 tags.")
            project.tags = current + [tag]
        return list(project.tags)


def remove_tag(project_id: str, tag: str) -> None:
    with db.transaction() as s:
        project = base.get_or_404(s, Project, project_id, "project")
        immutable.check_update(project, {"tags": tag})
        current = list(project.tags or [])
        if tag not in current:
            raise exceptions.NotFound(f"Could not find project tag: {tag}.")
        project.tags = [t for t in current if t != tag]
