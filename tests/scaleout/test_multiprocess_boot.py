"""The whole boot with api, conductor, scheduler and two computes as separate processes over
the real RabbitMQ and PostgreSQL: servers ACTIVE on each host through
openstacksdk, deleted without leaking ports or claims, by computes that hold no database
(their config has none; they ask the conductor); a compute killed with SIGKILL in
the middle of a build leads, after the build deadline, to a reschedule (never BUILD
forever) and shows as down in os-services; every process stops cleanly on SIGTERM.

The tests share one set of processes (module fixture ``scaleout``) and run in file order.
"""
from __future__ import annotations

import signal
import time
import uuid

import sqlalchemy as sa

from pocketstack.common.image_formats import qcow2_header

ADMIN_MV = {"OpenStack-API-Version": "compute 2.79"}


def _image(conn) -> str:
    image = conn.image.create_image(name=f"cirros-{uuid.uuid4().hex[:6]}", disk_format="qcow2",
                                    container_format="bare", visibility="public",
                                    data=qcow2_header(1 << 20))
    return image.id


def _network(conn) -> str:
    net = conn.network.create_network(name=f"private-{uuid.uuid4().hex[:6]}")
    conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.0.0.0/24")
    return net.id


def _leftovers(cloud, sess, network_id: str) -> dict:
    """Everything a server could leak: ports on the network, claims on the hosts."""
    ports = sess.get(cloud.url + "/network/v2.0/ports",
                     params={"network_id": network_id}).json()["ports"]
    hypervisors = sess.get(cloud.url + "/compute/v2.1/os-hypervisors/detail",
                           headers={"OpenStack-API-Version": "compute 2.1"}).json()
    with cloud.db().connect() as conn:
        allocations = conn.execute(sa.text(
            "SELECT count(DISTINCT consumer_id) FROM placement_allocations")).scalar()
    return {"ports": [p["id"] for p in ports if p["device_owner"].startswith("compute:")],
            "used": {h["hypervisor_hostname"]: (h["vcpus_used"], h["memory_mb_used"],
                                                h["running_vms"])
                     for h in hypervisors["hypervisors"] if h["vcpus_used"] or
                     h["memory_mb_used"] or h["running_vms"]},
            "allocations": allocations}


NOTHING = {"ports": [], "used": {}, "allocations": 0}


def _wait_gone(cloud, conn, server_ids, timeout=30.0):
    from openstack import exceptions

    def exists(sid):
        try:
            conn.compute.get_server(sid)
            return True
        except exceptions.NotFoundException:
            return False

    def gone():
        return not any(exists(sid) for sid in server_ids)

    cloud.wait_for(f"servers {server_ids} deleted", gone, timeout=timeout, interval=0.2)


def test_boot_on_both_hosts_over_rabbitmq_and_postgresql(scaleout):
    cloud = scaleout
    conn = cloud.sdk()
    sess = cloud.session()
    image_id, network_id = _image(conn), _network(conn)
    cloud.network_id = network_id
    flavor = conn.compute.find_flavor("m1.nano")
    # One server pinned to each host (admin's zone:host), two left to the scheduler.
    servers = [conn.compute.create_server(
        name=f"pinned-{host}", image_id=image_id, flavor_id=flavor.id,
        networks=[{"uuid": network_id}], availability_zone=f"nova:{host}")
        for host in cloud.hosts]
    servers += [conn.compute.create_server(
        name=f"free-{i}", image_id=image_id, flavor_id=flavor.id,
        networks=[{"uuid": network_id}]) for i in range(2)]
    active = [conn.compute.wait_for_server(s, status="ACTIVE", failures=["ERROR"], wait=40,
                                           interval=0.2) for s in servers]
    assert {s.compute_host for s in active[:2]} == set(cloud.hosts)
    assert all(s.compute_host in cloud.hosts for s in active)
    for s in active:
        assert s.addresses and list(s.addresses.values())[0][0]["addr"].startswith("10.0.0.")
    # network-vif-plugged crossed processes: network (api) → compute API → RabbitMQ → host
    for s in active:
        trace = sess.get(cloud.url + f"/pocketstack/v1/servers/{s.id}/trace").json()
        waited = [e for e in trace["events"] if e["step"] == "compute_wait_vif_plugged"]
        assert waited and waited[-1]["detail"] == "1/1 network-vif-plugged", trace
    assert _leftovers(cloud, sess, network_id)["allocations"] == len(servers)
    for s in active:
        conn.compute.delete_server(s)
    _wait_gone(cloud, conn, [s.id for s in active])
    cloud.wait_for("nothing left behind",
                   lambda: _leftovers(cloud, sess, network_id) == NOTHING, timeout=10)


def test_compute_hosts_hold_no_database(scaleout):
    """The computes booted and deleted the servers above with no database settings in
    their config, and hold no connection to PostgreSQL (the conductor, which does, has
    some): their state went through the conductor over RabbitMQ."""
    import psutil

    cloud = scaleout
    for host in cloud.hosts:
        with open(cloud.nodes[host].command[cloud.nodes[host].command.index(
                "--config-file") + 1]) as f:
            text = f.read()
        assert "[database]" not in text and "postgresql" not in text and \
            "database_access = conductor" in text
        # and its own identity user's password, which its calls' token proves its name with
        assert f"host_password = {cloud.host_passwords[host]}" in text

    def to_postgres(name):
        proc = psutil.Process(cloud.nodes[name].proc.pid)
        return [c for p in [proc, *proc.children(recursive=True)]
                for c in p.net_connections(kind="tcp") if c.raddr and c.raddr.port == 5432]

    assert to_postgres("conductor")
    for host in cloud.hosts:
        assert cloud.nodes[host].alive and not to_postgres(host), host


def test_a_host_stops_and_starts_its_server_through_the_conductor(scaleout):
    """The computes run with [compute] database_access = conductor: the end of a power
    action (states, events, the action's finish) is asked of the conductor over RabbitMQ,
    which checks that the server is on the asking host."""
    cloud = scaleout
    conn = cloud.sdk()
    sess = cloud.session()
    server = conn.compute.create_server(
        name="power", image_id=_image(conn), flavor_id=conn.compute.find_flavor("m1.nano").id,
        networks="none")
    server = conn.compute.wait_for_server(server, status="ACTIVE", failures=["ERROR"],
                                          wait=40, interval=0.2)
    conn.compute.stop_server(server)
    conn.compute.wait_for_server(server, status="SHUTOFF", failures=["ERROR"], wait=30,
                                 interval=0.2)
    conn.compute.start_server(server)
    conn.compute.wait_for_server(server, status="ACTIVE", failures=["ERROR"], wait=30,
                                 interval=0.2)
    trace = sess.get(cloud.url + f"/pocketstack/v1/servers/{server.id}/trace").json()
    done = [(e["step"], e["result"]) for e in trace["events"] if e["step"] in (
        "compute_power_off_instance", "compute_power_on_instance")]
    assert done == [("compute_power_off_instance", "Success"),
                    ("compute_power_on_instance", "Success")], trace
    conn.compute.delete_server(server)
    _wait_gone(cloud, conn, [server.id])


def test_compute_killed_mid_build_is_rescheduled_and_shown_down(scaleout):
    cloud = scaleout
    conn = cloud.sdk()
    sess = cloud.session()
    network_id = getattr(cloud, "network_id", None) or _network(conn)
    image_id = _image(conn)
    # The next spawn, wherever it lands, hangs: that host is then killed mid-build.
    r = sess.post(cloud.url + "/pocketstack/v1/faults",
                  json={"fault": {"operation": "spawn", "action": "hang", "times": 1,
                                  "hang_seconds": 600}})
    assert r.status_code == 201, r.text
    time.sleep(1.0)  # each process re-reads fault rules after 0.5 s (control/faults.py)
    flavor = conn.compute.find_flavor("m1.nano")
    server = conn.compute.create_server(name="doomed", image_id=image_id, flavor_id=flavor.id,
                                        networks=[{"uuid": network_id}])
    seen = []

    def spawning():
        s = conn.compute.get_server(server.id)
        seen.append((s.status, s.task_state, s.compute_host))
        return s if s.task_state == "spawning" else None

    try:
        s = cloud.wait_for("the build to hang in spawning", spawning, timeout=30,
                           interval=0.1)
    except AssertionError as error:
        trace = sess.get(cloud.url + f"/pocketstack/v1/servers/{server.id}/trace").json()
        faults = sess.get(cloud.url + "/pocketstack/v1/faults").json()
        raise AssertionError(f"states seen: {sorted(set(seen), key=seen.index)}\n"
                             f"faults: {faults}\ntrace: {trace}\n{error}") from None
    victim = s.compute_host
    survivor = next(h for h in cloud.hosts if h != victim)
    node = cloud.nodes[victim]
    node.expected_exit = True
    killed_at = time.monotonic()
    node.signal(signal.SIGKILL)
    assert node.wait(10) == -signal.SIGKILL
    try:
        # Never BUILD forever: after build_timeout the conductor cleans up the attempt and
        # reschedules to the other host, where the build completes.
        def settled():
            s = conn.compute.get_server(server.id)
            return s if s.status != "BUILD" else None

        s = cloud.wait_for("the server to leave BUILD", settled,
                           timeout=cloud.timings["build_timeout"] + 25, interval=0.2)
        took = time.monotonic() - killed_at
        if s.status != "ACTIVE":
            trace = sess.get(cloud.url + f"/pocketstack/v1/servers/{server.id}/trace").json()
            failed = [(e["step"], e.get("host"), e.get("detail")) for e in trace["events"]
                      if e.get("result") == "Error"]
            raise AssertionError(f"{s.status}: {s.fault}\nfailed steps: {failed}")
        assert s.compute_host == survivor
        assert took < cloud.timings["build_timeout"] + 20
        trace = sess.get(cloud.url + f"/pocketstack/v1/servers/{server.id}/trace").json()
        steps = [e["step"] for e in trace["events"]]
        assert "conductor_build_timeout" in steps and "conductor_reschedule" in steps, steps
        # The dead host's heartbeats stopped: os-services says down, the survivor stays up.
        def victim_down():
            services = cloud.services(sess)
            return (services[("nova-compute", victim)]["state"] == "down"
                    and services[("nova-compute", survivor)]["state"] == "up")

        cloud.wait_for(f"{victim} down in os-services", victim_down,
                       timeout=cloud.timings["service_down_time"] + 10, interval=0.2)
        # On start-up a compute recovers what it owns and reports up again (checked below).
        node.expected_exit = False
        node.spawn()
        # Only the rescheduled attempt's port and claim exist; deleting leaves nothing.
        left = _leftovers(cloud, sess, network_id)
        assert len(left["ports"]) == 1 and left["allocations"] == 1, left
        conn.compute.delete_server(s)
        _wait_gone(cloud, conn, [s.id])
        cloud.wait_for("nothing left behind",
                       lambda: _leftovers(cloud, sess, network_id) == NOTHING, timeout=10)

        cloud.wait_for(f"{victim} up again", lambda: cloud.services(sess)[
            ("nova-compute", victim)]["state"] == "up", timeout=40, interval=0.2)

    finally:  # the module's later tests expect both hosts whatever happened here
        if not node.alive:
            node.expected_exit = False
            node.spawn()
        # up before anything signals it (a SIGTERM while it imports ends it with -15)
        cloud.wait_for(f"{victim} to start", lambda: "is up" in node.output(), timeout=60,
                       interval=0.2)


def test_every_process_stops_cleanly_on_sigterm(scaleout):
    cloud = scaleout
    nodes = list(cloud.nodes.values())
    started = time.monotonic()
    for node in nodes:
        node.expected_exit = True
        node.signal(signal.SIGTERM)
    took: dict[str, float] = {}
    while len(took) < len(nodes) and time.monotonic() - started < 30:
        for node in nodes:
            if node.name not in took and node.proc.poll() is not None:
                took[node.name] = round(time.monotonic() - started, 1)
        time.sleep(0.05)
    print(f"seconds from SIGTERM to exit: {took}")
    codes = {node.name: node.proc.poll() for node in nodes}
    assert codes == {node.name: 0 for node in nodes}, (took, cloud.logs())
    for node in nodes:
        out = node.output()
        assert "stopped." in out, out
        assert "Traceback" not in out, out
