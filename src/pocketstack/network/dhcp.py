"""The DHCP agent's files, as neutron's dnsmasq driver writes them, one directory per
network under ``[network] dhcp_dir``:

* ``host``       ``fa:16:3e:d1:d7:72,host-1-1-1-1.openstacklocal,1.1.1.1`` — addresses
                 dnsmasq hands out (IPv6 in brackets; none for SLAAC subnets);
* ``addn_hosts`` ``1.1.1.1\thost-1-1-1-1.openstacklocal host-1-1-1-1`` — every address,
                 for DNS;
* ``opts``       ``tag:subnet-<id>,option:router,10.0.0.1`` — per-subnet DHCP options,
                 then each port's ``extra_dhcp_opts`` as ``tag:port-<id>,option:…``, the
                 tag its host lines set (``…,set:port-<id>``; a ``client-id`` option
                 becomes the line's ``id:``), as neutron's dnsmasq driver writes them;
* ``leases``     ``<expiry> <mac> <ip> <hostname> *`` — IPv4 leases to start dnsmasq with.

Files are rewritten from the database after each change is committed, atomically (temp
file + rename), by a background writer (as neutron's DHCP agent does it apart from the API
server): a port create returns without waiting for the disk, and changes made while a
rewrite runs or within ``[network] dhcp_batch_interval`` of it are coalesced into the next
one.
"""
from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
import threading
import time

import sqlalchemy as sa

from pocketstack.common import config, db, runtime
from pocketstack.network import addresses
from pocketstack.network import agent as host_agent
from pocketstack.network.models import IPAllocation, Network, Port, Subnet

LOG = logging.getLogger(__name__)

FILES = ("host", "addn_hosts", "opts", "leases")
METADATA_CIDR = "169.254.169.254/32"
ROUTER_INTERFACE_OWNERS = ("network:router_interface", "network:router_interface_distributed",
                           "network:ha_router_replicated_interface")


def root() -> str:
    # Never the working directory: a tool that forgot to configure one would scatter files.
    return config.CONF.network.dhcp_dir or os.path.join(config.data_dir(), "network", "dhcp")


def network_dir(network_id: str) -> str:
    return os.path.join(root(), network_id)


# --- names ----------------------------------------------------------------------------

def host_name(ip_address: str, dns_name: str = "",
              domain: str | None = None) -> tuple[str, str]:
    """(hostname, fqdn without the final dot). neutron uses the port's dns_name only when
    a real DNS domain is configured; with the default 'openstacklocal' every address is
    host-<ip with dashes>."""
    if domain is None:
        domain = (config.CONF.network.dns_domain or "").rstrip(".")
    if dns_name and domain and domain != "openstacklocal":
        if dns_name.endswith("."):  # a full name already
            return dns_name.split(".")[0], dns_name.rstrip(".")
        hostname = dns_name
    else:
        hostname = "host-" + ip_address.replace(".", "-").replace(":", "-")
    return hostname, f"{hostname}.{domain}" if domain else hostname


def network_domain(dns_domain: str | None) -> str:
    """The domain a network's guests are named in (without the final dot): the network's
    ``dns_domain`` when it has one (a literal name; one with neutron's keywords such as
    <project_id> names external records only), else ``[network] dns_domain``. Neutron's
    dnsmasq uses the agent's dns_domain alone; a network's own makes its ports' dns_name
    answer under it here, which is what users of a network's dns_domain expect of
    internal DNS."""
    if dns_domain and "<" not in dns_domain and dns_domain.strip("."):
        return dns_domain.rstrip(".")
    return (config.CONF.network.dns_domain or "").rstrip(".")


def dns_assignment(ip_address: str, dns_name: str = "") -> dict:
    hostname, fqdn = host_name(ip_address, dns_name)
    return {"hostname": hostname, "ip_address": ip_address,
            "fqdn": fqdn + "." if "." in fqdn else fqdn}


# --- file contents ------------------------------------------------------------------

def _sort_key(ip_address: str, mac_address: str) -> tuple:
    """IPv4 before IPv6, then by address as a number, then by MAC."""
    return (":" in ip_address, addresses.to_int(ip_address), mac_address)


CLIENT_ID_OPTS = ("client-id", "61")


def _host_tags(port_id: str, opts: list | None) -> tuple[str | None, str | None]:
    """(the tag a port's host lines set, its client id) from its extra DHCP options: a
    port with options is tagged port-<id> unless its only option is its client id."""
    if not opts:
        return None, None
    client_id = next((o["opt_value"] for o in opts if o["opt_name"] in CLIENT_ID_OPTS),
                     None)
    tag = None if client_id and len(opts) == 1 else f"port-{port_id}"
    return tag, client_id


def _lines(ip_address: str, mac_address: str, dns_name: str, domain: str,
           tag: str | None = None, client_id: str | None = None) -> tuple:
    """One fixed IP's sort key and its text in each file (the lease without its expiry)."""
    hostname, fqdn = host_name(ip_address, dns_name, domain)
    address = f"[{ip_address}]" if ":" in ip_address else ip_address
    host = ",".join([mac_address, *([f"id:{client_id}"] if client_id else []), fqdn, address,
                     *([f"set:{tag}"] if tag else [])])
    return (_sort_key(ip_address, mac_address), f"{ip_address}\t{fqdn} {hostname}\n",
            f"{host}\n", f" {mac_address} {ip_address} {hostname} *\n")


def render(subnets: list, allocations: list, now: float | None = None,
           cache: dict | None = None, domain: str | None = None) -> dict[str, str]:
    """The four files' text for one network.

    ``subnets``: Subnet rows; ``allocations``: rows with mac_address, ip_address, subnet_id,
    dns_name, device_owner, and optionally port_id and extra_dhcp_opts (one per fixed IP
    of each port). ``cache``: the lines of the
    previous render of this network (reused, then replaced by this render's), so a rewrite
    after one new port formats one port, not all of them. ``domain``: the network's
    (network_domain), by default ``[network] dns_domain``.
    """
    # Per subnet: (in the host file, in the leases file). No host entry for a subnet
    # without DHCP nor for SLAAC/DHCPv6-stateless addresses; leases are IPv4 only.
    facts = {}
    for s in subnets:
        in_host = bool(s.enable_dhcp) and not (s.ip_version == 6 and _auto_address(s))
        facts[s.id] = (in_host, in_host and s.ip_version == 4)
    conf = config.CONF.network
    if domain is None:
        domain = (conf.dns_domain or "").rstrip(".")
    if now is None:
        now = time.time()
    expiry = 0 if conf.dhcp_lease_duration == -1 else int(now) + conf.dhcp_lease_duration
    known = cache.get if cache else {}.get
    fresh: dict[tuple, tuple] = {}
    entries = []
    for row in allocations:
        fact = facts.get(row.subnet_id)
        if fact is None:
            continue
        tags = _host_tags(getattr(row, "port_id", ""), getattr(row, "extra_dhcp_opts", None))
        key = (row.ip_address, row.mac_address, row.dns_name, domain, *tags)
        lines = known(key) or _lines(*key)
        fresh[key] = lines
        entries.append((lines, fact))
    entries.sort(key=lambda entry: entry[0][0])
    prefix = str(expiry)
    addn_hosts = [lines[1] for lines, _ in entries]
    host = [lines[2] for lines, (in_host, _) in entries if in_host]
    leases = [prefix + lines[3] for lines, (_, in_leases) in entries if in_leases]
    if cache is not None:
        cache.clear()
        cache.update(fresh)
    return {"host": "".join(host), "addn_hosts": "".join(addn_hosts),
            "opts": "\n".join(_options(subnets, allocations, domain)
                              + _port_options(allocations)),
            "leases": "".join(leases)}


def _auto_address(subnet) -> bool:
    return addresses.is_auto_address(subnet)


def _option(subnet, name: str, *values: str) -> str:
    option = f"option6:{name}" if subnet.ip_version == 6 else (
        name if name.isdigit() else f"option:{name}")
    return ",".join([f"tag:subnet-{subnet.id}", option, *values])


def _options(subnets: list, allocations: list, domain: str | None = None) -> list[str]:
    """neutron's _generate_opts_per_subnet; isolated metadata (a route to 169.254.169.254
    through the DHCP port on subnets without a router) when host networking runs. A
    network's own domain (``domain`` other than dnsmasq's --domain) is given to IPv4
    clients as their domain name and search list."""
    own = (config.CONF.network.dns_domain or "").rstrip(".")
    if domain is None:
        domain = own
    routed = {row.subnet_id for row in allocations
              if row.device_owner in ROUTER_INTERFACE_OWNERS}
    gateways = {s.id: s.gateway_ip for s in subnets}
    routed = {sid for sid in routed if any(
        row.subnet_id == sid and row.ip_address == gateways.get(sid) and
        row.device_owner in ROUTER_INTERFACE_OWNERS for row in allocations)}
    dhcp_ips = {row.subnet_id: row.ip_address for row in allocations
                if row.device_owner == "network:dhcp"}
    options = []
    for subnet in subnets:
        if not subnet.enable_dhcp or (subnet.ip_version == 6 and
                                      subnet.ipv6_address_mode == "slaac"):
            continue
        if subnet.dns_nameservers:
            servers = [f"[{x}]" if subnet.ip_version == 6 else x
                       for x in subnet.dns_nameservers]
            options.append(_option(subnet, "dns-server", ",".join(servers)))
        if domain and subnet.ip_version == 6:
            options.append(_option(subnet, "domain-search", domain))
        if subnet.ip_version != 4:
            continue
        if domain and domain != own:
            options.append(_option(subnet, "domain-name", domain))
            options.append(_option(subnet, "domain-search", domain))
        gateway = subnet.gateway_ip
        routes = []
        for route in subnet.host_routes or []:
            if route["destination"] == "0.0.0.0/0":
                gateway = gateway or route["nexthop"]
            else:
                routes.append(f"{route['destination']},{route['nexthop']}")
        if subnet.id in routed and gateway:
            routes.append(f"{METADATA_CIDR},{gateway}")
        elif subnet.id in dhcp_ips and host_agent.enabled():
            # neutron's isolated metadata: the DHCP namespace answers 169.254.169.254
            routes.append(f"{METADATA_CIDR},{dhcp_ips[subnet.id]}")
        for other in subnets:
            if other.ip_version == 4 and other.cidr != subnet.cidr:
                routes.insert(0, f"{other.cidr},0.0.0.0")
        if routes:
            if gateway:
                routes.append(f"0.0.0.0/0,{gateway}")
            options.append(_option(subnet, "classless-static-route", ",".join(routes)))
            options.append(_option(subnet, "249", ",".join(routes)))
        options.append(_option(subnet, "router", gateway) if gateway
                       else _option(subnet, "router"))
    return options


_TAGGED_OPTION = re.compile(r"(tag:(.*),)?(.*)$")


def _format_option(ip_version: int, tag: str, option: str, *values: str) -> str:
    """neutron's Dnsmasq._format_option: the option by name (option:/option6:) or, for
    IPv4, by number; an option name may start with a tag of its own."""
    match = _TAGGED_OPTION.match(option)
    extra_tag, option = match.group(1), match.group(3)
    if ip_version == 6:
        option = f"option6:{option}"
    elif not option.isdigit():
        option = f"option:{option}"
    tags = [f"tag:{tag}", *([extra_tag[:-1]] if extra_tag else []), option]
    return ",".join(tags + [v if v is not None else "" for v in values])


def _port_options(allocations: list) -> list[str]:
    """neutron's _generate_opts_per_port: each port's extra DHCP options for the IP
    versions it has addresses of (its client id is on its host lines instead)."""
    ports: dict[str, tuple[set, list]] = {}
    for row in allocations:
        opts = getattr(row, "extra_dhcp_opts", None)
        if opts:
            versions, _ = ports.setdefault(row.port_id, (set(), opts))
            versions.add(6 if ":" in row.ip_address else 4)
    options = []
    for port_id in sorted(ports):
        versions, opts = ports[port_id]
        for opt in opts:
            if opt["opt_name"] not in CLIENT_ID_OPTS and opt["ip_version"] in versions:
                options.append(_format_option(opt["ip_version"], f"port-{port_id}",
                                              opt["opt_name"], opt["opt_value"]))
    return options


# --- writing ---------------------------------------------------------------------------

_SUBNETS = sa.select(*Subnet.__table__.columns).where(
    Subnet.network_id == sa.bindparam("network_id")).order_by(Subnet.created_at, Subnet.id)
_ALLOCATIONS = sa.select(Port.mac_address, Port.dns_name, Port.device_owner,
                         Port.id.label("port_id"), Port.extra_dhcp_opts,
                         IPAllocation.ip_address, IPAllocation.subnet_id).join(
    IPAllocation, IPAllocation.port_id == Port.id).where(
    Port.network_id == sa.bindparam("network_id"))
_EXISTS = sa.select(Network.id, Network.dns_domain).where(
    Network.id == sa.bindparam("network_id"))


def _load(network_id: str):
    """(the network's dns_domain, None if it does not exist; its subnets; its fixed IPs)
    as read-only rows, read in one transaction with Core statements built once (this runs
    for every rewrite)."""
    params = {"network_id": network_id}
    with db.engine().connect() as conn:
        network = conn.execute(_EXISTS, params).first()
        subnets = conn.execute(_SUBNETS, params).all()
        allocations = conn.execute(_ALLOCATIONS, params).all()
    return (None if network is None else network.dns_domain or ""), subnets, allocations


# What this process last wrote, per network: the lines of its render (reused by the next
# one) and, per file, the text and the file's identity right after the rename. A file
# whose identity is unchanged (nobody else replaced it) and whose text would be the same
# is not written again (the opts file, mostly).
def _written() -> dict[str, tuple[dict, dict]]:
    """This cloud's record (common/runtime.py)."""
    return runtime.current().slot(__name__ + ".written", dict)


def _identity(path: str):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _write_atomic(path: str, text: str) -> None:
    tmp = f"{path}.tmp{threading.get_ident()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _listeners() -> list:
    """Called with the network id after each rewrite (the host agent's dnsmasq reload);
    this cloud's (common/runtime.py)."""
    return runtime.current().slot(__name__ + ".listeners", list)


def add_listener(listener) -> None:
    _listeners().append(listener)


def remove_listener(listener) -> None:
    if listener in _listeners():
        _listeners().remove(listener)


def write(network_id: str) -> None:
    """Rewrite the network's files from the database (or remove them if the network is
    gone or none of its subnets has DHCP enabled), then tell the listeners."""
    _write(network_id)
    for listener in list(_listeners()):
        try:
            listener(network_id)
        except Exception:  # noqa: BLE001 - the files are written; a listener's failure is its own
            LOG.exception("DHCP files listener %r failed for network %s", listener, network_id)
    host_agent.dhcp_changed(network_id)  # a network node in another process reads them


def contents(network_id: str, cache: dict | None = None) -> dict[str, str] | None:
    """The network's four files as text (None: no DHCP on it); what this process writes,
    and what a network node whose agent runs in another process, without the database,
    gets over RPC (agent_rpc.py)."""
    dns_domain, subnets, allocations = _load(network_id)
    if dns_domain is None or not any(s.enable_dhcp for s in subnets):
        return None
    return render(subnets, allocations, cache=cache, domain=network_domain(dns_domain))


def write_received(network_id: str, texts: dict[str, str]) -> bool:
    """Write files received over RPC (a remote network node's agent); True if the host,
    addn_hosts or opts file changed (dnsmasq must re-read them). The leases file only
    seeds a dnsmasq that starts, and is written once."""
    directory = network_dir(network_id)
    os.makedirs(directory, exist_ok=True)
    changed = False
    for name in FILES:
        path = os.path.join(directory, name)
        if name == "leases" and os.path.exists(path):
            continue
        try:
            with open(path) as f:
                if f.read() == texts[name]:
                    continue
        except FileNotFoundError:
            pass
        _write_atomic(path, texts[name])
        changed |= name != "leases"
    return changed


def _write(network_id: str) -> None:
    directory = network_dir(network_id)
    os.makedirs(directory, exist_ok=True)
    # Another API process may write the same directory: one writer at a time.
    with open(os.path.join(directory, ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lines, files = _written().setdefault(network_id, ({}, {}))
        texts = contents(network_id, cache=lines)
        if texts is None:
            _written().pop(network_id, None)
            shutil.rmtree(directory, ignore_errors=True)
            return
        for name in FILES:
            path = os.path.join(directory, name)
            text = texts[name]
            before = files.get(name)
            if before is not None and before[0] == text and before[1] == _identity(path):
                continue
            _write_atomic(path, text)
            files[name] = (text, _identity(path))


class Writer:
    """One background thread that rewrites the files of the networks marked dirty.

    Requests only mark a network (after their commit) and return: all changes made while
    a rewrite runs are covered by the next one, so the files cost at most one rewrite per
    network in flight, whatever the request rate. ``wait()`` returns once everything
    marked so far is on disk (tests, shutdown).
    """

    def __init__(self):
        self.cond = threading.Condition()
        self.pending: set[str] = set()
        self.marked = 0      # marks so far
        self.done = 0        # marks whose networks have been rewritten
        self.thread: threading.Thread | None = None
        self.stopping = False
        self.hurry = False   # someone waits for the files: no pause before the next rewrite
        self.idle = False    # the writer waits for a mark (only then does a mark wake it)

    def mark(self, network_id: str) -> None:
        with self.cond:
            self.marked += 1
            self.pending.add(network_id)
            if self.thread is None or not self.thread.is_alive():
                self.stopping = False
                self.thread = threading.Thread(target=runtime.bind(self._run),
                                               name="network-dhcp-files",
                                               daemon=True)
                self.thread.start()
            elif self.idle:  # pausing or writing, it takes the mark by itself: no wake-up
                self.cond.notify_all()

    def _run(self) -> None:
        while True:
            with self.cond:
                while not self.pending and not self.stopping:
                    self.idle = True
                    self.cond.wait()
                self.idle = False
                if not self.pending:
                    return
                batch, self.pending = self.pending, set()
                upto = self.marked
            started = time.monotonic()
            for network_id in sorted(batch):
                try:
                    write(network_id)
                except Exception:  # noqa: BLE001 - committed already; the next change retries
                    LOG.exception("Writing the DHCP files of network %s failed", network_id)
            with self.cond:
                self.done = max(self.done, upto)
                self.cond.notify_all()
                # A rewrite costs O(ports on the network): let changes gather for a moment
                # so a burst of port creates costs a few rewrites, not one each; on big
                # networks at least four times the rewrite's own time (a fifth of a CPU).
                # New marks do not cut the pause short (each would cost a rewrite of its
                # own); stop() and wait() do.
                took = time.monotonic() - started
                resume = time.monotonic() + max(config.CONF.network.dhcp_batch_interval,
                                                4 * took)
                while not (self.stopping or self.hurry):
                    remaining = resume - time.monotonic()
                    if remaining <= 0:
                        break
                    self.cond.wait(remaining)
                self.hurry = False

    def wait(self, timeout: float = 10.0) -> bool:
        """Block until every network marked before this call has been rewritten."""
        deadline = time.monotonic() + timeout
        with self.cond:
            target = self.marked
            if self.done < target:
                self.hurry = True
                self.cond.notify_all()
            while self.done < target:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self.cond.wait(remaining)
        return True

    def stop(self) -> None:
        self.wait()
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        if self.thread is not None:
            self.thread.join(timeout=10)
        self.thread = None


def writer() -> Writer:
    """The current cloud's writer (common/runtime.py)."""
    return runtime.current().slot(__name__ + ".writer", Writer)


def sync(network_id: str) -> None:
    """The network's ports or subnets changed (and are committed): rewrite its files."""
    writer().mark(network_id)


def wait(timeout: float = 10.0) -> bool:
    return writer().wait(timeout)


def resync_all() -> None:
    """At start-up: rewrite every network's files (they may predate a crash or an upgrade)
    and drop the directories of networks that no longer exist."""
    with db.reader() as s:
        ids = set(s.scalars(sa.select(Network.id)))
    if os.path.isdir(root()):
        for name in os.listdir(root()):
            if name not in ids:
                shutil.rmtree(os.path.join(root(), name), ignore_errors=True)
    for network_id in sorted(ids):
        sync(network_id)
