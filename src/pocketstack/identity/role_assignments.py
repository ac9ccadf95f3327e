"""GET /v3/role_assignments: the stored grants, or with ``effective`` what they amount to —
groups replaced by their members, inherited grants by the projects they reach, and
implied roles added — in Keystone's shape, with links back to the grant that caused each.
"""
from __future__ import annotations

import dataclasses

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.identity import assignment, resource
from pocketstack.identity.models import (Assignment, Domain, Group, GroupMembership, Project,
                                         Role, User)


@dataclasses.dataclass(frozen=True)
class Entry:
    actor: str            # "user" or "group"
    actor_id: str
    target: str           # "project", "domain" or "system"
    target_id: str
    role_id: str
    inherited: bool = False
    # Where an effective entry came from: the grant's actor/target and role, the group.
    grant_actor: str = ""
    grant_actor_id: str = ""
    grant_target: str = ""
    grant_target_id: str = ""
    prior_role_id: str = ""
    via_group: str = ""


def _entry(row: Assignment) -> Entry:
    actor = "user" if row.type.startswith("User") else "group"
    target = next(t for t in ("project", "domain", "system") if row.type.endswith(t.title()))
    return Entry(actor, row.actor_id, target, row.target_id, row.role_id, row.inherited,
                 actor, row.actor_id, target, row.target_id)


def list_assignments(*, user_id=None, group_id=None, role_id=None, project_id=None,
                     domain_id=None, system=False, inherited=None, effective=False,
                     include_subtree=False, include_names=False,
                     base_url: str = "") -> list[dict]:
    if user_id and group_id:
        raise exceptions.ValidationError("Specify a user or group, not both")
    if sum(map(bool, (project_id, domain_id, system))) > 1:
        raise exceptions.ValidationError("Specify one of domain, project or system")
    if include_subtree and not project_id:
        raise exceptions.ValidationError(
            "scope.project.id must be specified if include_subtree is also specified")
    if effective and group_id:
        raise exceptions.ValidationError(
            "Combining effective and group filter will always result in an empty list.")
    if effective and inherited and domain_id:
        raise exceptions.ValidationError(
            "Combining effective, domain and inherited filters will always result in an "
            "empty list.")
    with db.reader() as s:
        projects = None
        if project_id:
            projects = {project_id}
            if include_subtree:
                projects.update(resource.subtree_ids(s, project_id))
        if effective:
            entries = _effective(s, user_id, projects)
        else:
            entries = _stored(s, user_id, group_id, projects, domain_id, system, inherited)
        entries = [e for e in entries
                   if (not role_id or e.role_id == role_id)
                   and (not user_id or (e.actor == "user" and e.actor_id == user_id))
                   and (not group_id or (e.actor == "group" and e.actor_id == group_id))
                   and (projects is None or (e.target == "project"
                                             and e.target_id in projects))
                   and (not domain_id or (e.target == "domain" and e.target_id == domain_id))
                   and (not system or e.target == "system")]
        names = _Names(s) if include_names else None
        return [_render(e, names, base_url) for e in entries]


def _stored(s, user_id, group_id, projects, domain_id, system, inherited) -> list[Entry]:
    q = sa.select(Assignment)
    if user_id:
        q = q.where(Assignment.actor_id == user_id)
    if group_id:
        q = q.where(Assignment.actor_id == group_id)
    if projects is not None:
        q = q.where(Assignment.target_id.in_(projects))
    if domain_id:
        q = q.where(Assignment.target_id == domain_id)
    if system:
        q = q.where(Assignment.type.in_(("UserSystem", "GroupSystem")))
    if inherited is not None:
        q = q.where(Assignment.inherited.is_(inherited))
    return [_entry(row) for row in s.scalars(q.order_by(Assignment.type, Assignment.target_id,
                                                        Assignment.actor_id))]


def _effective(s, user_id, projects) -> list[Entry]:
    q = sa.select(Assignment)
    if user_id:
        q = q.where(Assignment.actor_id.in_([user_id] + assignment.group_ids_of(s, user_id)))
    rows = list(s.scalars(q.order_by(Assignment.type, Assignment.target_id)))
    members: dict[str, list[str]] = {}
    group_ids = {r.actor_id for r in rows if r.type.startswith("Group")}
    if group_ids:
        for gid, uid in s.execute(sa.select(GroupMembership.group_id, GroupMembership.user_id)
                                  .where(GroupMembership.group_id.in_(group_ids))):
            members.setdefault(gid, []).append(uid)
    rules = assignment._implication_rules(s)
    # Keystone strips domain-specific roles from effective lists: they only imply.
    domain_roles = set(s.scalars(sa.select(Role.id).where(Role.domain_id.is_not(None))))
    out = []
    for row in rows:
        grant = _entry(row)
        users = ([(row.actor_id, "")] if grant.actor == "user"
                 else [(uid, row.actor_id) for uid in members.get(row.actor_id, [])])
        if not row.inherited:
            targets = [(grant.target, row.target_id)]
        elif grant.target == "project":
            targets = [("project", pid) for pid in resource.subtree_ids(s, row.target_id)]
        else:
            targets = [("project", pid) for pid in s.scalars(
                sa.select(Project.id).where(Project.domain_id == row.target_id))]
        if projects is not None:
            targets = [t for t in targets if t[0] == "project" and t[1] in projects]
        roles = [(row.role_id, "")] + [
            (rid, row.role_id) for rid in
            sorted(assignment.expand_implied(s, {row.role_id}, rules) - {row.role_id})]
        roles = [(rid, prior) for rid, prior in roles if rid not in domain_roles]
        for uid, via_group in users:
            if user_id and uid != user_id:
                continue
            for target, target_id in targets:
                for rid, prior in roles:
                    # As Keystone, a role reached twice (say directly and through a group)
                    # is listed twice: each entry links to the grant behind it.
                    out.append(Entry("user", uid, target, target_id, rid, False,
                                     grant.actor, grant.actor_id, grant.target,
                                     grant.target_id, prior, via_group))
    return out


class _Names:
    """Caches the names include_names adds, one query per object."""

    def __init__(self, s):
        self.s, self.cache = s, {}

    def get(self, model, object_id):
        key = (model, object_id)
        if key not in self.cache:
            self.cache[key] = self.s.get(model, object_id)
        return self.cache[key]

    def domain(self, domain_id) -> dict:
        d = self.get(Domain, domain_id)
        return {"id": domain_id, "name": d.name if d else None}

    def ref(self, kind: str, object_id: str) -> dict:
        model = {"user": User, "group": Group, "project": Project, "domain": Domain,
                 "role": Role}[kind]
        obj = self.get(model, object_id)
        out = {"id": object_id, "name": obj.name if obj else None}
        if kind in ("user", "group", "project") and obj is not None:
            out["domain"] = self.domain(obj.domain_id)
        if kind == "role" and obj is not None and obj.domain_id:
            out["domain"] = self.domain(obj.domain_id)
        return out


def _render(e: Entry, names: _Names | None, base_url: str) -> dict:
    def ref(kind, object_id):
        return names.ref(kind, object_id) if names else {"id": object_id}

    scope = ({"system": {"all": True}} if e.target == "system"
             else {e.target: ref(e.target, e.target_id)})
    if e.inherited:
        scope["OS-INHERIT:inherited_to"] = "projects"
    grant_actor = e.grant_actor or e.actor
    if e.target == "system":
        grant = (f"system/{grant_actor}s/{e.grant_actor_id or e.actor_id}/roles/"
                 f"{e.prior_role_id or e.role_id}")
    else:
        grant = (f"{e.grant_target or e.target}s/{e.grant_target_id or e.target_id}/"
                 f"{grant_actor}s/{e.grant_actor_id or e.actor_id}/roles/"
                 f"{e.prior_role_id or e.role_id}")
    grant_inherited = e.inherited or (e.grant_target_id and (
        e.grant_target != e.target or e.grant_target_id != e.target_id))
    if grant_inherited:
        link = f"{base_url}/v3/OS-INHERIT/{grant}/inherited_to_projects"
    else:
        link = f"{base_url}/v3/{grant}"
    links = {"assignment": link}
    if e.via_group:
        links["membership"] = f"{base_url}/v3/groups/{e.via_group}/users/{e.actor_id}"
    if e.prior_role_id:
        links["prior_role"] = f"{base_url}/v3/roles/{e.prior_role_id}/implies/{e.role_id}"
    return {"role": ref("role", e.role_id), e.actor: ref(e.actor, e.actor_id),
            "scope": scope, "links": links}
