"""First-start bootstrap of identity, as `keystone-manage bootstrap` plus DevStack's
catalog: the Default domain, admin/manager/member/reader roles (admin implies manager
implies member implies reader, as Keystone since 2024.1; manager is the domain manager),
the admin and service projects, the admin user, an internal service user, the
region and every service's endpoints. Idempotent: an existing object is left as it is.
"""
from __future__ import annotations

import logging
import uuid

import sqlalchemy as sa

from pocketstack.common import config, db
from pocketstack.identity import catalog, passwords
from pocketstack.identity.models import (Assignment, Domain, Endpoint, ImpliedRole, Project,
                                         Region, Role, Service, User)

LOG = logging.getLogger(__name__)

SERVICE_USER = "pocketstack"

# (type, name, description, path below the public URL)
CATALOG = (
    ("identity", "keystone", "Identity Service", "/identity"),
    ("compute", "nova", "Compute Service", "/compute/v2.1"),
    ("image", "glance", "Image Service", "/image"),
    ("network", "neutron", "Network Service", "/network"),
    ("block-storage", "cinder", "Block Storage Service", "/volume/v3/$(project_id)s"),
    ("volumev3", "cinderv3", "Block Storage Service (v3 alias)", "/volume/v3/$(project_id)s"),
)
INTERFACES = ("public", "internal", "admin")


def _get_or_create(s, model, where: dict, **values):
    obj = s.scalar(sa.select(model).filter_by(**where))
    if obj is None:
        obj = model(**where, **values)
        s.add(obj)
        s.flush()
    return obj


def _grant(s, type_: str, actor_id: str, target_id: str, role_id: str) -> None:
    if s.get(Assignment, (type_, actor_id, target_id, role_id, False)) is None:
        s.add(Assignment(type=type_, actor_id=actor_id, target_id=target_id, role_id=role_id,
                         inherited=False))


def bootstrap(admin_password: str) -> dict:
    """Create what is missing; return the ids a caller may want (admin user and project)."""
    public_url = config.public_url()
    region = config.CONF.region_name
    domain_id = config.CONF.identity.default_domain_id
    with db.transaction() as s:
        if s.get(Domain, domain_id) is None:
            s.add(Domain(id=domain_id, name="Default",
                         description="The default domain", enabled=True))
            s.flush()
        roles = {name: _get_or_create(s, Role, {"name": name, "domain_id": None},
                                      id=uuid.uuid4().hex)
                 for name in ("admin", "manager", "member", "reader", "service")}
        for prior, implied in (("admin", "manager"), ("manager", "member"),
                               ("member", "reader")):
            if s.get(ImpliedRole, (roles[prior].id, roles[implied].id)) is None:
                s.add(ImpliedRole(prior_role_id=roles[prior].id,
                                  implied_role_id=roles[implied].id))
        admin_project = _get_or_create(s, Project, {"name": "admin", "domain_id": domain_id},
                                       id=uuid.uuid4().hex, description="Bootstrap project")
        service_project = _get_or_create(s, Project, {"name": "service", "domain_id": domain_id},
                                         id=uuid.uuid4().hex,
                                         description="Project of the service users")
        admin = s.scalar(sa.select(User).filter_by(name="admin", domain_id=domain_id))
        if admin is None:
            admin = User(id=uuid.uuid4().hex, name="admin", domain_id=domain_id,
                         password_hash=passwords.hash_password(admin_password),
                         default_project_id=admin_project.id)
            s.add(admin)
            s.flush()
        _grant(s, "UserProject", admin.id, admin_project.id, roles["admin"].id)
        _grant(s, "UserDomain", admin.id, domain_id, roles["admin"].id)
        service_user = _get_or_create(s, User, {"name": SERVICE_USER, "domain_id": domain_id},
                                      id=uuid.uuid4().hex, password_hash=None,
                                      default_project_id=service_project.id,
                                      description="pocketstack's own service-to-service calls")
        for role in ("admin", "service"):
            _grant(s, "UserProject", service_user.id, service_project.id, roles[role].id)
        if s.get(Region, region) is None:
            s.add(Region(id=region, description=""))
        for type_, name, description, path in CATALOG:
            svc = _get_or_create(s, Service, {"type": type_, "name": name},
                                 id=uuid.uuid4().hex, description=description)
            for interface in INTERFACES:
                ep = s.scalar(sa.select(Endpoint).filter_by(service_id=svc.id,
                                                            interface=interface))
                url = public_url + path
                if ep is None:
                    s.add(Endpoint(id=uuid.uuid4().hex, service_id=svc.id, interface=interface,
                                   url=url, region_id=region, extra={"pocketstack": True}))
                elif (ep.extra or {}).get("pocketstack") and ep.url != url:
                    # The cloud now listens elsewhere: move the endpoints bootstrap made.
                    LOG.info("Moving %s %s endpoint to %s", type_, interface, url)
                    ep.url = url
        ids = {"admin_user_id": admin.id, "admin_project_id": admin_project.id,
               "service_project_id": service_project.id, "service_user_id": service_user.id}
    catalog.invalidate()
    return ids
