"""The service catalog as tokens carry it, cached until a service or endpoint changes."""
from __future__ import annotations

import threading
import time

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.identity.models import Endpoint, Region, Service

_lock = threading.Lock()
_cached: tuple[float, list] | None = None
CACHE_SECONDS = 5.0  # picks up changes made by another API process


def invalidate() -> None:
    global _cached
    _cached = None


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
    global _cached
    now = time.monotonic()
    cached = _cached
    if cached is None or now - cached[0] > CACHE_SECONDS:
        with _lock:
            cached = (now, _load())
            _cached = cached
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


def region_exists(session, region_id: str) -> bool:
    return session.get(Region, region_id) is not None
