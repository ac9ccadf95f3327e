"""Issue 9's boot figure: POST /servers until the tiny guest's console shows its DHCP
address, next to `virsh create` of the same domain XML plus the same DHCP wait, on the
same host in the same run. The difference is the control plane's overhead.

    sudo .venv/bin/python bench/libvirt_boot.py [--runs 3] [--record]

Starts an in-process cloud with compute_driver = libvirt on a temporary data dir (port
chosen by the OS, 127.0.0.1 only), registers the tiny guest, makes a /26 network, then:

* cloud: ``--runs`` times POST /servers (openstacksdk), poll the console-log API every
  250 ms until "leased", DELETE the server;
* reference: a server booted and stopped through the API keeps its port, DHCP entry and
  XML; ``--runs`` times: a fresh qcow2 overlay on the cached base, `virsh create` of that
  XML (name and uuid changed, same MAC, tap and bridge), poll the console file every
  250 ms until "leased", `virsh destroy` (ten at once: both sides poll every second).

Then ``--parallel`` (default 10) guests at once: that many POST /servers from as many
threads until every console shows its lease, next to as many `virsh create` in parallel of
the same guests' XML (the servers stopped, so their ports and DHCP entries stay).

Each cloud boot's trace rows (`/pocketstack/v1/servers/<id>/trace`) and the host-side
steps timed in this process (root disk, config drive, nftables, dnsmasq reload, domain
define/start/resume, the RUNNING wait) are printed as medians, to show where the
control plane's time goes.

Prints medians with the load average; ``--record`` appends them to
bench/results/libvirt.md. Every loop is bounded in count and time. Needs root and what
`make libvirt` installs.
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures
import functools
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
LEASED = re.compile(r"pocketstack-tiny: eth0 leased (\S+)")
TIMEOUT = 180.0
STEPS: dict[str, list[float]] = collections.defaultdict(list)  # host-side step -> seconds
_STEPS_LOCK = threading.Lock()
SPAWNED: dict[str, float] = {}  # server id -> when the driver's spawn returned (running)
STARTED: dict[str, list[float]] = collections.defaultdict(list)  # side -> s to running


def time_steps() -> None:
    """Wrap the host-side steps of a boot so each call's duration lands in STEPS (they are
    looked up through their modules at call time, so wrapping the attribute is enough)."""
    from pocketstack.compute.virt.libvirt import driver, host, imagecache
    from pocketstack.network.agent import agent, firewall, plumbing

    def wrap(owner, name, label):
        original = getattr(owner, name, None)
        if original is None:  # renamed since: say so rather than stop the bench
            print(f"(not timed: {owner.__name__}.{name} no longer exists)")
            return

        @functools.wraps(original)
        def timed(*args, **kwargs):
            t0 = time.monotonic()
            try:
                return original(*args, **kwargs)
            finally:
                what = label(*args) if callable(label) else label
                with _STEPS_LOCK:
                    STEPS[what].append(time.monotonic() - t0)
        setattr(owner, name, timed)

    spawn = driver.LibvirtDriver.spawn

    @functools.wraps(spawn)
    def spawn_and_note(self, instance, *args, **kwargs):
        result = spawn(self, instance, *args, **kwargs)
        SPAWNED[instance["uuid"]] = time.monotonic()  # the guest runs from here on
        return result
    driver.LibvirtDriver.spawn = spawn_and_note

    wrap(imagecache, "create_root_disk", "root disk (qemu-img)")
    wrap(driver, "build_config_drive", "config drive")
    wrap(driver.LibvirtDriver, "spawn", "driver spawn (all)")
    wrap(host.Host, "wait_for_state", "wait for RUNNING/SHUTOFF event")
    wrap(firewall, "apply", "nftables apply")
    wrap(plumbing, "reload", "dnsmasq reload (SIGHUP)")
    wrap(plumbing, "plug", "network plug (bridge, netns, dnsmasq)")
    class TimedLock:
        """The agent's lock, noting how long each acquisition waited."""
        def __init__(self, lock):
            self.lock = lock

        def acquire(self, blocking=True, timeout=-1):
            t0 = time.monotonic()
            got = self.lock.acquire(blocking, timeout)
            if got:
                with _STEPS_LOCK:
                    STEPS["agent lock: wait to acquire"].append(time.monotonic() - t0)
            return got

        def release(self):
            self.lock.release()

        def __enter__(self):
            self.acquire()
            return self

        def __exit__(self, *exc):
            self.release()

    init = agent.HostAgent.__init__

    def timed_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.lock = TimedLock(self.lock)
    agent.HostAgent.__init__ = timed_init

    wrap(agent.HostAgent, "_plug", "agent: plug check/plug")
    wrap(agent.HostAgent, "ensure", "agent ensure (port bind)")
    wrap(agent.HostAgent, "reconcile", "agent reconcile (background)")
    wrap(agent.HostAgent, "_firewall", "agent firewall (read, render, apply)")
    wrap(agent.HostAgent, "_firewall_pass", "agent firewall pass (RPC, render, apply)")
    wrap(plumbing, "intact", "agent: is the network still plumbed")
    wrap(driver.LibvirtDriver, "_call", lambda self, what, *rest: f"libvirt: {what}")


PARALLEL_TIMEOUT = 900.0  # ten software-emulated guests on two loaded cores


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.1f}] {message}",
          file=sys.stderr, flush=True)


# How often the console is read, the same on both sides. Each console-log API call costs
# the cloud's process CPU that the software-emulated guests need too: polled every 50 ms
# (ten guests: 200 calls/s) the cloud side measured its own polling, not the boot.
POLL = {"single": 0.25, "parallel": 1.0}


def wait_leased(read, timeout: float = TIMEOUT, what: str = "guest",
                poll: float = POLL["single"]) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if LEASED.search(read() or ""):
            return time.monotonic()
        time.sleep(poll)
    tail = "\n".join((read() or "").splitlines()[-8:])
    raise SystemExit(f"{what}: no DHCP lease on the console within {timeout:g}s; "
                     f"its console ends:\n{tail}")


def start_cloud(data_dir: str):
    from pocketstack.cloud import Cloud

    cloud = Cloud(data_dir, admin_password="bench-secret",
                  overrides={"compute_driver": "libvirt",
                             "libvirt.host_name": f"lvt-bench-{uuid.uuid4().hex[:4]}",
                             "identity.password_hash_rounds": 4})
    cloud.start(port=0)
    return cloud


def sdk(cloud):
    import openstack
    from keystoneauth1 import session
    from keystoneauth1.identity import v3

    auth = v3.Password(auth_url=cloud.auth_url, username="admin", password="bench-secret",
                       project_name="admin", user_domain_id="default",
                       project_domain_id="default")
    return openstack.connection.Connection(session=session.Session(auth=auth),
                                           region_name="RegionOne")


def register_tiny(conn, work: str):
    from pocketstack.cli import tiny_image

    paths = tiny_image.build(work)
    kernel = conn.image.create_image(name="bench-kernel", disk_format="aki",
                                     container_format="aki", filename=paths["kernel"])
    ramdisk = conn.image.create_image(name="bench-ramdisk", disk_format="ari",
                                      container_format="ari", filename=paths["ramdisk"])
    return conn.image.create_image(
        name="bench-tiny", disk_format="ami", container_format="ami",
        filename=paths["machine"], kernel_id=kernel.id, ramdisk_id=ramdisk.id,
        os_command_line=tiny_image.COMMAND_LINE, hypervisor_type="qemu")


TRACE: dict[str, list[float]] = collections.defaultdict(list)  # trace step -> ms


def cloud_boot(conn, image, net, keep_trace: bool = True) -> float:
    t0 = time.monotonic()
    server = conn.compute.create_server(name="bench", image_id=image.id, flavor_id="42",
                                        networks=[{"uuid": net.id}])
    t1 = wait_leased(lambda: _console(conn, server.id), what=f"server {server.id}")
    if keep_trace:
        record_trace(server.id, t1 - t0)
        STARTED["cloud"].append(SPAWNED[server.id] - t0)
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, interval=0.1, wait=120)
    return t1 - t0


PAR_TRACE: dict[str, list[float]] = collections.defaultdict(list)


def record_trace(server_id: str, total: float, table=TRACE) -> None:
    """The server's build steps (nova's action events) in ms, and what is left of the
    boot after the spawn step ended: the guest's own boot to its DHCP lease."""
    from pocketstack.common.context import RequestContext
    from pocketstack.control import traces

    events = traces.by_server(RequestContext.admin(), server_id)["events"]
    for e in events:
        table[e["step"]].append(e["duration_ms"])
    spawn = [e for e in events if e["step"] == "compute_spawn"]
    if spawn:
        end = spawn[0]["offset_ms"] + spawn[0]["duration_ms"]
        table["(after spawn: guest boot to its lease)"].append(total * 1000 - end)
        table["(POST -> spawn done, trace clock)"].append(end)


def parallel_cloud_boot(conn, image, net, count: int) -> tuple[float, list]:
    """``count`` POST /servers at once; seconds until every console shows a lease."""
    t0 = time.monotonic()

    def one(i):
        server = conn.compute.create_server(name=f"bench-par-{i}", image_id=image.id,
                                            flavor_id="42", networks=[{"uuid": net.id}])
        record_trace(server.id, wait_leased(lambda: _console(conn, server.id),
                                            PARALLEL_TIMEOUT, f"server {server.id}",
                                            POLL["parallel"]) - t0,
                     PAR_TRACE)
        return server

    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        servers = list(pool.map(one, range(count)))
    return time.monotonic() - t0, servers


def _console(conn, server_id) -> str:
    try:
        return conn.compute.get_server_console_output(server_id)["output"]
    except Exception:  # noqa: BLE001 - not spawned yet
        return ""


def virsh_boot(xml_template: str, base: str, work: str) -> float:
    return virsh_boots([xml_template], base, work)


def virsh_boots(xml_templates: list[str], base: str, work: str) -> float:
    """`virsh create` of each XML at once (fresh overlays, new names and uuids); seconds
    until every console file shows its lease."""
    guests = [_virsh_guest(xml, base, work) for xml in xml_templates]
    timeout = TIMEOUT if len(guests) == 1 else PARALLEL_TIMEOUT
    t0 = time.monotonic()

    def one(guest):
        path, log, name = guest
        subprocess.run(["virsh", "-q", "-c", "qemu:///system", "create", path], check=True,
                       capture_output=True)
        if len(guests) == 1:
            STARTED["virsh"].append(time.monotonic() - t0)
        wait_leased(lambda: _read(log), timeout, f"virsh domain {name}",
                    POLL["single" if len(guests) == 1 else "parallel"])

    try:
        with concurrent.futures.ThreadPoolExecutor(len(guests)) as pool:
            list(pool.map(one, guests))
        return time.monotonic() - t0
    finally:
        for _, _, name in guests:
            subprocess.run(["virsh", "-q", "-c", "qemu:///system", "destroy", name],
                           capture_output=True)


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def _virsh_guest(xml_template: str, base: str, work: str) -> tuple[str, str, str]:
    name = f"lvt-bench-{uuid.uuid4().hex[:6]}"
    disk = os.path.join(work, f"{name}.qcow2")
    log = os.path.join(work, f"{name}.log")
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", base,
                    disk], check=True)
    xml = re.sub(r"<name>[^<]*</name>", f"<name>{name}</name>", xml_template)
    xml = re.sub(r"<uuid>[^<]*</uuid>", f"<uuid>{uuid.uuid4()}</uuid>", xml)
    xml = re.sub(r'<source file="[^"]*/disk" />', f'<source file="{disk}" />', xml)
    xml = re.sub(r'path="[^"]*console.log"', f'path="{log}"', xml)
    path = os.path.join(work, f"{name}.xml")
    with open(path, "w") as f:
        f.write(xml)
    return path, log, name


def _xml_and_base(data_dir: str, image_id: str, server_id: str) -> tuple[str, str]:
    """A stopped server's domain XML as the driver wrote it, and the cached base image."""
    driver_dir = os.path.join(data_dir, "compute")
    xml_path = next(os.path.join(root, "libvirt.xml") for root, _, files
                    in os.walk(driver_dir)
                    if "libvirt.xml" in files and os.path.basename(root) == server_id)
    with open(xml_path) as f:
        xml = f.read()
    return xml, os.path.join(os.path.dirname(os.path.dirname(xml_path)), "_base", image_id)


def _stop_all(conn, servers) -> None:
    for server in servers:
        conn.compute.stop_server(server)
    for server in servers:
        conn.compute.wait_for_server(server, status="SHUTOFF", interval=0.1, wait=120)


def _delete_all(conn, servers) -> None:
    for server in servers:
        conn.compute.delete_server(server, ignore_missing=True)
    for server in servers:
        conn.compute.wait_for_delete(server, interval=0.1, wait=120)


def _medians(table: dict[str, list[float]], unit: str, scale: float = 1.0) -> list[str]:
    return [f"  - {name}: median {statistics.median(v) * scale:.0f} {unit} over {len(v)} "
            f"(max {max(v) * scale:.0f})" for name, v in sorted(table.items()) if v]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--parallel", type=int, default=10,
                        help="guests booted at once (0: skip)")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    if not 1 <= args.runs <= 20 or not 0 <= args.parallel <= 10:
        parser.error("--runs 1-20, --parallel 0-10 (the default instance quota is 10)")
    time_steps()
    data_dir = tempfile.mkdtemp(prefix="lvt-bench-")
    cloud = start_cloud(data_dir)
    conn = sdk(cloud)
    net = None
    loads = [os.getloadavg()[0]]
    par_cloud = par_virsh = None
    par_steps: dict[str, list[float]] = {}
    try:
        image = register_tiny(conn, data_dir)
        net = conn.network.create_network(name="bench-net")
        conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.79.0.0/26")
        cloud_boot(conn, image, net, keep_trace=False)  # warm-up: cache, bridge, netns
        progress("warm-up boot done")

        ref = conn.compute.create_server(name="bench-ref", image_id=image.id,
                                         flavor_id="42", networks=[{"uuid": net.id}])
        ref = conn.compute.wait_for_server(ref, interval=0.1, wait=TIMEOUT)
        _stop_all(conn, [ref])
        xml, base = _xml_and_base(data_dir, image.id, ref.id)
        STEPS.clear()
        # alternate, so a change in the machine's load hits both sides alike
        cloud_times, virsh_times = [], []
        for _ in range(args.runs):
            cloud_times.append(cloud_boot(conn, image, net))
            virsh_times.append(virsh_boot(xml, base, data_dir))
            loads.append(os.getloadavg()[0])
            progress(f"pair: cloud {cloud_times[-1]:.2f} s, virsh {virsh_times[-1]:.2f} s")
        single_steps = {k: list(v) for k, v in STEPS.items()}
        _delete_all(conn, [ref])

        if args.parallel:
            STEPS.clear()
            par_cloud, servers = parallel_cloud_boot(conn, image, net, args.parallel)
            par_steps = {k: list(v) for k, v in STEPS.items()}
            progress(f"{args.parallel} cloud boots at once: {par_cloud:.2f} s")
            loads.append(os.getloadavg()[0])
            _stop_all(conn, servers)
            xmls = [_xml_and_base(data_dir, image.id, s.id)[0] for s in servers]
            par_virsh = virsh_boots(xmls, base, data_dir)
            progress(f"{args.parallel} virsh create at once: {par_virsh:.2f} s")
            loads.append(os.getloadavg()[0])
            _delete_all(conn, servers)
    finally:
        try:  # whatever a failed run left: its guests are real QEMU processes
            _delete_all(conn, list(conn.compute.servers()))
        except Exception as error:  # noqa: BLE001 - the network and cloud still go
            print(f"cleanup: {error}", file=sys.stderr)
        if net is not None:
            for port in conn.network.ports(network_id=net.id, device_owner="compute:nova"):
                conn.network.delete_port(port)
            conn.network.delete_network(net)
            bridge = f"/sys/class/net/brq{net.id[:11]}"
            deadline = time.monotonic() + 30  # the agent removes the bridge on its own
            while os.path.exists(bridge) and time.monotonic() < deadline:
                time.sleep(0.1)
        cloud.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    load = os.getloadavg()
    cloud_med, virsh_med = statistics.median(cloud_times), statistics.median(virsh_times)
    pairs = [c - v for c, v in zip(cloud_times, virsh_times)]
    lines = [
        f"## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {platform.node()} "
        f"({os.cpu_count()} cores), load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
        f"(1-min load during the runs: {', '.join(f'{x:.1f}' for x in loads)})",
        "",
        f"- POST /servers -> console shows the DHCP lease: median {cloud_med:.2f} s "
        f"({', '.join(f'{t:.2f}' for t in cloud_times)})",
        f"- virsh create of the same XML -> same lease: median {virsh_med:.2f} s "
        f"({', '.join(f'{t:.2f}' for t in virsh_times)})",
        f"- control-plane overhead: difference of medians {cloud_med - virsh_med:.2f} s; "
        f"per alternated pair {', '.join(f'{d:.2f}' for d in pairs)} (median "
        f"{statistics.median(pairs):.2f} s)",
        f"- until the guest runs (the part without the guest's own, noisy boot): POST "
        f"/servers -> driver spawn returned (QEMU running) median "
        f"{statistics.median(STARTED['cloud']):.2f} s; `virsh create` returned median "
        f"{statistics.median(STARTED['virsh']):.2f} s; difference "
        f"{statistics.median(STARTED['cloud']) - statistics.median(STARTED['virsh']):.2f} s",
        "- the cloud boots' trace rows (ms):", *_medians(TRACE, "ms"),
        "- host-side steps timed in the cloud's process (ms):",
        *_medians(single_steps, "ms", 1000),
    ]
    if par_cloud is not None:
        lines += [
            f"- {args.parallel} guests at once, POST /servers -> every console shows its "
            f"lease: {par_cloud:.2f} s",
            f"- {args.parallel} virsh create in parallel (the same guests' XML) -> every "
            f"lease: {par_virsh:.2f} s",
            f"- difference: {par_cloud - par_virsh:.2f} s",
            "- their trace rows (ms):", *_medians(PAR_TRACE, "ms"),
            f"- host-side steps during the {args.parallel} parallel boots (ms):",
            *_medians(par_steps, "ms", 1000),
        ]
    lines.append("")
    print("\n".join(lines))
    if args.record:
        with open(os.path.join(HERE, "results", "libvirt.md"), "a") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
