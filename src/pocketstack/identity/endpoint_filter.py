"""OS-EP-FILTER: endpoints associated with projects, one by one or through endpoint groups
(the endpoints whose service_id / region_id / interface equal a group's filters).

As in Keystone's default (sql) catalog driver the associations are kept and listed; they
do not narrow the catalog in tokens.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.identity import base
from pocketstack.identity.models import (Endpoint, EndpointGroup, Project, ProjectEndpoint,
                                         ProjectEndpointGroup)

FILTER_KEYS = ("service_id", "region_id", "interface")


def _project(s, project_id: str) -> Project:
    return base.get_or_404(s, Project, project_id, "project")


def _group(s, group_id: str) -> EndpointGroup:
    return base.get_or_404(s, EndpointGroup, group_id, "endpoint group")


def check_filters(filters, *, create: bool = False) -> None:
    """Keystone's _require_valid_filter: only the three endpoint attributes; and on create
    (only there: an update may empty them, then the group holds every endpoint) some."""
    if create and not filters:
        raise exceptions.ValidationError("filters field is required and cannot be empty")
    if any(key not in FILTER_KEYS for key in filters):
        raise exceptions.ValidationError(
            "Expecting to find service_id or region_id or interface in endpoint_group. The "
            "server could not comply with the request since it is either malformed or "
            "otherwise incorrect. The client is assumed to be in error.")


# --- project <-> endpoint ----------------------------------------------------------------

def add_endpoint(project_id: str, endpoint_id: str) -> None:
    with base.writing("project_endpoint") as s:
        base.get_or_404(s, Endpoint, endpoint_id, "endpoint")
        _project(s, project_id)
        if s.get(ProjectEndpoint, (endpoint_id, project_id)) is not None:
            raise base.conflict("project_endpoint", "Duplicate entry")
        s.add(ProjectEndpoint(endpoint_id=endpoint_id, project_id=project_id))


def check_endpoint(project_id: str, endpoint_id: str) -> None:
    with db.reader() as s:
        base.get_or_404(s, Endpoint, endpoint_id, "endpoint")
        _project(s, project_id)
        if s.get(ProjectEndpoint, (endpoint_id, project_id)) is None:
            raise _association_not_found(endpoint_id, project_id)


def _association_not_found(endpoint_id, project_id) -> exceptions.NotFound:
    return exceptions.NotFound(f"Endpoint {endpoint_id} not found in project {project_id}")


def remove_endpoint(project_id: str, endpoint_id: str) -> None:
    with db.transaction() as s:
        row = s.get(ProjectEndpoint, (endpoint_id, project_id))
        if row is None:
            raise _association_not_found(endpoint_id, project_id)
        s.delete(row)


def projects_for_endpoint(endpoint_id: str) -> list[Project]:
    with db.reader() as s:
        base.get_or_404(s, Endpoint, endpoint_id, "endpoint")
        return list(s.scalars(sa.select(Project).join(
            ProjectEndpoint, ProjectEndpoint.project_id == Project.id).where(
            ProjectEndpoint.endpoint_id == endpoint_id).order_by(Project.name)))


def endpoints_for_project(project_id: str) -> list[Endpoint]:
    """Associated one by one, then through the project's endpoint groups."""
    with db.reader() as s:
        _project(s, project_id)
        found = {e.id: e for e in s.scalars(sa.select(Endpoint).join(
            ProjectEndpoint, ProjectEndpoint.endpoint_id == Endpoint.id).where(
            ProjectEndpoint.project_id == project_id))}
        for group in _groups_of(s, project_id):
            for endpoint in _matching(s, group.filters):
                found.setdefault(endpoint.id, endpoint)
        return list(found.values())


def _matching(s, filters: dict) -> list[Endpoint]:
    q = sa.select(Endpoint)
    for key, value in (filters or {}).items():
        q = q.where(getattr(Endpoint, key) == value)
    return list(s.scalars(q.order_by(Endpoint.id)))


# --- endpoint groups -----------------------------------------------------------------------

def create_group(ref: dict) -> EndpointGroup:
    check_filters(ref.get("filters"), create=True)
    group = EndpointGroup(id=base.new_id(), name=ref["name"],
                          description=ref.get("description"), filters=ref["filters"])
    with db.transaction() as s:
        s.add(group)
    return group


def list_groups(name_filters: dict) -> list[EndpointGroup]:
    with db.reader() as s:
        q = base.apply_name_filters(sa.select(EndpointGroup), EndpointGroup.name, name_filters)
        return list(s.scalars(q.order_by(EndpointGroup.name)))


def get_group(group_id: str) -> EndpointGroup:
    with db.reader() as s:
        return _group(s, group_id)


def update_group(group_id: str, ref: dict) -> EndpointGroup:
    if "filters" in ref:
        check_filters(ref["filters"])
    with db.transaction() as s:
        group = _group(s, group_id)
        for key in ("name", "description", "filters"):
            if key in ref:
                setattr(group, key, ref[key])
    return group


def delete_group(group_id: str) -> None:
    with db.transaction() as s:
        group = _group(s, group_id)
        s.execute(sa.delete(ProjectEndpointGroup).where(
            ProjectEndpointGroup.endpoint_group_id == group_id))
        s.delete(group)


def endpoints_of_group(group_id: str) -> list[Endpoint]:
    with db.reader() as s:
        return _matching(s, _group(s, group_id).filters)


def _groups_of(s, project_id: str) -> list[EndpointGroup]:
    return list(s.scalars(sa.select(EndpointGroup).join(
        ProjectEndpointGroup, ProjectEndpointGroup.endpoint_group_id == EndpointGroup.id)
        .where(ProjectEndpointGroup.project_id == project_id).order_by(EndpointGroup.name)))


def groups_for_project(project_id: str) -> list[EndpointGroup]:
    with db.reader() as s:
        _project(s, project_id)
        return _groups_of(s, project_id)


def projects_of_group(group_id: str) -> list[Project]:
    with db.reader() as s:
        _group(s, group_id)
        return list(s.scalars(sa.select(Project).join(
            ProjectEndpointGroup, ProjectEndpointGroup.project_id == Project.id).where(
            ProjectEndpointGroup.endpoint_group_id == group_id).order_by(Project.name)))


def _group_association(s, group_id: str, project_id: str, *, must_exist: bool):
    _project(s, project_id)
    _group(s, group_id)
    row = s.get(ProjectEndpointGroup, (group_id, project_id))
    if row is None and must_exist:
        raise exceptions.NotFound(f"Could not find endpoint group: {group_id}.")
    return row


def add_group_to_project(group_id: str, project_id: str) -> None:
    with base.writing("project_endpoint_group") as s:
        if _group_association(s, group_id, project_id, must_exist=False) is not None:
            raise base.conflict("project_endpoint_group", "Duplicate entry")
        s.add(ProjectEndpointGroup(endpoint_group_id=group_id, project_id=project_id))


def check_group_in_project(group_id: str, project_id: str) -> None:
    with db.reader() as s:
        _group_association(s, group_id, project_id, must_exist=True)


def remove_group_from_project(group_id: str, project_id: str) -> None:
    with db.transaction() as s:
        s.delete(_group_association(s, group_id, project_id, must_exist=True))


def forget_project(s, project_ids: list[str]) -> None:
    """A deleted project's associations go with it (Keystone's notification does this)."""
    s.execute(sa.delete(ProjectEndpoint).where(ProjectEndpoint.project_id.in_(project_ids)))
    s.execute(sa.delete(ProjectEndpointGroup).where(
        ProjectEndpointGroup.project_id.in_(project_ids)))
