"""A lab of several hosts on one machine (`pocketstack lab`): its lifecycle (up, down,
status). The namespace plumbing it shares with the overlay tests is netns_hosts.py.

The layout is the one of several real machines (docs/multihost.md), each machine a
network namespace on a switch:

* the controller: `pocketstack up` on its own data dir (``<lab>/controller``), serving
  the APIs, the conductor and the scheduler, without simulated hosts; RPC over Unix
  sockets in the lab's dir (``unix://``: every process of the machine reaches them,
  whatever its network namespace);
* the network node ``network``: `pocketstack service network-agent` inside the namespace
  ``<prefix>-network`` (DHCP, metadata and routers: ``[network] dhcp_agent_host``), with
  the uplink of the external network (``extnet:uplink0``, a flat network, MTU 1500) to
  the namespace ``<prefix>-outside`` (the world beyond the routers, 203.0.113.1);
* compute hosts ``host1`` … ``hostN``: `pocketstack service network-agent` inside
  ``<prefix>-hostK`` and `pocketstack service compute --host hostK` beside it, on the
  machine's libvirtd with ``[libvirt] host_netns`` (or simulated, without libvirt);
* the switch: a bridge in ``<prefix>-switch``; each host has ``up0`` on it with its
  underlay address (10.99.0.0/24, private to the lab's namespaces): VXLAN between them.

Everything the lab makes on the machine carries its prefix (namespaces) or its dir
(processes, libvirt domains): ``Lab.down`` finds it all from there.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from pocketstack.netns_hosts import (kill, link_namespaces, make_switch, namespaces, plug_host,
                                     processes_under, remove_agent_leftovers, running, sh,
                                     spawn, stop)

UNDERLAY = "10.99.0.{}/24"
NETWORK_NODE = "network"
EXTNET, UPLINK = "extnet", "uplink0"
EXTERNAL_CIDR = "203.0.113.0/24"
PREFIX_PATTERN = re.compile(r"[a-z][a-z0-9]{0,7}\Z")
MAX_HOSTS = 32
TOOLS = ("ip", "bridge", "nft", "dnsmasq", "nsenter")
STATE_FILE = "lab.json"


class LabError(Exception):
    pass


# --- the lab ----------------------------------------------------------------------------

def default_dir() -> str:
    from pocketstack.cloud import default_data_dir

    return os.environ.get("POCKETSTACK_LAB") or default_data_dir().rstrip("/") + "-lab"


def missing_requirements() -> str | None:
    """Why this machine cannot hold a lab, or None."""
    if os.geteuid() != 0:
        return "the lab's hosts are network namespaces: run it as root"
    missing = [t for t in TOOLS if shutil.which(t) is None]
    return f"the lab needs {', '.join(missing)} (make libvirt installs them)" if missing \
        else None


def libvirt_missing() -> str | None:
    """Why the computes cannot run real guests here (they are simulated then), or None."""
    try:
        import libvirt
    except ImportError:
        return "libvirt-python is not installed (make libvirt)"
    for tool in ("qemu-system-x86_64", "qemu-img"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (make libvirt)"
    try:
        libvirt.open("qemu:///system").close()
    except libvirt.libvirtError as error:
        return f"libvirtd is not reachable at qemu:///system ({error}); make libvirt starts it"
    return None


class Lab:
    """The lab in ``directory``: ``<directory>/lab.json`` says what it made."""

    def __init__(self, directory: str):
        self.dir = os.path.abspath(directory)
        self.state: dict = {}
        try:
            with open(os.path.join(self.dir, STATE_FILE)) as f:
                self.state = json.load(f)
        except (OSError, ValueError):
            pass

    @property
    def controller_dir(self) -> str:
        return os.path.join(self.dir, "controller")

    @property
    def prefix(self) -> str:
        return self.state.get("prefix", "")

    @property
    def transport_url(self) -> str:
        return "unix://" + os.path.join(self.dir, "rpc")

    def hosts(self) -> list[dict]:
        """[{name, ns, address, role}] with the network node first."""
        return self.state.get("hosts", [])

    def host_dir(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def _save(self) -> None:
        path = os.path.join(self.dir, STATE_FILE)
        with open(path + ".tmp", "w") as f:
            json.dump(self.state, f, indent=1)
        os.replace(path + ".tmp", path)

    # --- up --------------------------------------------------------------------------

    def up(self, count: int, prefix: str, port: int, simulated: bool, timeout: float,
           echo=print) -> None:
        """Build the lab; on any failure remove what was made and raise LabError."""
        if not PREFIX_PATTERN.match(prefix):
            raise LabError(f"--prefix {prefix!r}: 1 to 8 lowercase letters and digits, "
                           "starting with a letter")
        if not 1 <= count <= MAX_HOSTS:
            raise LabError(f"--hosts: 1 to {MAX_HOSTS}")
        if self.state:
            raise LabError(f"a lab is already in {self.dir} (prefix {self.prefix}); "
                           "`pocketstack lab down` removes it")
        problem = missing_requirements()
        if problem:
            raise LabError(problem)
        taken = [ns for ns in namespaces() if ns.startswith(prefix + "-")]
        if taken:
            raise LabError(f"namespaces with the prefix {prefix}- exist already "
                           f"({', '.join(taken[:3])}): choose another --prefix")
        why_simulated = "asked for (--simulated)" if simulated else libvirt_missing()
        driver = "fake" if why_simulated else "libvirt"
        started = time.monotonic()
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        hosts = [{"name": NETWORK_NODE, "role": "network", "ns": f"{prefix}-{NETWORK_NODE}",
                  "address": UNDERLAY.format(1).split("/")[0]}]
        hosts += [{"name": f"host{i}", "role": "compute", "ns": f"{prefix}-host{i}",
                   "address": UNDERLAY.format(10 + i).split("/")[0]}
                  for i in range(1, count + 1)]
        self.state = {"prefix": prefix, "port": port, "driver": driver,
                      "simulated_because": why_simulated, "hosts": hosts,
                      "outside": f"{prefix}-outside", "switch": f"{prefix}-switch",
                      "external_cidr": EXTERNAL_CIDR}
        self._save()  # first: `lab down` finds what a failed `up` made
        try:
            self._make_fabric()
            self._start_controller(port, timeout)
            self._start_hosts(driver)
            session = self.session()
            self._wait_registered(session, timeout)
            self._external_network(session)
        except BaseException as error:
            echo("The lab did not come up; removing what it made.")
            self.down(echo=lambda _line: None)
            if isinstance(error, (LabError, subprocess.CalledProcessError)):
                raise LabError(str(error)) from None
            raise
        self.state["ready_seconds"] = round(time.monotonic() - started, 1)
        self._save()

    def _make_fabric(self) -> None:
        switch = self.state["switch"]
        make_switch(switch)
        for index, host in enumerate(self.hosts(), start=1):
            plug_host(switch, host["ns"], index, host["address"] + "/24")
        link_namespaces(self.hosts()[0]["ns"], UPLINK, self.state["outside"],
                        EXTERNAL_CIDR.replace(".0/", ".1/"))

    def _start_controller(self, port: int, timeout: float) -> None:
        from pocketstack.cloud import make_private_dir

        make_private_dir(self.controller_dir)
        with open(os.path.join(self.controller_dir, "pocketstack.conf"), "w") as f:
            f.write(f"[DEFAULT]\ntransport_url = {self.transport_url}\nbind_port = {port}\n"
                    "[fake]\n# the lab's hosts are its compute hosts\nhosts = 0\n"
                    "[network]\ntenant_network_type = vxlan\n"
                    f"dhcp_agent_host = {NETWORK_NODE}\nagent_down_time = 10\n")
        proc = subprocess.run(
            [sys.executable, "-m", "pocketstack.cli.main", "up", "--detach", "--data-dir",
             self.controller_dir, "--timeout", str(timeout)],
            capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise LabError("the controller did not start: " +
                           proc.stderr.strip().removeprefix("Error: "))

    def _host_config(self, host: dict, driver: str) -> str:
        """A host's pocketstack.conf: the bus and the API as everywhere, its underlay
        address; a compute host nova's password, its own user's and no database
        settings (it reaches the cloud through the conductor and placement's API, as on
        real machines), the network node its uplink and what its metadata proxy needs."""
        with open(os.path.join(self.controller_dir, "service-passwords")) as f:
            passwords = json.load(f)
        network = [f"local_ip = {host['address']}", "report_interval = 2"]
        if host["role"] == "network":
            users = [f"neutron_password = {passwords['neutron']}",
                     "metadata_proxy_shared_secret = "
                     f"{passwords['metadata_proxy_shared_secret']}"]
            network.append(f"physical_interface_mappings = {EXTNET}:{UPLINK}")
            extra = []
        else:
            from pocketstack.clients import host_users

            # nova's password for the other services' APIs, its own user's for the
            # conductor (which believes the host's name only with that user's token)
            users = [f"nova_password = {passwords['nova']}",
                     f"host_password = {passwords[host_users.user_name(host['name'])]}"]
            # the compute hosts share their instances path (shared instance storage):
            # cold migration and evacuation keep a guest's disks
            extra = ["[compute]", "database_access = conductor", "[libvirt]",
                     f"host_netns = {host['ns']}",
                     f"instances_path = {os.path.join(self.dir, 'instances')}"]
        lines = ["[DEFAULT]", f"transport_url = {self.transport_url}",
                 f"public_url = http://127.0.0.1:{self.state['port']}",
                 f"compute_driver = {driver}", "[service_user]", *users, "[network]",
                 *network, *extra]
        return "\n".join(lines) + "\n"

    def _host_credential(self, name: str) -> None:
        """`pocketstack host-credential` on the controller, as an operator makes a compute
        host's own user: its password lands in the controller's service-passwords."""
        proc = subprocess.run(
            [sys.executable, "-m", "pocketstack.cli.main", "host-credential", name,
             "--data-dir", self.controller_dir], capture_output=True, text=True,
            stdin=subprocess.DEVNULL, timeout=120)
        if proc.returncode != 0:
            raise LabError(f"no credential for {name}: " +
                           proc.stderr.strip().removeprefix("Error: "))

    def _start_hosts(self, driver: str) -> None:
        from pocketstack.cloud import make_private_dir

        for host in self.hosts():
            if host["role"] == "compute":
                self._host_credential(host["name"])
        for host in self.hosts():
            data_dir = self.host_dir(host["name"])
            make_private_dir(data_dir)
            conf = os.path.join(data_dir, "pocketstack.conf")
            with open(conf, "w") as f:
                f.write(self._host_config(host, driver))
            common = ["--host", host["name"], "--data-dir", data_dir, "--config-file", conf]
            spawn(["service", "network-agent", *common],
                  os.path.join(data_dir, "network-agent.log"),
                  os.path.join(data_dir, "network-agent.pid"), netns=host["ns"])
            if host["role"] == "network":
                spawn(["relay", host["ns"], str(self.state["port"]), data_dir],
                      os.path.join(data_dir, "relay.log"), os.path.join(data_dir, "relay.pid"),
                      module="pocketstack.netns_hosts")
            if host["role"] == "compute":
                spawn(["service", "compute", *common], os.path.join(data_dir, "compute.log"),
                      os.path.join(data_dir, "compute.pid"))

    def session(self):
        """A keystoneauth1 session as the controller's admin."""
        from pocketstack.cli import clouds

        return clouds.session("pocketstack", self.controller_dir, elsewhere=False)[0]

    def _wait_registered(self, session, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            agents, hypervisors = _agents(session), _hypervisors(session)
            waiting = [h["name"] for h in self.hosts()
                       if not agents.get(h["name"], {}).get("alive")]
            waiting += [f"compute on {h['name']}" for h in self.hosts()
                        if h["role"] == "compute" and
                        hypervisors.get(h["name"], {}).get("state") != "up"]
            if not waiting:
                return
            dead = [f"{h['name']} {what}" for h in self.hosts() for what in self._processes(h)
                    if not running(*self._pid(h, what))]
            if dead or time.monotonic() > deadline:
                why = f"exited: {', '.join(dead)}" if dead else \
                    f"not registered after {timeout:g}s: {', '.join(waiting)}"
                raise LabError(f"{why} (logs in {self.dir}/<host>/)")
            time.sleep(0.2)

    def _external_network(self, session) -> None:
        """``public``: flat on the network node's uplink to the outside (MTU 1500; a vxlan
        network would have 1450 and no way out)."""
        network = session.post("/v2.0/networks", endpoint_filter=_NETWORK, json={"network": {
            "name": "public", "router:external": True, "provider:network_type": "flat",
            "provider:physical_network": EXTNET}}).json()["network"]
        base = EXTERNAL_CIDR.rsplit(".", 1)[0]
        session.post("/v2.0/subnets", endpoint_filter=_NETWORK, json={"subnet": {
            "name": "public-subnet", "network_id": network["id"], "ip_version": 4,
            "cidr": EXTERNAL_CIDR, "gateway_ip": f"{base}.1", "enable_dhcp": False,
            "allocation_pools": [{"start": f"{base}.10", "end": f"{base}.250"}]}})
        self.state["external_network"] = network["id"]

    # --- down ------------------------------------------------------------------------

    def down(self, echo=print) -> None:
        """Remove every trace: processes, libvirt domains, namespaces (with the bridges,
        veths, VXLAN devices and nftables tables inside), the dir."""
        from pocketstack.cli import daemon

        for host in reversed(self.hosts()):
            for what in self._processes(host):
                if stop(*self._pid(host, what)):
                    echo(f"stopped the {what} of {host['name']}")
        if os.path.isdir(self.controller_dir):
            echo(daemon.stop(self.controller_dir, 30).replace("pocketstack", "the controller",
                                                             1))
        for name in self._remove_domains():
            echo(f"removed the libvirt domain {name}")
        remove_agent_leftovers(self.dir, [self.host_dir(h["name"]) for h in self.hosts()])
        for pid in processes_under(self.dir):  # anything left of the lab's processes
            kill(pid, signal.SIGKILL)
        self._remove_nft_tables()
        if self.prefix:
            gone = [ns for ns in namespaces() if ns.startswith(self.prefix + "-")]
            for ns in gone:
                sh("ip", "netns", "del", ns, check=False)
            if gone:
                echo(f"removed the namespaces {', '.join(gone)}")
        self._remove_rpc_dir()
        shutil.rmtree(self.dir, ignore_errors=True)
        self.state = {}

    def _remove_domains(self) -> list[str]:
        """The libvirt domains the lab's computes defined (their owner tag names an
        instances path in the lab's dir)."""
        try:
            import libvirt
        except ImportError:
            return []
        from pocketstack.compute.virt.libvirt import config as guest_config

        try:
            conn = libvirt.open("qemu:///system")
        except libvirt.libvirtError:
            return []
        removed = []
        try:
            for domain in conn.listAllDomains():
                owner = guest_config.read_owner(domain.XMLDesc(0))
                if owner is None or not owner[1].startswith(self.dir + os.sep):
                    continue
                if domain.isActive():
                    domain.destroy()
                domain.undefineFlags(getattr(libvirt, "VIR_DOMAIN_UNDEFINE_NVRAM", 0))
                removed.append(domain.name())
        finally:
            conn.close()
        return removed

    def _remove_nft_tables(self) -> None:
        """Tables named after the lab's clouds in the machine's namespace (none, unless a
        process of the lab ran host networking outside its namespace)."""
        names = set()
        for directory in (self.controller_dir, *(self.host_dir(h["name"])
                                                  for h in self.hosts())):
            try:
                with open(os.path.join(directory, "cloud-id")) as f:
                    names.add("pocketstack_" + f.read().strip()[:12])
            except OSError:
                continue
        listing = sh("nft", "list", "tables", check=False).stdout.split("\n")
        for line in listing:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "table" and parts[2] in names:
                sh("nft", "delete", "table", parts[1], parts[2], check=False)

    def _remove_rpc_dir(self) -> None:
        from pocketstack.common import rpc_unix

        if self.state:
            shutil.rmtree(rpc_unix.socket_dir(self.transport_url), ignore_errors=True)

    # --- status ----------------------------------------------------------------------

    @staticmethod
    def _processes(host: dict) -> tuple[str, ...]:
        return ("network-agent", "compute") if host["role"] == "compute" else \
            ("network-agent", "relay")

    def _pid(self, host: dict, what: str) -> tuple[str, str]:
        return os.path.join(self.host_dir(host["name"]), f"{what}.pid"), \
            self.host_dir(host["name"])

    def controller_pid(self) -> int | None:
        from pocketstack.cli import daemon

        return daemon.read_pid(self.controller_dir)

    def status(self) -> list[dict]:
        """Per host: name, role, namespace, underlay address, its processes' state, and
        what the API says of its agent and hypervisor (None: the API does not answer)."""
        agents = hypervisors = None
        if self.controller_pid():
            try:
                session = self.session()
                agents, hypervisors = _agents(session), _hypervisors(session)
            except Exception:  # noqa: BLE001 - the API down is a state to show
                pass
        rows = []
        for host in self.hosts():
            row = dict(host, namespace=host["ns"] if host["ns"] in namespaces()
                       else f"{host['ns']} (missing)")
            for what in ("network-agent", "compute"):
                pid = running(*self._pid(host, what)) if what in self._processes(host) \
                    else None
                row[what] = "-" if what not in self._processes(host) else \
                    (f"running ({pid})" if pid else "stopped")
            agent = (agents or {}).get(host["name"])
            row["agent (API)"] = "?" if agents is None else \
                ("alive" if agent and agent["alive"] else "down" if agent else "absent")
            hypervisor = (hypervisors or {}).get(host["name"])
            row["hypervisor (API)"] = "-" if host["role"] != "compute" else "?" \
                if hypervisors is None else \
                f"{hypervisor['state']}/{hypervisor['status']}" if hypervisor else "absent"
            rows.append(row)
        return rows


_NETWORK = {"service_type": "network", "interface": "public"}
_COMPUTE = {"service_type": "compute", "interface": "public"}


def _agents(session) -> dict[str, dict]:
    """{host: Linux bridge agent} from the network API."""
    body = session.get("/v2.0/agents", endpoint_filter=_NETWORK).json()
    return {a["host"]: a for a in body["agents"] if a["agent_type"] == "Linux bridge agent"}


def _hypervisors(session) -> dict[str, dict]:
    body = session.get("/os-hypervisors/detail", endpoint_filter=_COMPUTE,
                       headers={"OpenStack-API-Version": "compute 2.53"}).json()
    return {h["hypervisor_hostname"]: h for h in body["hypervisors"]}
