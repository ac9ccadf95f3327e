"""Roles, implied roles, grants and the role-assignment queries (Keystone's "assignment").

An assignment row grants a role to an actor (user or group) on a target (project or
domain), optionally inherited to the projects below the target (OS-INHERIT). Effective
roles expand groups, inheritance and implied roles. Revoking anything that changes a
token's roles records revocation events for the users affected.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.identity import base, immutable, resource, tokens
from pocketstack.identity.models import (Assignment, Domain, Group, GroupMembership,
                                         ImpliedRole, Project, Role, User)

ROLE_COLUMNS = {"id", "name", "domain_id", "description", "options"}
PROHIBITED_IMPLIED = ("admin",)  # Keystone's [assignment] prohibited_implied_role


# --- roles ------------------------------------------------------------------------------

def list_roles(*, name_filters: dict, domain_id: str | None = None) -> list[Role]:
    """Global roles, or with ``domain_id`` that domain's roles (as Keystone)."""
    with db.reader() as s:
        q = base.apply_name_filters(sa.select(Role), Role.name, name_filters)
        q = q.where(Role.domain_id == domain_id if domain_id else Role.domain_id.is_(None))
        return list(s.scalars(q.order_by(Role.name)))


def get_role(role_id: str) -> Role:
    with db.reader() as s:
        return base.get_or_404(s, Role, role_id, "role")


def _name_taken(s, name: str, domain_id: str | None, exclude: str | None = None) -> bool:
    q = sa.select(Role.id).where(Role.name == name, Role.domain_id == domain_id
                                 if domain_id else Role.domain_id.is_(None))
    if exclude:
        q = q.where(Role.id != exclude)
    return s.scalar(q) is not None


def create_role(ref: dict) -> Role:
    domain_id = ref.get("domain_id")
    role = Role(id=base.new_id(), name=ref["name"], domain_id=domain_id,
                description=ref.get("description") or "",
                extra=base.extra_attributes(ref, ROLE_COLUMNS))
    with base.writing("role", ref["name"], domain_id) as s:
        if domain_id and s.get(Domain, domain_id) is None:
            raise exceptions.ValidationError(f"Could not find domain: {domain_id}.")
        if _name_taken(s, ref["name"], domain_id):
            raise base.duplicate_name("role", ref["name"], domain_id)
        s.add(role)
    return role


def update_role(role_id: str, ref: dict) -> Role:
    with base.writing("role", ref.get("name")) as s:
        role = base.get_or_404(s, Role, role_id, "role")
        if "domain_id" in ref and ref["domain_id"] != role.domain_id:
            raise exceptions.ValidationError("Update of `domain_id` is not allowed.")
        if "name" in ref and _name_taken(s, ref["name"], role.domain_id, exclude=role_id):
            raise base.duplicate_name("role", ref["name"], role.domain_id)
        renamed = "name" in ref and ref["name"] != role.name
        if "name" in ref:
            role.name = ref["name"]
        if "description" in ref:
            role.description = ref["description"] or ""
        extra = base.extra_attributes(ref, ROLE_COLUMNS)
        if extra:
            role.extra = dict(role.extra or {}, **extra)
        if renamed:  # tokens carry role names
            _revoke_holders(s, {role_id})
    return role


def delete_role(role_id: str) -> None:
    with db.transaction() as s:
        role = base.get_or_404(s, Role, role_id, "role")
        _revoke_holders(s, {role_id})
        s.execute(sa.delete(Assignment).where(Assignment.role_id == role_id))
        s.execute(sa.delete(ImpliedRole).where(sa.or_(ImpliedRole.prior_role_id == role_id,
                                                      ImpliedRole.implied_role_id == role_id)))
        s.delete(role)


def _revoke_holders(s, role_ids: set[str]) -> None:
    """Revoke the tokens of every user holding one of these roles (or a role implying one)."""
    priors = set(role_ids)
    rules = _implication_rules(s)
    changed = True
    while changed:  # walk the implication graph backwards
        changed = False
        for prior, implied in rules.items():
            if prior not in priors and priors & set(implied):
                priors.add(prior)
                changed = True
    actors = set(s.scalars(sa.select(Assignment.actor_id).where(Assignment.role_id.in_(priors))))
    for user_id in _users_of_actors(s, actors):
        tokens.revoke(s, user_id=user_id)


def _users_of_actors(s, actor_ids: set[str]) -> set[str]:
    if not actor_ids:
        return set()
    users = set(s.scalars(sa.select(User.id).where(User.id.in_(actor_ids))))
    users |= set(s.scalars(sa.select(GroupMembership.user_id).where(
        GroupMembership.group_id.in_(actor_ids))))
    return users


# --- implied roles ----------------------------------------------------------------------

def _implication_rules(s) -> dict[str, list[str]]:
    rules: dict[str, list[str]] = {}
    for prior, implied in s.execute(sa.select(ImpliedRole.prior_role_id,
                                              ImpliedRole.implied_role_id)):
        rules.setdefault(prior, []).append(implied)
    return rules


def expand_implied(s, role_ids: set[str], rules: dict | None = None) -> set[str]:
    if not role_ids:
        return set()
    rules = _implication_rules(s) if rules is None else rules
    result, todo = set(role_ids), list(role_ids)
    while todo:
        for implied in rules.get(todo.pop(), ()):
            if implied not in result:
                result.add(implied)
                todo.append(implied)
    return result


def get_implied_role(prior_id: str, implied_id: str) -> tuple[Role, Role]:
    with db.reader() as s:
        prior = base.get_or_404(s, Role, prior_id, "role")
        implied = base.get_or_404(s, Role, implied_id, "role")
        if s.get(ImpliedRole, (prior_id, implied_id)) is None:
            raise exceptions.NotFound(f"{prior_id} does not imply {implied_id}.")
        return prior, implied


def create_implied_role(prior_id: str, implied_id: str) -> tuple[Role, Role]:
    with db.transaction() as s:
        prior = base.get_or_404(s, Role, prior_id, "role")
        implied = base.get_or_404(s, Role, implied_id, "role")
        if implied.name in PROHIBITED_IMPLIED:
            raise exceptions.Forbidden(f"{implied_id} cannot be an implied roles.")
        if implied.domain_id and implied.domain_id != prior.domain_id:
            raise exceptions.Forbidden(f"{implied_id} cannot be an implied roles.")
        if prior_id == implied_id or prior_id in expand_implied(s, {implied_id}):
            raise exceptions.Forbidden(
                f"{implied_id} cannot be an implied roles: it would create a cycle.")
        if s.get(ImpliedRole, (prior_id, implied_id)) is None:
            s.add(ImpliedRole(prior_role_id=prior_id, implied_role_id=implied_id))
            _revoke_holders(s, {prior_id})
        return prior, implied


def delete_implied_role(prior_id: str, implied_id: str) -> None:
    with db.transaction() as s:
        base.get_or_404(s, Role, prior_id, "role")
        base.get_or_404(s, Role, implied_id, "role")
        rule = s.get(ImpliedRole, (prior_id, implied_id))
        if rule is None:
            raise exceptions.NotFound(f"{prior_id} does not imply {implied_id}.")
        _revoke_holders(s, {prior_id})
        s.delete(rule)


def list_implied_roles(prior_id: str) -> tuple[Role, list[Role]]:
    with db.reader() as s:
        prior = base.get_or_404(s, Role, prior_id, "role")
        implied = list(s.scalars(sa.select(Role).join(
            ImpliedRole, ImpliedRole.implied_role_id == Role.id).where(
            ImpliedRole.prior_role_id == prior_id).order_by(Role.name)))
        return prior, implied


def list_role_inferences() -> list[tuple[Role, list[Role]]]:
    with db.reader() as s:
        roles = {r.id: r for r in s.scalars(sa.select(Role))}
        rules = _implication_rules(s)
        return [(roles[p], sorted((roles[i] for i in implied), key=lambda r: r.name))
                for p, implied in sorted(rules.items(), key=lambda kv: roles[kv[0]].name)]


# --- grants -----------------------------------------------------------------------------

# System grants (Keystone's system_assignment) are rows of the same table, with this
# target id: roles on the whole deployment rather than on a project or domain.
SYSTEM = "system"


def grant_type(actor: str, target: str) -> str:
    return {"user": "User", "group": "Group"}[actor] + {
        "project": "Project", "domain": "Domain", "system": "System"}[target]


def load_grant_objects(s, actor: str, actor_id: str, target: str, target_id: str,
                       role_id: str | None = None):
    """The actor, target and role a grant URL names; 404 for any that does not exist
    (the system always exists: its target object is None)."""
    actor_obj = base.get_or_404(s, User if actor == "user" else Group, actor_id, actor)
    target_obj = None if target == "system" else base.get_or_404(
        s, Project if target == "project" else Domain, target_id, target)
    role = base.get_or_404(s, Role, role_id, "role") if role_id is not None else None
    return actor_obj, target_obj, role


def create_grant(actor: str, actor_id: str, target: str, target_id: str, role_id: str,
                 inherited: bool = False) -> None:
    with db.transaction() as s:
        _, target_obj, role = load_grant_objects(s, actor, actor_id, target, target_id,
                                                 role_id)
        if role.domain_id and target == "system":
            raise exceptions.ValidationError(
                f"Role {role_id} is a domain-specific role. Unable to use a domain-specific "
                "role in a system assignment.")
        # Keystone checks only project grants: a domain-specific role may be granted on
        # any domain (user, group, inherited), but on a project only of the role's domain.
        if role.domain_id and target == "project":
            if target_obj.domain_id != role.domain_id:
                raise exceptions.Forbidden(f"Project {target_id} must be in the same domain "
                                           f"as the role {role_id} being assigned.")
        key = (grant_type(actor, target), actor_id, target_id, role_id, inherited)
        if s.get(Assignment, key) is None:
            s.add(Assignment(type=key[0], actor_id=actor_id, target_id=target_id,
                             role_id=role_id, inherited=inherited))


def check_grant(actor: str, actor_id: str, target: str, target_id: str, role_id: str,
                inherited: bool = False) -> None:
    with db.reader() as s:
        load_grant_objects(s, actor, actor_id, target, target_id, role_id)
        key = (grant_type(actor, target), actor_id, target_id, role_id, inherited)
        if s.get(Assignment, key) is None:
            raise _assignment_not_found(role_id, actor_id, target_id)


def _assignment_not_found(role_id, actor_id, target_id) -> exceptions.NotFound:
    return exceptions.NotFound(f"Could not find role assignment with role: {role_id}, user "
                               f"or group: {actor_id}, project, domain, or system: "
                               f"{target_id}.")


def revoke_grant(actor: str, actor_id: str, target: str, target_id: str, role_id: str,
                 inherited: bool = False) -> None:
    with db.transaction() as s:
        load_grant_objects(s, actor, actor_id, target, target_id, role_id)
        key = (grant_type(actor, target), actor_id, target_id, role_id, inherited)
        row = s.get(Assignment, key)
        if row is None:
            raise _assignment_not_found(role_id, actor_id, target_id)
        if actor == "user" and target == "project" and not inherited:
            immutable.guard_revoke(s, actor_id, target_id, role_id)
        s.delete(row)
        users = [actor_id] if actor == "user" else _users_of_actors(s, {actor_id})
        for user_id in users:
            if target == "project" and not inherited:
                tokens.revoke(s, user_id=user_id, project_id=target_id)
            else:  # domain grants and inherited ones reach many projects
                tokens.revoke(s, user_id=user_id)


def list_grants(actor: str, actor_id: str, target: str, target_id: str,
                inherited: bool = False) -> list[Role]:
    with db.reader() as s:
        load_grant_objects(s, actor, actor_id, target, target_id)
        return list(s.scalars(sa.select(Role).join(Assignment, Assignment.role_id == Role.id)
                              .where(Assignment.type == grant_type(actor, target),
                                     Assignment.actor_id == actor_id,
                                     Assignment.target_id == target_id,
                                     Assignment.inherited.is_(inherited))
                              .order_by(Role.name)))


# --- effective roles (token issue) --------------------------------------------------------

def group_ids_of(s, user_id: str) -> list[str]:
    return list(s.scalars(sa.select(GroupMembership.group_id)
                          .where(GroupMembership.user_id == user_id)))


def effective_role_ids(s, user_id: str, *, project_id: str | None = None,
                       domain_id: str | None = None, system: bool = False) -> set[str]:
    """Direct, group and inherited grants on the target (a project, a domain or the
    system), with implied roles expanded."""
    actors = [user_id] + group_ids_of(s, user_id)
    if project_id:
        project = s.get(Project, project_id)
        if project is None:
            return set()
        inherited_from = [p.id for p in resource.ancestors(s, project)] + [project.domain_id]
        cond = sa.or_(
            sa.and_(Assignment.target_id == project_id, Assignment.inherited.is_(False),
                    Assignment.type.in_(("UserProject", "GroupProject"))),
            sa.and_(Assignment.target_id.in_(inherited_from), Assignment.inherited.is_(True)))
    elif domain_id:
        cond = sa.and_(Assignment.target_id == domain_id, Assignment.inherited.is_(False),
                       Assignment.type.in_(("UserDomain", "GroupDomain")))
    elif system:
        cond = sa.and_(Assignment.target_id == SYSTEM,
                       Assignment.type.in_(("UserSystem", "GroupSystem")))
    else:
        return set()
    direct = set(s.scalars(sa.select(Assignment.role_id)
                           .where(Assignment.actor_id.in_(actors), cond)))
    return global_only(s, expand_implied(s, direct))


def global_only(s, role_ids: set[str]) -> set[str]:
    """Keystone's _strip_domain_roles: a domain-specific role only implies other roles and
    never reaches a token (its name could shadow a global role's, e.g. "admin")."""
    if not role_ids:
        return role_ids
    return set(s.scalars(sa.select(Role.id).where(Role.id.in_(role_ids),
                                                  Role.domain_id.is_(None))))


def projects_for_user(s, user_id: str) -> list[Project]:
    """Projects on which the user has any role: direct, through groups or inherited."""
    actors = [user_id] + group_ids_of(s, user_id)
    rows = s.execute(sa.select(Assignment.type, Assignment.target_id, Assignment.inherited)
                     .where(Assignment.actor_id.in_(actors))).all()
    ids: set[str] = set()
    for type_, target_id, inherited in rows:
        if type_.endswith("System"):
            continue
        if type_.endswith("Project") and not inherited:
            ids.add(target_id)
        elif type_.endswith("Project"):
            ids.update(resource.subtree_ids(s, target_id))
        elif inherited:  # inherited from a domain: every project in it
            ids.update(s.scalars(sa.select(Project.id).where(Project.domain_id == target_id)))
    if not ids:
        return []
    return list(s.scalars(sa.select(Project).where(Project.id.in_(ids)).order_by(Project.name)))


def domains_for_user(s, user_id: str) -> list[Domain]:
    actors = [user_id] + group_ids_of(s, user_id)
    ids = set(s.scalars(sa.select(Assignment.target_id).where(
        Assignment.actor_id.in_(actors), Assignment.inherited.is_(False),
        Assignment.type.in_(("UserDomain", "GroupDomain")))))
    if not ids:
        return []
    return list(s.scalars(sa.select(Domain).where(Domain.id.in_(ids)).order_by(Domain.name)))
