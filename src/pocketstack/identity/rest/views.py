"""Keystone's JSON for each entity: the stored attributes, any extra ones the user sent,
and {"links": {"self": ...}}. Passwords and secret hashes never appear here."""
from __future__ import annotations

from pocketstack.common.timeutils import isotime_us
from pocketstack.identity import access_rules, immutable


def _link(req, path: str) -> dict:
    return {"self": f"{req.service_url}/v3/{path}"}


def _with_extra(base: dict, extra: dict | None) -> dict:
    out = dict(extra or {})
    out.update(base)
    return out


def domain(req, d) -> dict:
    return {"id": d.id, "name": d.name, "description": d.description or "",
            "enabled": d.enabled, "tags": list(d.tags or []), "options": {},
            "links": _link(req, f"domains/{d.id}")}


def project(req, p) -> dict:
    if not hasattr(p, "parent_id"):  # a domain, shown as the project acting as it
        return {"id": p.id, "name": p.name, "domain_id": None, "parent_id": None,
                "description": p.description or "", "enabled": p.enabled,
                "is_domain": True, "tags": list(p.tags or []), "options": {},
                "links": _link(req, f"projects/{p.id}")}
    return _with_extra({
        "id": p.id, "name": p.name, "domain_id": p.domain_id,
        "description": p.description or "", "enabled": p.enabled,
        "parent_id": p.parent_id or p.domain_id, "is_domain": False,
        "tags": list(p.tags or []), "options": immutable.options(p),
        "links": _link(req, f"projects/{p.id}")}, {k: v for k, v in (p.extra or {}).items()
                                                   if k != "options"})


def user(req, u) -> dict:
    body = {"id": u.id, "name": u.name, "domain_id": u.domain_id, "enabled": u.enabled,
            "password_expires_at": isotime_us(u.password_expires_at), "options": {},
            "links": _link(req, f"users/{u.id}")}
    # Keystone keeps these in "extra": present only when set.
    if u.default_project_id:
        body["default_project_id"] = u.default_project_id
    if u.description:
        body["description"] = u.description
    return _with_extra(body, u.extra)


def group(req, g) -> dict:
    return _with_extra({"id": g.id, "name": g.name, "domain_id": g.domain_id,
                        "description": g.description or "",
                        "links": _link(req, f"groups/{g.id}")}, g.extra)


def role(req, r) -> dict:
    return _with_extra({"id": r.id, "name": r.name, "domain_id": r.domain_id,
                        "description": r.description or None, "options": {},
                        "links": _link(req, f"roles/{r.id}")}, r.extra)


def role_ref(req, r) -> dict:
    """The short form in role inferences."""
    return {"id": r.id, "name": r.name, "links": _link(req, f"roles/{r.id}")}


def service(req, s) -> dict:
    return _with_extra({"id": s.id, "type": s.type, "name": s.name,
                        "description": s.description or "", "enabled": s.enabled,
                        "links": _link(req, f"services/{s.id}")}, s.extra)


def endpoint(req, e) -> dict:
    extra = {k: v for k, v in (e.extra or {}).items() if k != "pocketstack"}
    return _with_extra({"id": e.id, "service_id": e.service_id, "interface": e.interface,
                        "url": e.url, "region_id": e.region_id, "region": e.region_id,
                        "enabled": e.enabled, "links": _link(req, f"endpoints/{e.id}")}, extra)


def region(req, r) -> dict:
    return _with_extra({"id": r.id, "description": r.description or "",
                        "parent_region_id": r.parent_region_id,
                        "links": _link(req, f"regions/{r.id}")}, r.extra)


def app_cred(req, c, secret: str | None = None) -> dict:
    body = {"id": c.id, "name": c.name, "description": c.description or None,
            "project_id": c.project_id,
            "roles": [{"id": r["id"], "name": r["name"], "domain_id": r.get("domain_id")}
                      for r in c.roles or []],
            # Keystone's format here has no "Z" (unlike token times)
            "expires_at": c.expires_at.strftime("%Y-%m-%dT%H:%M:%S.%f")
            if c.expires_at else None, "unrestricted": c.unrestricted,
            "access_rules": access_rules.describe(c.access_rules),
            "links": _link(req, f"users/{c.user_id}/application_credentials/{c.id}")}
    if secret is not None:
        body["secret"] = secret
    return body


def access_rule(req, r) -> dict:
    return {"id": r.id, "service": r.service, "path": r.path, "method": r.method,
            "links": _link(req, f"access_rules/{r.id}")}
