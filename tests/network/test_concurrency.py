"""IPAM under concurrency: 200 ports created by 8 concurrent clients on one /24 get 200
distinct addresses, none is lost, and the DHCP files list exactly those ports.

Runs on the session cloud (SQLite) and, where the servers run on 127.0.0.1, on a
`pocketstack up` backed by a throw-away PostgreSQL and MariaDB database.
"""
from __future__ import annotations

import concurrent.futures
import ipaddress
import os
import shutil
import socket
import sys
import tempfile
import time
import uuid

import pytest
import sqlalchemy as sa
from network_helpers import unique

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from helpers.up_process import UpProcess  # noqa: E402

CLIENTS, PORTS = 8, 200

SERVERS = {
    "postgresql": (5432, "postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
                   "postgresql+psycopg://postgres@127.0.0.1:5432/{name}",
                   "CREATE DATABASE {name}", "DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
    "mariadb": (3306, "mysql+pymysql://root@127.0.0.1:3306/",
                "mysql+pymysql://root@127.0.0.1:3306/{name}?charset=utf8mb4",
                "CREATE DATABASE {name} CHARACTER SET utf8mb4", "DROP DATABASE IF EXISTS {name}"),
}


def _hammer(make_conn, network_id: str) -> list:
    def client(_):
        conn = make_conn()
        return [conn.network.create_port(network_id=network_id)
                for _ in range(PORTS // CLIENTS)]

    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        return [p for batch in pool.map(client, range(CLIENTS)) for p in batch]


def _check(conn, data_dir: str, network_id: str, subnet_id: str, ports: list) -> None:
    addresses = [p.fixed_ips[0]["ip_address"] for p in ports]
    assert len(ports) == PORTS and len(set(addresses)) == PORTS
    assert all(ipaddress.ip_address(a) in ipaddress.ip_network("10.20.0.0/24")
               for a in addresses)
    listed = {p.id: p.fixed_ips[0]["ip_address"]
              for p in conn.network.ports(network_id=network_id, device_owner="")}
    assert listed == {p.id: a for p, a in zip(ports, addresses)}  # none lost, none changed
    dhcp_port = next(iter(conn.network.ports(network_id=network_id,
                                             device_owner="network:dhcp")))
    expected = {(p.mac_address, p.fixed_ips[0]["ip_address"]) for p in ports + [dhcp_port]}
    lines = _dhcp_lines(data_dir, network_id, "host", PORTS + 1)
    assert len(lines) == PORTS + 1
    assert {(line.split(",")[0], line.split(",")[2]) for line in lines} == expected
    assert len(_dhcp_lines(data_dir, network_id, "leases", PORTS + 1)) == PORTS + 1


def _dhcp_lines(data_dir: str, network_id: str, name: str, wanted: int) -> list[str]:
    """A DHCP file's lines once it has ``wanted`` of them (the files are written one after
    the other in the background, a few milliseconds after the API answers), or what it
    has after 10 s."""
    path = os.path.join(data_dir, "network", "dhcp", network_id, name)
    deadline = time.monotonic() + 10
    while True:
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            lines = []
        if len(lines) == wanted or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def _network(conn):
    network = conn.network.create_network(name=unique("busy"))
    subnet = conn.network.create_subnet(network_id=network.id, ip_version=4,
                                        cidr="10.20.0.0/24")  # a /24: 253 free addresses
    return network, subnet


def test_concurrent_ports_on_sqlite(cloud, member):
    conn = cloud.user_sdk(member)
    network, subnet = _network(conn)
    ports = _hammer(lambda: cloud.user_sdk(member), network.id)
    _check(conn, cloud.data_dir, network.id, subnet.id, ports)
    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(lambda p: cloud.user_sdk(member).network.delete_port(p), ports))
    assert len(_dhcp_lines(cloud.data_dir, network.id, "host", 1)) == 1  # only the DHCP port left


@pytest.fixture(scope="module", params=sorted(SERVERS))
def server_cloud(request):
    port, admin_url, url, create, drop = SERVERS[request.param]
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError as error:
        pytest.skip(f"{request.param} is not listening on 127.0.0.1:{port} ({error})")
    name = f"pocketstack_net_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.exec_driver_sql(create.format(name=name))
    tmp = tempfile.mkdtemp(prefix=f"pocketstack-net-{request.param}-")
    conf = (f"[identity]\npassword_hash_rounds = 4\n"
            f"[database]\nconnection = {url.format(name=name)}\n")
    up = UpProcess(os.path.join(tmp, "data"), conf=conf, args=("--admin-password", "pw"))
    try:
        up.start()
        yield up
    finally:
        up.stop()
        with admin.connect() as c:
            c.exec_driver_sql(drop.format(name=name))
        admin.dispose()
        shutil.rmtree(tmp, ignore_errors=True)


def test_concurrent_ports_on_database_servers(server_cloud):
    conn = server_cloud.sdk()
    network, subnet = _network(conn)
    ports = _hammer(server_cloud.sdk, network.id)
    _check(conn, server_cloud.data_dir, network.id, subnet.id, ports)
    assert "Traceback" not in server_cloud.output()


def _first_use_race(conn_factory) -> None:
    """Eight clients create the first ports of a new project at once: one `default`
    security group comes out, and every port uses it."""
    conn = conn_factory()
    network = conn.network.create_network(name=unique("shared-busy"), is_shared=True)
    conn.network.create_subnet(network_id=network.id, ip_version=4, cidr="10.30.0.0/24")
    project = uuid.uuid4().hex

    def client(_):
        c = conn_factory()
        return [c.network.create_port(network_id=network.id, project_id=project)
                for _ in range(3)]

    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        ports = [p for batch in pool.map(client, range(CLIENTS)) for p in batch]
    groups = list(conn.network.security_groups(project_id=project))
    assert [g.name for g in groups] == ["default"]
    assert {tuple(p.security_group_ids) for p in ports} == {(groups[0].id,)}


def test_default_group_first_use_race_on_sqlite(cloud):
    _first_use_race(cloud.sdk)


def test_default_group_first_use_race_on_database_servers(server_cloud):
    _first_use_race(server_cloud.sdk)
    assert "Traceback" not in server_cloud.output()


def _racing_deletes(conn_factory) -> None:
    """Eight clients delete the same ports at once: each port is deleted once (204) and
    every other attempt is a 404, never a 500."""
    conn = conn_factory()
    network = conn.network.create_network(name=unique("deletes"))
    conn.network.create_subnet(network_id=network.id, ip_version=4, cidr="10.40.0.0/24")
    ports = [conn.network.create_port(network_id=network.id) for _ in range(10)]

    def client(_):
        session = conn_factory().session
        return [session.delete(f"/v2.0/ports/{p.id}", raise_exc=False,
                               endpoint_filter={"service_type": "network"}).status_code
                for p in ports]

    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        codes = [c for batch in pool.map(client, range(CLIENTS)) for c in batch]
    assert codes.count(204) == len(ports)
    assert set(codes) == {204, 404}
    conn.network.delete_network(network)


def test_racing_deletes_on_sqlite(cloud):
    _racing_deletes(cloud.sdk)


def test_racing_deletes_on_database_servers(server_cloud):
    _racing_deletes(server_cloud.sdk)
    assert "Traceback" not in server_cloud.output()


def test_concurrent_updates_of_one_port_lose_none(cloud, member):
    """Eight clients rename one port at once (plain updates: read, then a compare-and-swap
    write): every update is answered with its own revision and none is lost. A delete
    racing more of them leaves 404s behind it, never a 500."""
    from openstack import exceptions as sdk_exc

    conns = [cloud.user_sdk(member) for _ in range(CLIENTS)]
    network, _ = _network(conns[0])
    port = conns[0].network.create_port(network_id=network.id)

    def rename(index):
        conn = conns[index]
        return [conn.network.update_port(port.id, name=f"n{index}-{i}") for i in range(5)]

    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        updated = [p for batch in pool.map(rename, range(CLIENTS)) for p in batch]
    revisions = sorted(p.revision_number for p in updated)
    assert revisions == list(range(port.revision_number + 1,
                                   port.revision_number + 1 + 5 * CLIENTS))
    final = conns[0].network.get_port(port.id)
    last = max(updated, key=lambda p: p.revision_number)
    assert (final.name, final.revision_number) == (last.name, last.revision_number)

    def rename_or_gone(index):
        try:
            return conns[index].network.update_port(port.id, name=f"late{index}").name
        except sdk_exc.NotFoundException:
            return None

    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        pending = [pool.submit(rename_or_gone, i) for i in range(1, CLIENTS)]
        conns[0].network.delete_port(port.id)
        outcomes = [f.result() for f in pending]  # a 500 would raise here
    assert all(name is None or name.startswith("late") for name in outcomes)
    assert conns[0].network.find_port(port.id) is None
