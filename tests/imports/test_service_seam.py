"""Services talk to each other only through their APIs.

The imports: no service reaches into another's code or tables (every import in a file
counts, also one inside a function). The tokens: each service logs in through the
identity API as its own user, once per token lifetime, and a user's token that comes with
a service token is accepted even once it has expired, as keystonemiddleware does.
"""
from __future__ import annotations

import ast
import datetime as dt
import json
import os
import pathlib
import stat

import pytest

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "pocketstack"
SERVICES = ("compute", "network", "volume", "image", "identity", "control", "dashboard",
            "placement", "loadbalancer", "dns")


def _imports(path: pathlib.Path) -> set[str]:
    """Every pocketstack module the file imports, anywhere in it."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return {name for name in out if name.startswith("pocketstack.")}


def _offenders(package: str, forbidden: tuple[str, ...]) -> list[str]:
    found = []
    for path in sorted((SRC / package).rglob("*.py")):
        for name in sorted(_imports(path)):
            top = name.split(".")[1]
            if top in forbidden:
                found.append(f"{path.relative_to(SRC)} imports {name}")
    return found


@pytest.mark.parametrize("package,forbidden", [
    ("compute", ("identity", "network", "volume", "image")),
    ("network", ("identity", "compute", "dns")),
    ("dns", ("identity", "compute", "network", "volume", "image", "placement")),
    ("volume", ("identity", "compute")),
    ("image", ("identity", "compute")),
    ("identity", ("compute",)),
    ("placement", ("identity", "compute", "network", "volume", "image")),
    ("loadbalancer", ("identity", "compute", "network", "volume", "image", "placement")),
    ("common", SERVICES + ("clients", "cli", "cloud", "workers", "agent")),
    ("clients", SERVICES),
])
def test_no_service_reaches_into_another(package, forbidden):
    assert _offenders(package, forbidden) == []


def test_compute_reaches_placement_only_through_its_doors():
    """The scheduler claims and the hosts report through placement/direct.py and
    placement/report.py in-process (docs/architecture.md says why not HTTP), a host on
    the conductor reports through its REST client (placement/report_client.py); nothing
    else of placement's is compute's business."""
    allowed = {"pocketstack.placement", "pocketstack.placement.direct",
               "pocketstack.placement.report", "pocketstack.placement.report_client"}
    found = []
    for path in sorted((SRC / "compute").rglob("*.py")):
        for name in sorted(_imports(path)):
            if name.startswith("pocketstack.placement") and name not in allowed:
                found.append(f"{path.relative_to(SRC)} imports {name}")
    assert found == []


def test_the_rule_sees_a_function_level_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from pocketstack.identity import tokens\n")
    assert "pocketstack.identity" in _imports(probe)


# --- service users and their tokens ----------------------------------------------------

@pytest.fixture(scope="module")
def image_id(cloud):
    from pocketstack.common.image_formats import qcow2_header

    image = cloud.sdk().image.create_image(
        name="seam-cirros", data=qcow2_header(1 << 20), disk_format="qcow2",
        container_format="bare", visibility="public")
    yield image.id
    cloud.sdk().image.delete_image(image.id)


def _smallest_flavor(conn):
    return sorted(conn.compute.flavors(), key=lambda f: f.ram)[0]


def test_each_service_has_its_own_user_in_the_service_project(cloud):
    conn = cloud.sdk()
    service = conn.identity.find_project("service")
    for name in ("nova", "neutron", "cinder", "glance", "octavia", "designate", "swift"):
        user = conn.identity.find_user(name)
        assert user is not None, name
        roles = {a["role"]["name"] for a in conn.session.get(
            cloud.auth_url + "/v3/role_assignments",
            params={"user.id": user.id, "scope.project.id": service.id,
                    "include_names": 1}).json()["role_assignments"]}
        assert {"admin", "service"} <= roles, (name, roles)
    path = os.path.join(cloud.data_dir, "service-passwords")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with open(path) as f:
        stored = json.load(f)
    # The password logs in through the identity API like any user's.
    sess = cloud.session(username="nova", password=stored["nova"], project_name="service")
    assert sess.get_token()


def test_a_boot_logs_in_once_not_per_call(cloud, image_id, monkeypatch):
    """Many service calls per boot (image, ports, events), one login per service user."""
    from pocketstack.clients import service_users

    logins = []
    real = service_users._login

    def counting(user, password):
        logins.append(user)
        return real(user, password)

    monkeypatch.setattr(service_users, "_login", counting)
    with cloud.cloud.runtime.activated():
        service_users._logins().tokens.clear()  # as a fresh process
    conn = cloud.sdk()
    flavor = _smallest_flavor(conn)
    net = conn.network.create_network(name="seam-net")
    try:
        conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.77.0.0/24")
        servers = [conn.compute.create_server(name=f"seam-{i}", image_id=image_id,
                                              flavor_id=flavor.id,
                                              networks=[{"uuid": net.id}]) for i in range(3)]
        for server in servers:
            conn.compute.wait_for_server(server, wait=60)
        for server in servers:
            conn.compute.delete_server(server)
        for server in servers:
            conn.compute.wait_for_delete(server, wait=60)
    finally:
        for port in conn.network.ports(network_id=net.id):
            conn.network.delete_port(port)
        conn.network.delete_network(net)
    assert "nova" in logins and "neutron" in logins  # compute's calls, network's events
    assert len(logins) == len(set(logins)), logins


def _call(cloud, token: str, service_token: str | None = None) -> int:
    import httpx

    headers = {"X-Auth-Token": token}
    if service_token:
        headers["X-Service-Token"] = service_token
    return httpx.get(cloud.url + "/image/v2/images", headers=headers, timeout=30).status_code


def _expired_admin_token(cloud) -> str:
    """A token of the admin that expired an hour ago (tokens last at least a minute: a
    test cannot wait for one to expire)."""
    from pocketstack.identity import tokens

    ids = cloud.cloud.ids
    with cloud.cloud.runtime.activated():
        token, _ = tokens.issue(
            user_id=ids["admin_user_id"], user_domain_id="default", methods=["password"],
            roles=["admin", "member", "reader"], project_id=ids["admin_project_id"],
            project_domain_id="default",
            expires_at=dt.datetime.utcnow() - dt.timedelta(hours=1))
    return token


def test_an_expired_user_token_is_accepted_only_beside_a_service_token(cloud):
    from pocketstack.clients import service_users

    with cloud.cloud.runtime.activated():
        nova = service_users.token("compute")
    expired = _expired_admin_token(cloud)
    admin = cloud.session().get_token()
    assert _call(cloud, expired) == 401
    assert _call(cloud, expired, nova) == 200
    # The service token must be valid and hold the service role.
    assert _call(cloud, expired, admin) == 401
    assert _call(cloud, expired, "not-a-token") == 401
    assert _call(cloud, admin, "not-a-token") == 401
    assert _call(cloud, admin, nova) == 200


def test_a_changed_service_password_is_picked_up_on_the_next_call(cloud, image_id):
    """The operator changes nova's password (every token of nova's is revoked) and puts
    the new one in the config: the next call logs in again instead of failing."""
    from pocketstack.clients import service_users
    from pocketstack.common import config

    conn = cloud.sdk()
    nova = conn.identity.find_user("nova")
    with cloud.cloud.runtime.activated():
        old = service_users.token("compute")
        old_password = service_users.password("nova")
    conn.identity.update_user(nova, password="a-new-nova-password")
    try:
        with cloud.cloud.runtime.activated():
            config.CONF.set_override("nova_password", "a-new-nova-password",
                                     group="service_user")
        assert _call(cloud, old) == 401  # revoked
        server = conn.compute.create_server(name="seam-pw", image_id=image_id,
                                            networks="none",
                                            flavor_id=_smallest_flavor(conn).id)
        server = conn.compute.wait_for_server(server, wait=60)  # compute's image lookup
        conn.compute.delete_server(server)
        conn.compute.wait_for_delete(server, wait=60)
        with cloud.cloud.runtime.activated():
            assert service_users.token("compute") != old
    finally:
        conn.identity.update_user(nova, password=old_password)
        with cloud.cloud.runtime.activated():
            config.CONF.clear_override("nova_password", group="service_user")
            service_users._logins().tokens.clear()


def test_the_creators_token_is_kept_only_while_a_volume_build_runs(cloud):
    """A boot from volume keeps the user's token for a rescheduled build to create the
    volume as the user; once the server is ACTIVE it is gone from the database."""
    import sqlalchemy as sa

    from pocketstack.common import db
    from pocketstack.compute.models import Instance

    conn = cloud.sdk()
    image = conn.image.create_image(name="seam-raw", data=b"\0" * (1 << 20),
                                    disk_format="raw", container_format="bare")
    server = None
    try:
        server = conn.compute.create_server(
            name="seam-bfv", flavor_id=_smallest_flavor(conn).id, networks="none",
            block_device_mapping=[{"boot_index": 0, "uuid": image.id, "source_type": "image",
                                   "destination_type": "volume", "volume_size": 1,
                                   "delete_on_termination": True}])
        server = conn.compute.wait_for_server(server, wait=60)
        with cloud.cloud.runtime.activated(), db.reader() as s:
            kept = s.scalar(sa.select(Instance.build_token).where(Instance.uuid == server.id))
        assert kept is None
    finally:
        if server is not None:
            conn.compute.delete_server(server)
            conn.compute.wait_for_delete(server, wait=60)
        conn.image.delete_image(image)
