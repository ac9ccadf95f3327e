"""GET /v3/projects/{id}?parents_as_list|parents_as_ids|subtree_as_list|subtree_as_ids:
a project's place in the hierarchy, as Keystone's _expand_project_ref shows it.

The ``*_as_ids`` forms are nested dicts ({parent: {grandparent: None}}) of every project,
the domain (the project acting as it) included at the top; the ``*_as_list`` forms hold
only the projects the caller has a role on, each wrapped as {"project": {...}}.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.identity import assignment, resource
from pocketstack.identity.models import Project
from pocketstack.identity.rest import common, views


def expand(req, project) -> dict:
    """The extra keys the query asks for (none without a hierarchy flag)."""
    wants = {name: common.flag(req, name) for name in
             ("parents_as_list", "parents_as_ids", "subtree_as_list", "subtree_as_ids")}
    for kind in ("parents", "subtree"):
        if wants[f"{kind}_as_list"] and wants[f"{kind}_as_ids"]:
            raise exceptions.ValidationError(
                f"Cannot use {kind}_as_list and {kind}_as_ids query params at the same "
                "time.")
    if not any(wants.values()):
        return {}
    out = {}
    with db.reader() as s:
        mine = None
        if wants["parents_as_list"] or wants["subtree_as_list"]:
            mine = {p.id for p in assignment.projects_for_user(s, req.context.user_id)}
        chain = _parents(s, project)
        if wants["parents_as_list"]:
            out["parents"] = [{"project": views.project(req, p)} for p in chain
                              if p.id in mine]
        elif wants["parents_as_ids"]:
            out["parents"] = _nest_up([p.id for p in chain])
        if wants["subtree_as_list"] or wants["subtree_as_ids"]:
            subtree = _subtree(s, project)
            if wants["subtree_as_list"]:
                out["subtree"] = [{"project": views.project(req, p)} for p in subtree
                                  if p.id in mine]
            else:
                out["subtree"] = _nest_down(project.id, subtree)
    return out


def _parents(s, project) -> list:
    """Nearest first, ending with the domain (a domain itself has no parents)."""
    if not hasattr(project, "parent_id"):
        return []
    chain = resource.ancestors(s, s.get(Project, project.id))
    return chain + [resource.get_domain(project.domain_id)]


def _subtree(s, project) -> list[Project]:
    ids = resource.subtree_ids(s, project.id)
    if not ids:
        return []
    rows = {p.id: p for p in s.scalars(sa.select(Project).where(Project.id.in_(ids)))}
    return [rows[i] for i in ids if i in rows]


def _nest_up(ids: list[str]) -> dict | None:
    nested = None
    for project_id in reversed(ids):
        nested = {project_id: nested}
    return nested


def _nest_down(root_id: str, subtree: list[Project]) -> dict | None:
    children: dict[str, list[str]] = {}
    for p in subtree:  # top-level projects store no parent: their parent is the domain
        children.setdefault(p.parent_id or p.domain_id, []).append(p.id)

    def below(project_id):
        kids = children.get(project_id)
        return {kid: below(kid) for kid in kids} if kids else None
    return below(root_id)
