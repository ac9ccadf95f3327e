"""The real data plane: one HAProxy per load balancer, in a namespace of its own
(qlbaas-<cloud id[:12]>-<lb id>) plugged into the VIP network's bridge as the VIP port's
tap, as an amphora would be. Listeners are frontends, pools backends, members servers, health
monitors checks; the stats socket tells member health and the counters.

The VIP port is bound to the network node host ([loadbalancer] haproxy_host) through the
network API, so the host agent makes the bridge and filters the tap with the port's
security group (lb-<id>: the listeners' ports) and spoofing rules. HAProxy serves TCP
and HTTP only: UDP listeners are served by a small userspace balancer in the same namespace
(udp_balancer.py; Octavia runs LVS, which needs a kernel module), SCTP ones are refused by
the API; a PROMETHEUS listener is HAProxy's own exporter at /metrics. Nothing here outlives
a delete: the processes, the namespace and its veth go.
"""
from __future__ import annotations

import csv
import io
import ipaddress
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys

from pocketstack.common import config, db, processes
from pocketstack.loadbalancer import certs, tree, udp_balancer, vip
from pocketstack.loadbalancer import constants as C
from pocketstack.loadbalancer import models as M
from pocketstack.loadbalancer.haproxy_config import (PING_CHECK, cert_file, ping_script, render,
                                                     tls_refs, udp_config)

LOG = logging.getLogger(__name__)
HAPROXY = "haproxy"
SOCKET_PATH_MAX = 97  # HAProxy's limit on a unix socket's path


def namespace_prefix() -> str:
    """This cloud's load balancer namespaces begin so (the per-cloud naming scheme), so
    that the audit and the cleanup of one cloud never take another's."""
    return f"qlbaas-{config.cloud_id()[:12]}-"


def namespace(lb_id: str) -> str:
    return namespace_prefix() + lb_id


def legacy_namespace(lb_id: str) -> str:
    """The name of before the per-cloud one: moved away from at the next change."""
    return f"qlbaas-{lb_id}"


def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc


class HAProxyPlane:
    def __init__(self, data_dir: str):
        self.root = os.path.join(data_dir, "loadbalancer")

    def _dir(self, lb_id: str) -> str:
        return os.path.join(self.root, lb_id)

    def _sock(self, lb_id: str) -> str:
        """The stats socket, in the load balancer's directory; reached through a short
        per-cloud link to it (/run/pocketstack-lb-<cloud id[:12]>) when the data dir's
        path is too long for a unix socket (HAProxy takes 97 bytes at most)."""
        path = os.path.join(self._dir(lb_id), "haproxy.sock")
        if len(path) <= SOCKET_PATH_MAX:
            return path
        link = f"/run/pocketstack-lb-{config.cloud_id()[:12]}"
        if not os.path.islink(link) or os.readlink(link) != self.root:
            tmp = f"{link}.{os.getpid()}.tmp"
            if os.path.lexists(tmp):
                os.unlink(tmp)
            os.symlink(self.root, tmp)
            os.replace(tmp, link)
        return os.path.join(link, lb_id, "haproxy.sock")

    # --- apply and remove ---------------------------------------------------------------

    def apply(self, lb_id: str) -> dict | None:
        with db.reader() as s:
            lb = s.get(M.LoadBalancer, lb_id)
            listeners = [li for li in tree.rows(s, M.Listener, lb_id)
                         if li.provisioning_status != C.PENDING_DELETE]
            text = render(s, lb, listeners)
            udp = udp_config(s, lb, listeners)
            pings = {m.id: m.monitor_address for m in tree.rows(s, M.Member, lb.id)
                     if m.monitor_address}
            refs, secret_refs = tls_refs(s, lb, listeners)
            openings = [(C.L4_PROTOCOL[li.protocol], li.protocol_port, cidr)
                        for li in listeners for cidr in (li.allowed_cidrs or [None])]
            project_id, port_id, address = lb.project_id, lb.vip_port_id, lb.vip_address
            subnet_id = lb.vip_subnet_id
        group = vip.sync_security_group(lb_id, project_id, openings)
        host = config.CONF.loadbalancer.haproxy_host or socket.gethostname()
        port = vip.bind(port_id, host, group)
        bridge = (port.get("binding:vif_details") or {}).get("bridge_name")
        if port.get("binding:vif_type") != "bridge" or not bridge:
            raise RuntimeError(f"the VIP port is not on a bridge of host {host} "
                               f"(binding {port.get('binding:vif_type')}): is host networking "
                               f"on and {host} one of [network] bridge_hosts?")
        subnet = vip.service_subnet(subnet_id)
        self._plug(lb_id, port, bridge, address, subnet)
        os.makedirs(self._dir(lb_id), mode=0o700, exist_ok=True)
        self._write_certificates(lb_id, refs, secret_refs)
        script = os.path.join(self._dir(lb_id), PING_CHECK)
        with open(script + ".new", "w") as f:
            f.write(ping_script(pings))
        os.chmod(script + ".new", 0o700)
        os.replace(script + ".new", script)
        path = os.path.join(self._dir(lb_id), "haproxy.cfg")
        with open(path + ".new", "w") as f:
            f.write(text.replace("@DIR@/haproxy.sock", self._sock(lb_id))
                    .replace("@DIR@", self._dir(lb_id)))
        _run(HAPROXY, "-c", "-f", path + ".new")
        os.replace(path + ".new", path)
        self._start_or_reload(lb_id, path)
        self._udp(lb_id, udp)
        if os.path.exists(f"/run/netns/{legacy_namespace(lb_id)}"):
            _run("ip", "netns", "del", legacy_namespace(lb_id), check=False)
        return self.health(lb_id)

    def _write_certificates(self, lb_id: str, refs: list[str],
                            secret_refs: list[str]) -> None:
        """Each certificate (a TLS listener's, a pool's client certificate) with its key
        and intermediates as one PEM, and each CA or CRL secret as it is, owner-only in
        the load balancer's directory, read from the key manager as the octavia user;
        the files of refs nothing names any more go."""
        folder = os.path.join(self._dir(lb_id), "certs")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        wanted = {cert_file(ref) for ref in refs + secret_refs}
        for ref, read in [(r, lambda r: certs.load(r).pem()) for r in refs] + \
                [(r, certs.load_secret) for r in secret_refs]:
            path = os.path.join(folder, cert_file(ref))
            fd = os.open(path + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(read(ref))
            os.replace(path + ".new", path)
        for name in os.listdir(folder):
            if name not in wanted:
                os.unlink(os.path.join(folder, name))

    def _plug(self, lb_id: str, port: dict, bridge: str, address: str, subnet: dict) -> None:
        ns, tap = namespace(lb_id), "tap" + port["id"][:11]
        if not os.path.exists(f"/run/netns/{ns}"):
            _run("ip", "netns", "add", ns)
        if _run("ip", "-n", ns, "link", "show", "eth0", check=False).returncode != 0:
            _run("ip", "link", "del", tap, check=False)  # a leftover of a failed plug
            _run("ip", "link", "add", tap, "type", "veth", "peer", "name", "eth0", "netns", ns)
            _run("ip", "-n", ns, "link", "set", "eth0", "address", port["mac_address"])
            prefix = ipaddress.ip_network(subnet["cidr"]).prefixlen
            _run("ip", "-n", ns, "addr", "add", f"{address}/{prefix}", "dev", "eth0")
            _run("ip", "-n", ns, "link", "set", "eth0", "up")
            _run("ip", "-n", ns, "link", "set", "lo", "up")
            if subnet.get("gateway_ip"):
                _run("ip", "-n", ns, "route", "replace", "default", "via",
                     subnet["gateway_ip"], check=False)
        _run("ip", "link", "set", tap, "master", bridge, "up")

    def _pid(self, lb_id: str) -> int | None:
        try:
            with open(os.path.join(self._dir(lb_id), "haproxy.pid")) as f:
                pid = int(f.read().split()[0])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except (OSError, ValueError, IndexError):
            return None
        return pid if self._dir(lb_id).encode() in cmdline else None

    def _start_or_reload(self, lb_id: str, path: str) -> None:
        pidfile = os.path.join(self._dir(lb_id), "haproxy.pid")
        args = ["ip", "netns", "exec", namespace(lb_id), HAPROXY, "-D", "-f", path,
                "-p", pidfile]
        old = self._pid(lb_id)
        if old is not None:
            # Seamless reload: the new process takes the listening sockets over from the
            # old one through its stats socket (no connection refused meanwhile); the old
            # one finishes the connections it has and goes.
            sock = self._sock(lb_id)
            if os.path.exists(sock):
                args += ["-x", sock]
            args += ["-sf", str(old)]
        _run(*args)

    def _udp_pid(self, lb_id: str) -> int | None:
        try:
            with open(os.path.join(self._dir(lb_id), udp_balancer.PIDFILE)) as f:
                pid = int(f.read().split()[0])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except (OSError, ValueError, IndexError):
            return None
        return pid if self._dir(lb_id).encode() in cmdline else None

    def _udp(self, lb_id: str, conf: dict | None) -> None:
        """The UDP balancer of the load balancer's UDP listeners: started, told to read
        its configuration again (SIGHUP), or stopped when no UDP listener is left."""
        folder = self._dir(lb_id)
        path = os.path.join(folder, udp_balancer.CONFIG)
        pid = self._udp_pid(lb_id)
        if conf is None:
            if pid is not None:
                _stop(pid)
            for name in (udp_balancer.CONFIG, udp_balancer.STATUS, udp_balancer.PIDFILE):
                if os.path.exists(os.path.join(folder, name)):
                    os.unlink(os.path.join(folder, name))
            return
        with open(path + ".new", "w") as f:
            json.dump(conf, f)
        os.replace(path + ".new", path)
        if pid is not None:
            os.kill(pid, signal.SIGHUP)
            return
        _run("ip", "netns", "exec", namespace(lb_id), sys.executable, "-I",
             udp_balancer.__file__, folder, "--daemon")

    def _udp_status(self, lb_id: str) -> dict:
        try:
            with open(os.path.join(self._dir(lb_id), udp_balancer.STATUS)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def built(self, lb_id: str) -> bool:
        return os.path.exists(os.path.join(self._dir(lb_id), "haproxy.cfg"))

    def running(self, lb_id: str) -> bool:
        """Its HAProxy runs, and its UDP balancer too if it has UDP listeners."""
        udp = os.path.exists(os.path.join(self._dir(lb_id), udp_balancer.CONFIG))
        return self._pid(lb_id) is not None and (not udp or self._udp_pid(lb_id) is not None)

    def remove(self, lb_id: str) -> None:
        for pid in (self._pid(lb_id), self._udp_pid(lb_id)):
            if pid is not None:
                _stop(pid)
        for ns in (namespace(lb_id), legacy_namespace(lb_id)):
            if os.path.exists(f"/run/netns/{ns}"):
                _run("ip", "netns", "del", ns, check=False)
        shutil.rmtree(self._dir(lb_id), ignore_errors=True)
        link = f"/run/pocketstack-lb-{config.cloud_id()[:12]}"
        if os.path.islink(link) and os.readlink(link) == self.root and not os.listdir(
                self.root):
            os.unlink(link)  # the short socket path's link goes with the last one

    def stop(self) -> None:
        """The HAProxies keep serving while the cloud process is away, as dnsmasq does."""

    # --- what the stats socket says -------------------------------------------------------

    def _stat(self, lb_id: str) -> list[dict]:
        path = self._sock(lb_id)
        if not os.path.exists(path):
            return []
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(2)
                sock.connect(path)
                sock.sendall(b"show stat\n")
                chunks = []
                while chunk := sock.recv(65536):
                    chunks.append(chunk)
        except OSError:
            return []
        text = b"".join(chunks).decode(errors="replace").lstrip("# ")
        return list(csv.DictReader(io.StringIO(text)))

    def health(self, lb_id: str) -> dict | None:
        """member id -> ONLINE/ERROR/OFFLINE for the members HAProxy or the UDP
        balancer checks."""
        rows = self._stat(lb_id)
        udp = self._udp_status(lb_id).get("members") or {}
        if not rows and not udp:
            return None
        out = {member_id: UDP_STATES[state] for member_id, state in udp.items()
               if state in UDP_STATES}
        for row in rows:
            if row.get("svname") in ("FRONTEND", "BACKEND") or not row.get("check_status"):
                continue
            status = row.get("status", "")
            if status.startswith("UP"):
                out[row["svname"]] = C.ONLINE
            elif status.startswith("DOWN"):
                out[row["svname"]] = C.ERROR
            elif status.startswith("MAINT"):
                out[row["svname"]] = C.OFFLINE
        return out

    def counters(self, lb_id: str, listener_id: str) -> dict | None:
        udp = (self._udp_status(lb_id).get("listeners") or {}).get(listener_id)
        if udp is not None:
            return {key: int(udp.get(key) or 0) for key in (
                "bytes_in", "bytes_out", "active_connections", "total_connections",
                "request_errors")}
        for row in self._stat(lb_id):
            if row.get("pxname") == listener_id and row.get("svname") == "FRONTEND":
                def num(key):
                    try:
                        return int(row.get(key) or 0)
                    except ValueError:
                        return 0
                return {"bytes_in": num("bin"), "bytes_out": num("bout"),
                        "active_connections": num("scur"), "total_connections": num("stot"),
                        "request_errors": num("ereq")}
        return None


UDP_STATES = {udp_balancer.UP: C.ONLINE, udp_balancer.DOWN: C.ERROR,
              udp_balancer.MAINT: C.OFFLINE}


def _stop(pid: int) -> None:
    processes.stop(pid, grace=5)
