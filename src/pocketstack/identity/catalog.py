"""The service catalog: services, endpoints and regions, and the catalog tokens carry,
cached until a service, endpoint or region changes (here at once; in another API process
within CACHE_SECONDS)."""
from __future__ import annotations

import threading
import time

import sqlalchemy as sa

from pocketstack.common import db, exceptions, runtime
from pocketstack.identity import base
from pocketstack.identity.models import Endpoint, Region, Service

CACHE_SECONDS = 5.0  # picks up changes made by another API process


class _CatalogCache:
    """One cloud's catalog (common/runtime.py)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.cached: tuple[float, list] | None = None


def _cache() -> _CatalogCache:
    return runtime.current().slot(__name__, _CatalogCache)


def invalidate() -> None:
    _cache().cached = None


def _load() -> list[dict]:
    with db.reader() as s:
        services = s.scalars(sa.select(Service).where(Service.enabled.is_(True))
                             .order_by(Service.type)).all()
        endpoints = s.scalars(sa.select(Endpoint).where(Endpoint.enabled.is_(True))).all()
    by_service: dict[str, list] = {}
    for ep in endpoints:
        by_service.setdefault(ep.service_id, []).append({
            "id": ep.id, "interface": ep.interface, "region_id": ep.region_id,
            "url": ep.url, "region": ep.region_id})
    return [{"endpoints": sorted(by_service.get(svc.id, []), key=lambda e: e["interface"]),
             "id": svc.id, "type": svc.type, "name": svc.name} for svc in services]


def catalog(project_id: str | None = None, user_id: str | None = None) -> list[dict]:
    """The catalog with ``$(project_id)s``-style templates filled in, as Keystone does."""
    st = _cache()
    now = time.monotonic()
    cached = st.cached
    if cached is None or now - cached[0] > CACHE_SECONDS:
        with st.lock:
            cached = (now, _load())
            st.cached = cached
    entries = cached[1]
    if not any("$(" in ep["url"] or "%(" in ep["url"] for e in entries for ep in e["endpoints"]):
        return entries
    out = []
    for entry in entries:
        endpoints = []
        for ep in entry["endpoints"]:
            url = _substitute(ep["url"], project_id, user_id)
            if url is not None:
                endpoints.append(dict(ep, url=url))
        out.append(dict(entry, endpoints=endpoints))
    return out


def _substitute(url: str, project_id: str | None, user_id: str | None) -> str | None:
    values = {"project_id": project_id, "tenant_id": project_id, "user_id": user_id}
    for key, value in values.items():
        for pattern in (f"$({key})s", f"%({key})s"):
            if pattern in url:
                if value is None:
                    return None  # Keystone drops endpoints it cannot fill in
                url = url.replace(pattern, value)
    return url


def _changed(session) -> None:
    """Drop the cached catalog once this transaction commits."""
    sa.event.listen(session, "after_commit", lambda _s: invalidate(), once=True)


# --- services -------------------------------------------------------------------------

SERVICE_COLUMNS = {"id", "type", "name", "description", "enabled"}
ENDPOINT_COLUMNS = {"id", "service_id", "interface", "url", "region_id", "region", "enabled"}
REGION_COLUMNS = {"id", "description", "parent_region_id"}


def list_services(*, type_: str | None = None, name: str | None = None) -> list[Service]:
    with db.reader() as s:
        q = sa.select(Service)
        if type_ is not None:
            q = q.where(Service.type == type_)
        if name is not None:
            q = q.where(Service.name == name)
        return list(s.scalars(q.order_by(Service.type, Service.name)))


def get_service(service_id: str) -> Service:
    with db.reader() as s:
        return base.get_or_404(s, Service, service_id, "service")


def create_service(ref: dict) -> Service:
    service = Service(id=base.new_id(), type=ref["type"], name=ref.get("name") or "",
                      description=ref.get("description") or "",
                      enabled=ref.get("enabled", True),
                      extra=base.extra_attributes(ref, SERVICE_COLUMNS))
    with db.transaction() as s:
        s.add(service)
        _changed(s)
    return service


def update_service(service_id: str, ref: dict) -> Service:
    with db.transaction() as s:
        service = base.get_or_404(s, Service, service_id, "service")
        for key in ("type", "name", "enabled"):
            if key in ref:
                setattr(service, key, ref[key] if ref[key] is not None else "")
        if "description" in ref:
            service.description = ref["description"] or ""
        extra = base.extra_attributes(ref, SERVICE_COLUMNS)
        if extra:
            service.extra = dict(service.extra or {}, **extra)
        _changed(s)
    return service


def delete_service(service_id: str) -> None:
    with db.transaction() as s:
        service = base.get_or_404(s, Service, service_id, "service")
        s.execute(sa.delete(Endpoint).where(Endpoint.service_id == service_id))
        s.delete(service)
        _changed(s)


# --- endpoints ------------------------------------------------------------------------

def list_endpoints(*, service_id=None, interface=None, region_id=None) -> list[Endpoint]:
    with db.reader() as s:
        q = sa.select(Endpoint)
        if service_id is not None:
            q = q.where(Endpoint.service_id == service_id)
        if interface is not None:
            q = q.where(Endpoint.interface == interface)
        if region_id is not None:
            q = q.where(Endpoint.region_id == region_id)
        return list(s.scalars(q.order_by(Endpoint.service_id, Endpoint.interface)))


def get_endpoint(endpoint_id: str) -> Endpoint:
    with db.reader() as s:
        return base.get_or_404(s, Endpoint, endpoint_id, "endpoint")


def _check_endpoint_refs(s, service_id: str | None, region_id: str | None) -> None:
    if region_id is not None and s.get(Region, region_id) is None:
        raise exceptions.ValidationError(
            "Expecting to find endpoint region_id in region table. The server could not "
            "comply with the request since it is either malformed or otherwise incorrect. "
            "The client is assumed to be in error.")
    if service_id is not None and s.get(Service, service_id) is None:
        raise exceptions.ValidationError(
            "Expecting to find endpoint service_id in service table. The server could not "
            "comply with the request since it is either malformed or otherwise incorrect. "
            "The client is assumed to be in error.")


def _region_of(ref: dict):
    # "region" is the deprecated name of region_id; Keystone accepts either.
    return ref.get("region_id", ref.get("region"))


def create_endpoint(ref: dict) -> Endpoint:
    endpoint = Endpoint(id=base.new_id(), service_id=ref["service_id"],
                        interface=ref["interface"], url=ref["url"], region_id=_region_of(ref),
                        enabled=ref.get("enabled", True),
                        extra=base.extra_attributes(ref, ENDPOINT_COLUMNS))
    with db.transaction() as s:
        _check_endpoint_refs(s, endpoint.service_id, endpoint.region_id)
        s.add(endpoint)
        _changed(s)
    return endpoint


def update_endpoint(endpoint_id: str, ref: dict) -> Endpoint:
    with db.transaction() as s:
        endpoint = base.get_or_404(s, Endpoint, endpoint_id, "endpoint")
        region_id = _region_of(ref)
        _check_endpoint_refs(s, ref.get("service_id"), region_id)
        for key in ("service_id", "interface", "url", "enabled"):
            if key in ref:
                setattr(endpoint, key, ref[key])
        if "region_id" in ref or "region" in ref:
            endpoint.region_id = region_id
        extra = base.extra_attributes(ref, ENDPOINT_COLUMNS)
        if extra:
            endpoint.extra = dict(endpoint.extra or {}, **extra)
        _changed(s)
    return endpoint


def delete_endpoint(endpoint_id: str) -> None:
    with db.transaction() as s:
        s.delete(base.get_or_404(s, Endpoint, endpoint_id, "endpoint"))
        _changed(s)


# --- regions --------------------------------------------------------------------------

def list_regions(parent_region_id: str | None = None) -> list[Region]:
    with db.reader() as s:
        q = sa.select(Region)
        if parent_region_id is not None:
            q = q.where(Region.parent_region_id == parent_region_id)
        return list(s.scalars(q.order_by(Region.id)))


def get_region(region_id: str) -> Region:
    with db.reader() as s:
        return base.get_or_404(s, Region, region_id, "region")


def _check_parent(s, region_id: str, parent_id: str | None) -> None:
    seen = {region_id}
    while parent_id:
        if parent_id in seen:
            raise exceptions.BadRequest(f"The specified parent region {parent_id} would "
                                        "create a circular region hierarchy.")
        parent = s.get(Region, parent_id)
        if parent is None:
            raise exceptions.NotFound(f"Could not find region: {parent_id}.")
        seen.add(parent_id)
        parent_id = parent.parent_region_id


def create_region(ref: dict, region_id: str | None = None) -> Region:
    region_id = region_id or ref.get("id") or base.new_id()
    region = Region(id=region_id, description=ref.get("description") or "",
                    parent_region_id=ref.get("parent_region_id"),
                    extra=base.extra_attributes(ref, REGION_COLUMNS))
    with base.writing("region") as s:
        if s.get(Region, region_id) is not None:
            raise base.conflict("region", f"Duplicate ID, {region_id}.")
        _check_parent(s, region_id, region.parent_region_id)
        s.add(region)
        _changed(s)
    return region


def update_region(region_id: str, ref: dict) -> Region:
    with db.transaction() as s:
        region = base.get_or_404(s, Region, region_id, "region")
        if "parent_region_id" in ref:
            _check_parent(s, region_id, ref["parent_region_id"])
            region.parent_region_id = ref["parent_region_id"]
        if "description" in ref:
            region.description = ref["description"] or ""
        extra = base.extra_attributes(ref, REGION_COLUMNS)
        if extra:
            region.extra = dict(region.extra or {}, **extra)
        _changed(s)
    return region


def delete_region(region_id: str) -> None:
    with db.transaction() as s:
        region = base.get_or_404(s, Region, region_id, "region")
        family, frontier = [region_id], [region_id]
        while frontier:
            frontier = list(s.scalars(sa.select(Region.id).where(
                Region.parent_region_id.in_(frontier))))
            family += frontier
        if s.scalar(sa.select(Endpoint.id).where(Endpoint.region_id.in_(family)).limit(1)):
            raise exceptions.Forbidden(f"Unable to delete region {region_id} because it or "
                                       "its child regions have associated endpoints.")
        s.execute(sa.delete(Region).where(Region.id.in_(family[1:])))
        s.delete(region)
        _changed(s)
