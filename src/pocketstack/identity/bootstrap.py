"""First-start bootstrap of identity, as `keystone-manage bootstrap` plus DevStack's
catalog: the Default domain, admin/manager/member/reader roles (admin implies manager
implies member implies reader, as Keystone since 2024.1; manager is the domain manager),
the admin and service projects, the admin user, each service's own user (nova, neutron,
cinder, glance, swift: admin and service roles on the service project, as DevStack makes
them), the users of the compute hosts this process runs on the conductor (the service
role only: clients/host_users.py), the region and every service's endpoints.
Idempotent: an existing object is left as it is.
"""
from __future__ import annotations

import logging
import uuid

import sqlalchemy as sa

from pocketstack.common import config, db, rgw
from pocketstack.identity import catalog, passwords
from pocketstack.identity.models import (Assignment, Domain, Endpoint, ImpliedRole, Project,
                                         Region, Role, Service, User)

LOG = logging.getLogger(__name__)

# (type, name, description, path below the public URL)
CATALOG = (
    ("identity", "keystone", "Identity Service", "/identity"),
    ("compute", "nova", "Compute Service", "/compute/v2.1"),
    ("image", "glance", "Image Service", "/image"),
    ("network", "neutron", "Network Service", "/network"),
    ("block-storage", "cinder", "Block Storage Service", "/volume/v3/$(project_id)s"),
    ("volumev3", "cinderv3", "Block Storage Service (v3 alias)", "/volume/v3/$(project_id)s"),
    ("placement", "placement", "Placement Service", "/placement"),
    ("object-store", "swift", "Object Storage Service", "/object-store/v1/AUTH_$(project_id)s"),
    ("key-manager", "barbican", "Key Manager Service", "/key-manager"),
    ("load-balancer", "octavia", "Octavia Load Balancing Service", "/load-balancer"),
    ("dns", "designate", "DNS Service", "/dns"),
)
INTERFACES = ("public", "internal", "admin")
ROLES = ("admin", "manager", "member", "reader", "service")
IMPLIED_ROLES = (("admin", "manager"), ("manager", "member"), ("member", "reader"))
PROJECTS = {"admin": "Bootstrap project", "service": "Project of the service users"}


def bootstrap(admin_password: str, service_passwords: dict[str, tuple[str, int]],
              host_passwords: dict[str, tuple[str, int]] | None = None) -> dict:
    """Create what is missing; return the ids a caller may want (admin user and project).
    ``service_passwords``: each service user's password and its bcrypt cost (a user that
    exists keeps its password, as keystone-manage bootstrap leaves it);
    ``host_passwords`` likewise for compute host users.

    A warm start finds everything in place: a read-only pass (a query per table, no
    write lock) sees that and returns. Only when something is missing or moved does the
    same pass run again in a write transaction, creating it."""
    try:
        with db.reader() as s:
            ids = _reconcile(s, admin_password, service_passwords, host_passwords or {},
                             write=False)
    except _Incomplete:
        with db.transaction() as s:
            ids = _reconcile(s, admin_password, service_passwords, host_passwords or {},
                             write=True)
    catalog.invalidate()
    return ids


class _Incomplete(Exception):
    """The read-only pass found something to create or change."""


def _reconcile(s, admin_password: str, service_passwords: dict, host_passwords: dict,
               write: bool) -> dict:
    """What bootstrap must find, each table read once; with ``write`` False, raise
    _Incomplete instead of adding or changing anything."""
    def add(obj) -> None:
        if not write:
            raise _Incomplete
        s.add(obj)

    public_url = config.public_url()
    region = config.CONF.region_name
    domain_id = config.CONF.identity.default_domain_id
    if s.get(Domain, domain_id) is None:
        add(Domain(id=domain_id, name="Default", description="The default domain",
                   enabled=True))
        s.flush()
    roles = _first_by(s.scalars(sa.select(Role).where(Role.name.in_(ROLES),
                                                      Role.domain_id.is_(None))), "name")
    for name in ROLES:
        if name not in roles:
            roles[name] = Role(name=name, domain_id=None, id=uuid.uuid4().hex)
            add(roles[name])
    s.flush()
    implied = set(map(tuple, s.execute(
        sa.select(ImpliedRole.prior_role_id, ImpliedRole.implied_role_id)
        .where(ImpliedRole.prior_role_id.in_([role.id for role in roles.values()])))))
    for prior, implied_name in IMPLIED_ROLES:
        if (roles[prior].id, roles[implied_name].id) not in implied:
            add(ImpliedRole(prior_role_id=roles[prior].id,
                            implied_role_id=roles[implied_name].id))
    projects = _first_by(s.scalars(sa.select(Project).where(
        Project.name.in_(PROJECTS), Project.domain_id == domain_id)), "name")
    for name, description in PROJECTS.items():
        if name not in projects:
            projects[name] = Project(name=name, domain_id=domain_id, id=uuid.uuid4().hex,
                                     description=description, extra={})
            add(projects[name])
    # The service project is keystone-immutable: deleting it, or its users
    # (identity/immutable.py), would break every service's login. Set once, also on a
    # cloud made before; an admin's later "immutable": false stays.
    service = projects["service"]
    if "options" not in (service.extra or {}):
        if not write:
            raise _Incomplete
        service.extra = dict(service.extra or {}, options={"immutable": True})
    s.flush()
    users = _first_by(s.scalars(sa.select(User).where(
        User.name.in_(("admin", *service_passwords, *host_passwords)),
        User.domain_id == domain_id)), "name")
    if "admin" not in users:
        if not write:  # before hashing the password (a quarter of a second by default)
            raise _Incomplete
        users["admin"] = User(id=uuid.uuid4().hex, name="admin", domain_id=domain_id,
                              password_hash=passwords.hash_password(admin_password),
                              default_project_id=projects["admin"].id)
        add(users["admin"])
    for name, (password, rounds) in {**service_passwords, **host_passwords}.items():
        if name not in users:
            if not write:
                raise _Incomplete
            users[name] = User(
                name=name, domain_id=domain_id, id=uuid.uuid4().hex,
                password_hash=passwords.hash_password(password, rounds),
                default_project_id=projects["service"].id,
                description=f"The {name} service's calls to the other services"
                if name in service_passwords else "A compute host's calls to the conductor")
            add(users[name])
    s.flush()
    admin = users["admin"]
    service_ids = [users[name].id for name in service_passwords]
    host_ids = [users[name].id for name in host_passwords]
    grants = set(map(tuple, s.execute(
        sa.select(Assignment.type, Assignment.actor_id, Assignment.target_id,
                  Assignment.role_id)
        .where(Assignment.actor_id.in_((admin.id, *service_ids, *host_ids)),
               Assignment.inherited.is_(False)))))
    wanted = [("UserProject", admin.id, projects["admin"].id, roles["admin"].id),
              ("UserDomain", admin.id, domain_id, roles["admin"].id)]
    for user_id in service_ids:
        wanted += [("UserProject", user_id, projects["service"].id, roles[role].id)
                   for role in ("admin", "service")]
    wanted += [("UserProject", user_id, projects["service"].id, roles["service"].id)
               for user_id in host_ids]
    for grant in wanted:
        if grant not in grants:
            add(Assignment(type=grant[0], actor_id=grant[1], target_id=grant[2],
                           role_id=grant[3], inherited=False))
    if s.get(Region, region) is None:
        add(Region(id=region, description=""))
    services = _first_by(s.scalars(sa.select(Service).where(
        Service.type.in_([type_ for type_, *_ in CATALOG]))), "type", "name")
    for type_, name, description, _path in CATALOG:
        if (type_, name) not in services:
            services[type_, name] = Service(type=type_, name=name, id=uuid.uuid4().hex,
                                            description=description)
            add(services[type_, name])
    s.flush()
    endpoints = _first_by(s.scalars(sa.select(Endpoint).where(Endpoint.service_id.in_(
        [svc.id for svc in services.values()]))), "service_id", "interface")
    for type_, name, _description, path in CATALOG:
        svc = services[type_, name]
        url = public_url + path
        if type_ == "object-store" and rgw.enabled():
            url = rgw.catalog_url()
        for interface in INTERFACES:
            ep = endpoints.get((svc.id, interface))
            if ep is None:
                add(Endpoint(id=uuid.uuid4().hex, service_id=svc.id, interface=interface,
                             url=url, region_id=region, extra={"pocketstack": True}))
            elif (ep.extra or {}).get("pocketstack") and ep.url != url:
                # The cloud now listens elsewhere: move the endpoints bootstrap made.
                if not write:
                    raise _Incomplete
                LOG.info("Moving %s %s endpoint to %s", type_, interface, url)
                ep.url = url
    return {"admin_user_id": admin.id, "admin_project_id": projects["admin"].id}


def _first_by(rows, *keys: str) -> dict:
    """Rows by the value of ``keys`` (a tuple of values for several); the first row of
    each key, as a query for that key alone would have returned."""
    found: dict = {}
    for row in rows:
        key = getattr(row, keys[0]) if len(keys) == 1 else tuple(getattr(row, k)
                                                                 for k in keys)
        found.setdefault(key, row)
    return found
