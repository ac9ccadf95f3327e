"""`pocketstack demo`: the README's demo setup on a running cloud, idempotently (seed 000's
setup).

Talks to the cloud over HTTP with the `pocketstack` entry of <data dir>/clouds.yaml, as a
user would with the openstack CLI: makes sure the `private` network (10.0.0.0/26 and the
SLAAC subnet fd3c:90a1:3f1f::/64), the image `cirros-0.3.4-x86_64-disk`, a keypair and
ICMP/SSH rules in the default security group exist, boots `instance_hrp2` (m1.nano) if
it is absent, waits for ACTIVE and prints the server list (seed 000's shape) and the boot
waterfall. A second run finds everything and creates nothing.
"""
from __future__ import annotations

import os
import sys
import time

import click

NETWORK = "private"
V4_SUBNET = ("private-subnet", "10.0.0.0/26")
V6_SUBNET = ("ipv6-private-subnet", "fd3c:90a1:3f1f::/64")
IMAGE = "cirros-0.3.4-x86_64-disk"
FLAVOR = "m1.nano"
KEYPAIR = "demo-key"
SERVER = "instance_hrp2"
# cirros 0.3.4's virtual size: the image boots on m1.nano's 1 GB root disk.
IMAGE_VIRTUAL_SIZE = 41126400


class DemoError(click.ClickException):
    pass


def demo_image() -> bytes:
    """A valid qcow2 of an empty disk with cirros's virtual size (256 KiB): the simulated
    hosts boot it, and qemu-img converts it (`openstack volume create --image`)."""
    from pocketstack.common.image_formats import qcow2_image

    return qcow2_image(IMAGE_VIRTUAL_SIZE)


def save_image(path: str) -> None:
    """<data dir>/cirros.img, owner-only like every other file of the data dir. Written
    when missing or when it is the header-only 64 KiB file older demos left, which
    qemu-img refuses ("Image does not contain a reference count table")."""
    if not os.path.exists(path) or os.path.getsize(path) == 65536:
        fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(demo_image())
        os.replace(path + ".tmp", path)
    os.chmod(path, 0o600)


class Cloud:
    """Thin REST access with one keystoneauth1 session; every error becomes a DemoError
    naming the request, never a traceback."""

    def __init__(self, session, out):
        self.s, self.out = session, out
        try:
            self.project_id = session.get_project_id()
            self.compute = session.get_endpoint(service_type="compute", interface="public")
            self.network = session.get_endpoint(service_type="network", interface="public")
            self.image = session.get_endpoint(service_type="image", interface="public")
        except Exception as error:  # noqa: BLE001 - connection refused, bad password, …
            raise DemoError(f"cannot authenticate to the cloud ({type(error).__name__}: "
                            f"{error}). Is `pocketstack up` running with this data dir?") \
                from None
        self.network = self.network.rstrip("/") + ("" if self.network.rstrip("/").endswith(
            "v2.0") else "/v2.0")
        self.image = self.image.rstrip("/") + ("" if self.image.rstrip("/").endswith("v2")
                                               else "/v2")
        self.root = self.compute.split("/compute")[0]
        self.created: list[str] = []
        self.existing: list[str] = []

    def call(self, method, url, ok=(200,), **kw):
        headers = dict(kw.pop("headers", {}) or {})
        if url.startswith(self.compute):
            headers.setdefault("OpenStack-API-Version", "compute 2.79")
        try:
            r = self.s.request(url, method, raise_exc=False, headers=headers, **kw)
        except Exception as error:  # noqa: BLE001
            raise DemoError(f"{method} {url} failed: {error}") from None
        if r.status_code not in ok:
            raise DemoError(f"{method} {url} answered {r.status_code}: {r.text[:300]}")
        return r

    def note(self, what: str, created: bool) -> None:
        (self.created if created else self.existing).append(what)
        self.out(f"  {'created' if created else 'exists '}  {what}")


def _network(c: Cloud) -> dict:
    nets = c.call("GET", f"{c.network}/networks",
                  params={"name": NETWORK, "project_id": c.project_id}).json()["networks"]
    if nets:
        net = nets[0]
        c.note(f"network {NETWORK} ({net['id']})", False)
    else:
        net = c.call("POST", f"{c.network}/networks", ok=(201,),
                     json={"network": {"name": NETWORK}}).json()["network"]
        c.note(f"network {NETWORK} ({net['id']})", True)
    subnets = c.call("GET", f"{c.network}/subnets",
                     params={"network_id": net["id"]}).json()["subnets"]
    have = {s["cidr"] for s in subnets}
    for (name, cidr), extra in ((V4_SUBNET, {"ip_version": 4}),
                                (V6_SUBNET, {"ip_version": 6, "ipv6_address_mode": "slaac",
                                             "ipv6_ra_mode": "slaac"})):
        if cidr in have:
            c.note(f"subnet {name} {cidr}", False)
            continue
        c.call("POST", f"{c.network}/subnets", ok=(201,),
               json={"subnet": dict(extra, name=name, network_id=net["id"], cidr=cidr)})
        c.note(f"subnet {name} {cidr}", True)
    return net


def _image(c: Cloud) -> dict:
    images = c.call("GET", f"{c.image}/images", params={"name": IMAGE}).json()["images"]
    active = [i for i in images if i["status"] == "active"]
    if active:
        c.note(f"image {IMAGE} ({active[0]['id']})", False)
        return active[0]
    # One left queued by an interrupted run of ours gets its data; otherwise create it.
    queued = [i for i in images if i["status"] == "queued" and i.get("owner") == c.project_id]
    image = queued[0] if queued else c.call(
        "POST", f"{c.image}/images", ok=(201,),
        json={"name": IMAGE, "disk_format": "qcow2", "container_format": "bare",
              "visibility": "public"}).json()
    c.call("PUT", f"{c.image}/images/{image['id']}/file", ok=(204,), data=demo_image(),
           headers={"Content-Type": "application/octet-stream"})
    c.note(f"image {IMAGE} ({image['id']})", True)
    return image


def _keypair(c: Cloud, data_dir: str) -> None:
    r = c.call("GET", f"{c.compute}/os-keypairs/{KEYPAIR}", ok=(200, 404))
    if r.status_code == 200:
        c.note(f"keypair {KEYPAIR}", False)
        return
    key = c.call("POST", f"{c.compute}/os-keypairs", ok=(200, 201),
                 json={"keypair": {"name": KEYPAIR}}).json()["keypair"]
    path = os.path.join(data_dir, f"{KEYPAIR}.pem")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key["private_key"])
    c.note(f"keypair {KEYPAIR} (private key in {path})", True)


def _security_rules(c: Cloud) -> None:
    groups = c.call("GET", f"{c.network}/security-groups",
                    params={"name": "default", "project_id": c.project_id}
                    ).json()["security_groups"]
    if not groups:
        raise DemoError("the project has no default security group")
    group = groups[0]
    wanted = [("icmp", None, "IPv4"), ("tcp", 22, "IPv4"),
              ("ipv6-icmp", None, "IPv6"), ("tcp", 22, "IPv6")]
    rules = c.call("GET", f"{c.network}/security-group-rules",
                   params={"security_group_id": group["id"]}).json()["security_group_rules"]
    for proto, port, ethertype in wanted:
        label = f"default group: ingress {proto}{f' {port}' if port else ''} {ethertype}"
        if any(r["direction"] == "ingress" and r["protocol"] == proto
               and r["ethertype"] == ethertype and r.get("port_range_min") == port
               for r in rules):
            c.note(label, False)
            continue
        body = {"security_group_id": group["id"], "direction": "ingress",
                "protocol": proto, "ethertype": ethertype}
        if port:
            body.update(port_range_min=port, port_range_max=port)
        c.call("POST", f"{c.network}/security-group-rules", ok=(201, 409),
               json={"security_group_rule": body})
        c.note(label, True)


def _server(c: Cloud, net: dict, image: dict, timeout: float) -> dict:
    servers = c.call("GET", f"{c.compute}/servers/detail",
                     params={"name": f"^{SERVER}$"}).json()["servers"]
    if servers:
        server = servers[0]
        c.note(f"server {SERVER} ({server['id']}, {server['status']})", False)
    else:
        body = {"server": {"name": SERVER, "imageRef": image["id"], "flavorRef": _flavor(c),
                           "networks": [{"uuid": net["id"]}], "key_name": KEYPAIR,
                           "security_groups": [{"name": "default"}]}}
        sid = c.call("POST", f"{c.compute}/servers", ok=(202,), json=body).json()["server"]["id"]
        c.note(f"server {SERVER} ({sid})", True)
        server = {"id": sid, "status": "BUILD"}
    deadline = time.monotonic() + timeout
    while server["status"] == "BUILD" or server.get("OS-EXT-STS:task_state"):
        if time.monotonic() > deadline:
            raise DemoError(f"server {SERVER} is still {server['status']} after {timeout:g}s")
        time.sleep(0.1)
        server = c.call("GET", f"{c.compute}/servers/{server['id']}").json()["server"]
    if server["status"] == "ERROR":
        fault = (server.get("fault") or {}).get("message", "no fault recorded")
        c.out(f"  server {SERVER} is in ERROR: {fault}")
    return server


def _flavor(c: Cloud) -> str:
    flavors = c.call("GET", f"{c.compute}/flavors").json()["flavors"]
    match = [f["id"] for f in flavors if f["name"] == FLAVOR]
    if not match:
        raise DemoError(f"flavor {FLAVOR} does not exist (pocketstack creates DevStack's "
                        "flavors on first start)")
    return match[0]


def networks_column(addresses: dict) -> str:
    """openstackclient's Networks column: `net=addr, addr; net2=…`."""
    return "; ".join(f"{name}={', '.join(a['addr'] for a in addrs)}"
                     for name, addrs in sorted(addresses.items()))


def _server_list(c: Cloud):
    from rich.table import Table

    servers = c.call("GET", f"{c.compute}/servers/detail").json()["servers"]
    images: dict[str, str] = {}
    table = Table(title="openstack server list")
    for col in ("ID", "Name", "Status", "Networks", "Image", "Flavor"):
        table.add_column(col)
    for s in servers:
        image = s.get("image") or {}
        name = ""
        if image:
            if image["id"] not in images:
                r = c.call("GET", f"{c.image}/images/{image['id']}", ok=(200, 404))
                images[image["id"]] = r.json().get("name", "") if r.status_code == 200 else ""
            name = images[image["id"]]
        table.add_row(s["id"], s["name"], s["status"], networks_column(s["addresses"]), name,
                      (s.get("flavor") or {}).get("original_name", ""))
    return table


def load_session(data_dir: str, cloud_name: str):
    """A keystoneauth1 session from <data dir>/clouds.yaml (the environment is untouched)."""
    from pocketstack.cli import clouds

    try:
        return clouds.session(cloud_name, data_dir, elsewhere=False)[0]
    except clouds.CloudConfigError as error:
        raise DemoError(error.message) from None


@click.command("demo")
@click.option("--data-dir", envvar="POCKETSTACK_HOME", default=None,
              help="State directory of the running cloud (as for `pocketstack up`).")
@click.option("--os-cloud", "cloud_name", default="pocketstack", show_default=True,
              help="clouds.yaml entry to use.")
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(1),
              help="Seconds to wait for the server to become ACTIVE.")
@click.option("--no-trace", is_flag=True, help="Do not print the boot waterfall.")
def demo(data_dir, cloud_name, timeout, no_trace):
    """Set up a demo network, image and keypair and boot a server on them (idempotent).

    Makes sure the `private` network (10.0.0.0/26 and an IPv6 SLAAC subnet), the image
    cirros-0.3.4-x86_64-disk (also saved as <data dir>/cirros.img for the README's
    by-hand steps), the keypair demo-key and SSH/ICMP rules exist, boots instance_hrp2
    (m1.nano) and shows its boot step by step."""
    from rich.console import Console

    import shutil

    from pocketstack.cli.trace import render_text
    from pocketstack.cloud import default_data_dir

    console = Console(width=max(Console().width, 160) if not sys.stdout.isatty() else None)
    data_dir = os.path.abspath(data_dir or default_data_dir())
    c = Cloud(load_session(data_dir, cloud_name), click.echo)
    click.echo(f"pocketstack demo on {c.root} (project {c.project_id}):")
    net = _network(c)
    image = _image(c)
    save_image(os.path.join(data_dir, "cirros.img"))  # what the README's by-hand steps upload
    _keypair(c, data_dir)
    _security_rules(c)
    server = _server(c, net, image, timeout)
    if not c.created:
        click.echo("Nothing to create: everything already existed.")
    else:
        click.echo(f"{len(c.created)} created" + (f", {len(c.existing)} already existed."
                                                  if c.existing else "."))
    console.print(_server_list(c))
    if not no_trace:
        r = c.call("GET", f"{c.root}/pocketstack/v1/servers/{server['id']}/trace")
        for line in render_text(r.json(), shutil.get_terminal_size((80, 24)).columns):
            click.echo(line)
    if server["status"] != "ACTIVE":
        raise DemoError(f"server {SERVER} is {server['status']}, not ACTIVE")
