"""Unified limits (/v3/registered_limits, /v3/limits) and policy blobs (/v3/policies).

A registered limit is a service's default for one resource (in a region, or everywhere);
a limit overrides it for one project or domain. Keystone's "flat" model: limits are not
checked against each other across the project tree.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.identity import base
from pocketstack.identity.models import (Domain, Limit, PolicyBlob, Project, Region,
                                         RegisteredLimit, Service)

MODEL = {"name": "flat", "description": "Limit enforcement and validation does not take "
                                        "project hierarchy into consideration."}


# --- registered limits -----------------------------------------------------------------

def _check_service_region(s, service_id: str, region_id: str | None) -> None:
    if s.get(Service, service_id) is None:
        raise exceptions.ValidationError(f"Invalid service ID: {service_id}.")
    if region_id is not None and s.get(Region, region_id) is None:
        raise exceptions.ValidationError(f"Invalid region ID: {region_id}.")


def _registered_duplicate(s, ref: dict, exclude: str | None = None) -> bool:
    q = sa.select(RegisteredLimit.id).where(
        RegisteredLimit.service_id == ref["service_id"],
        RegisteredLimit.resource_name == ref["resource_name"],
        RegisteredLimit.region_id == ref["region_id"] if ref.get("region_id")
        else RegisteredLimit.region_id.is_(None))
    if exclude:
        q = q.where(RegisteredLimit.id != exclude)
    return s.scalar(q.limit(1)) is not None


def create_registered_limits(refs: list[dict]) -> list[RegisteredLimit]:
    created = []
    with base.writing("registered_limit") as s:
        for ref in refs:
            _check_service_region(s, ref["service_id"], ref.get("region_id"))
            if _registered_duplicate(s, ref):
                raise base.conflict("registered_limit",
                                    f"Duplicate entry for resource {ref['resource_name']}")
            row = RegisteredLimit(id=base.new_id(), service_id=ref["service_id"],
                                  region_id=ref.get("region_id"),
                                  resource_name=ref["resource_name"],
                                  default_limit=ref["default_limit"],
                                  description=ref.get("description"))
            s.add(row)
            s.flush()
            created.append(row)
    return created


def list_registered_limits(filters: dict) -> list[RegisteredLimit]:
    with db.reader() as s:
        q = sa.select(RegisteredLimit)
        for key in ("service_id", "region_id", "resource_name"):
            if filters.get(key) is not None:
                q = q.where(getattr(RegisteredLimit, key) == filters[key])
        return list(s.scalars(q.order_by(RegisteredLimit.resource_name, RegisteredLimit.id)))


def get_registered_limit(limit_id: str) -> RegisteredLimit:
    with db.reader() as s:
        return base.get_or_404(s, RegisteredLimit, limit_id, "registered limit")


def _in_use(s, limit_id: str) -> bool:
    return s.scalar(sa.select(Limit.id).where(Limit.registered_limit_id == limit_id)
                    .limit(1)) is not None


def update_registered_limit(limit_id: str, ref: dict) -> RegisteredLimit:
    with base.writing("registered_limit") as s:
        row = base.get_or_404(s, RegisteredLimit, limit_id, "registered limit")
        identity_change = {"service_id", "region_id", "resource_name"} & set(ref)
        if identity_change and _in_use(s, limit_id):
            raise exceptions.Forbidden(
                f"Unable to update or delete registered limit {limit_id} because there are "
                "project limits associated with it.")
        merged = {"service_id": row.service_id, "region_id": row.region_id,
                  "resource_name": row.resource_name, **ref}
        _check_service_region(s, merged["service_id"], merged["region_id"])
        if identity_change and _registered_duplicate(s, merged, exclude=limit_id):
            raise base.conflict("registered_limit",
                                f"Duplicate entry for resource {merged['resource_name']}")
        for key in ("service_id", "region_id", "resource_name", "default_limit",
                    "description"):
            if key in ref:
                setattr(row, key, ref[key])
    return row


def delete_registered_limit(limit_id: str) -> None:
    with db.transaction() as s:
        row = base.get_or_404(s, RegisteredLimit, limit_id, "registered limit")
        if _in_use(s, limit_id):
            raise exceptions.Forbidden(
                f"Unable to update or delete registered limit {limit_id} because there are "
                "project limits associated with it.")
        s.delete(row)


# --- project and domain limits -----------------------------------------------------------

def _registered_for(s, ref: dict) -> RegisteredLimit:
    q = sa.select(RegisteredLimit).where(
        RegisteredLimit.service_id == ref["service_id"],
        RegisteredLimit.resource_name == ref["resource_name"],
        RegisteredLimit.region_id == ref["region_id"] if ref.get("region_id")
        else RegisteredLimit.region_id.is_(None))
    registered = s.scalar(q)
    if registered is None:
        raise exceptions.ValidationError(
            f"No registered limit found for resource {ref['resource_name']} of service "
            f"{ref['service_id']}: register a default limit first.")
    return registered


def create_limits(refs: list[dict]) -> list[tuple[Limit, RegisteredLimit]]:
    created = []
    with base.writing("limit") as s:
        for ref in refs:
            project_id, domain_id = ref.get("project_id"), ref.get("domain_id")
            if bool(project_id) == bool(domain_id):
                raise exceptions.ValidationError("A limit needs exactly one of project_id "
                                                 "and domain_id.")
            if project_id and s.get(Project, project_id) is None:
                raise exceptions.ValidationError(f"Invalid project ID: {project_id}.")
            if domain_id and s.get(Domain, domain_id) is None:
                raise exceptions.ValidationError(f"Invalid domain ID: {domain_id}.")
            _check_service_region(s, ref["service_id"], ref.get("region_id"))
            registered = _registered_for(s, ref)
            taken = s.scalar(sa.select(Limit.id).where(
                Limit.registered_limit_id == registered.id,
                Limit.project_id == project_id if project_id else Limit.project_id.is_(None),
                Limit.domain_id == domain_id if domain_id else Limit.domain_id.is_(None)))
            if taken:
                raise base.conflict("limit", f"Duplicate entry for resource "
                                             f"{ref['resource_name']}")
            row = Limit(id=base.new_id(), registered_limit_id=registered.id,
                        project_id=project_id, domain_id=domain_id,
                        resource_limit=ref["resource_limit"], description=ref.get("description"))
            s.add(row)
            s.flush()
            created.append((row, registered))
    return created


def list_limits(filters: dict, project_id: str | None = None) -> list[tuple]:
    """``project_id`` restricts the listing to one project (for non-admin callers)."""
    with db.reader() as s:
        q = sa.select(Limit, RegisteredLimit).join(
            RegisteredLimit, RegisteredLimit.id == Limit.registered_limit_id)
        for key in ("service_id", "region_id", "resource_name"):
            if filters.get(key) is not None:
                q = q.where(getattr(RegisteredLimit, key) == filters[key])
        for key in ("project_id", "domain_id"):
            if filters.get(key) is not None:
                q = q.where(getattr(Limit, key) == filters[key])
        if project_id is not None:
            q = q.where(Limit.project_id == project_id)
        return [tuple(row) for row in s.execute(q.order_by(RegisteredLimit.resource_name,
                                                           Limit.id))]


def get_limit(limit_id: str) -> tuple:
    with db.reader() as s:
        row = base.get_or_404(s, Limit, limit_id, "limit")
        return row, s.get(RegisteredLimit, row.registered_limit_id)


def update_limit(limit_id: str, ref: dict) -> tuple:
    with db.transaction() as s:
        row = base.get_or_404(s, Limit, limit_id, "limit")
        for key in ("resource_limit", "description"):
            if key in ref:
                setattr(row, key, ref[key])
        return row, s.get(RegisteredLimit, row.registered_limit_id)


def delete_limit(limit_id: str) -> None:
    with db.transaction() as s:
        s.delete(base.get_or_404(s, Limit, limit_id, "limit"))


# --- policy blobs ------------------------------------------------------------------------

POLICY_COLUMNS = {"id", "type", "blob"}


def create_policy(ref: dict) -> PolicyBlob:
    row = PolicyBlob(id=base.new_id(), type=ref["type"], blob=ref["blob"],
                     extra=base.extra_attributes(ref, POLICY_COLUMNS))
    with db.transaction() as s:
        s.add(row)
    return row


def list_policies(type_filters: dict | None = None) -> list[PolicyBlob]:
    """``type_filters``: ``type`` and Keystone's ``type__contains`` & co."""
    with db.reader() as s:
        q = base.apply_name_filters(sa.select(PolicyBlob), PolicyBlob.type,
                                    type_filters or {}, attr="type")
        return list(s.scalars(q.order_by(PolicyBlob.id)))


def get_policy(policy_id: str) -> PolicyBlob:
    with db.reader() as s:
        return base.get_or_404(s, PolicyBlob, policy_id, "policy")


def update_policy(policy_id: str, ref: dict) -> PolicyBlob:
    with db.transaction() as s:
        row = base.get_or_404(s, PolicyBlob, policy_id, "policy")
        for key in ("type", "blob"):
            if key in ref:
                setattr(row, key, ref[key])
        extra = base.extra_attributes(ref, POLICY_COLUMNS)
        if extra:
            row.extra = dict(row.extra or {}, **extra)
    return row


def delete_policy(policy_id: str) -> None:
    with db.transaction() as s:
        s.delete(base.get_or_404(s, PolicyBlob, policy_id, "policy"))
