"""Issue 9's boot figure: POST /servers until the tiny guest's console shows its DHCP
address, next to `virsh create` of the same domain XML plus the same DHCP wait, on the
same host in the same run. The difference is the control plane's overhead.

    sudo .venv/bin/python bench/libvirt_boot.py [--runs 3] [--record]

Starts an in-process cloud with compute_driver = libvirt on a temporary data dir (port
chosen by the OS, 127.0.0.1 only), registers the tiny guest, makes a /26 network, then:

* cloud: ``--runs`` times POST /servers (openstacksdk), poll the console-log API every
  50 ms until "leased", DELETE the server;
* reference: a server booted and stopped through the API keeps its port, DHCP entry and
  XML; ``--runs`` times: a fresh qcow2 overlay on the cached base, `virsh create` of that
  XML (name and uuid changed, same MAC, tap and bridge), poll the console file every 50 ms
  until "leased", `virsh destroy`.

Prints medians with the load average; ``--record`` appends them to
bench/results/libvirt.md. Every loop is bounded in count and time. Needs root and what
`make libvirt` installs.
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
LEASED = re.compile(r"pocketstack-tiny: eth0 leased (\S+)")
TIMEOUT = 180.0


def wait_leased(read, timeout: float = TIMEOUT) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if LEASED.search(read() or ""):
            return time.monotonic()
        time.sleep(0.05)
    raise SystemExit(f"no DHCP lease on the console within {timeout:g}s")


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


def cloud_boot(conn, image, net) -> float:
    t0 = time.monotonic()
    server = conn.compute.create_server(name="bench", image_id=image.id, flavor_id="42",
                                        networks=[{"uuid": net.id}])
    t1 = wait_leased(lambda: _console(conn, server.id))
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, interval=0.1, wait=120)
    return t1 - t0


def _console(conn, server_id) -> str:
    try:
        return conn.compute.get_server_console_output(server_id)["output"]
    except Exception:  # noqa: BLE001 - not spawned yet
        return ""


def virsh_boot(xml_template: str, base: str, work: str) -> float:
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

    def read():
        try:
            with open(log) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    t0 = time.monotonic()
    subprocess.run(["virsh", "-q", "-c", "qemu:///system", "create", path], check=True,
                   capture_output=True)
    try:
        return wait_leased(read) - t0
    finally:
        subprocess.run(["virsh", "-q", "-c", "qemu:///system", "destroy", name],
                       capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="lvt-bench-")
    cloud = start_cloud(data_dir)
    conn = sdk(cloud)
    net = sub = None
    try:
        image = register_tiny(conn, data_dir)
        net = conn.network.create_network(name="bench-net")
        sub = conn.network.create_subnet(network_id=net.id, ip_version=4,
                                         cidr="10.79.0.0/26")
        cloud_boot(conn, image, net)  # warm-up: image cache, bridge, namespace
        cloud_times = [cloud_boot(conn, image, net) for _ in range(args.runs)]

        ref = conn.compute.create_server(name="bench-ref", image_id=image.id,
                                         flavor_id="42", networks=[{"uuid": net.id}])
        ref = conn.compute.wait_for_server(ref, interval=0.1, wait=TIMEOUT)
        conn.compute.stop_server(ref)
        conn.compute.wait_for_server(ref, status="SHUTOFF", interval=0.1, wait=120)
        driver_dir = os.path.join(data_dir, "compute")
        xml_path = next(os.path.join(root, "libvirt.xml") for root, _, files
                        in os.walk(driver_dir) if "libvirt.xml" in files)
        with open(xml_path) as f:
            xml = f.read()
        base = os.path.join(os.path.dirname(os.path.dirname(xml_path)), "_base", image.id)
        virsh_times = [virsh_boot(xml, base, data_dir) for _ in range(args.runs)]
        conn.compute.delete_server(ref)
        conn.compute.wait_for_delete(ref, interval=0.1, wait=120)
    finally:
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
    lines = [
        f"## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {platform.node()} "
        f"({os.cpu_count()} cores), load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        "",
        f"- POST /servers -> console shows the DHCP lease: median "
        f"{statistics.median(cloud_times):.2f} s ({', '.join(f'{t:.2f}' for t in cloud_times)})",
        f"- virsh create of the same XML -> same lease: median "
        f"{statistics.median(virsh_times):.2f} s ({', '.join(f'{t:.2f}' for t in virsh_times)})",
        f"- control-plane overhead (difference of medians): "
        f"{statistics.median(cloud_times) - statistics.median(virsh_times):.2f} s",
        "",
    ]
    print("\n".join(lines))
    if args.record:
        with open(os.path.join(HERE, "results", "libvirt.md"), "a") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
