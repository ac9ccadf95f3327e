"""An instance's metadata as nova's metadata API and config drive present it
(nova/api/metadata/base.py): the OpenStack tree (``openstack/<version>/meta_data.json``,
``network_data.json``, ``user_data``, ``vendor_data.json``, ``vendor_data2.json``,
``password``) and the EC2 tree (``<version>/meta-data/…``, ``<version>/user-data``).

    md = InstanceMetadata.for_instance(uuid)
    md.lookup("/openstack/latest/meta_data.json")  # -> (content type, bytes)
    md.lookup("/latest/meta-data/")                 # -> b"ami-id\\nami-launch-index\\n…"
"""
from __future__ import annotations

import base64
import ipaddress
import json
import os
import posixpath

import sqlalchemy as sa

from pocketstack.common import db

# The OpenStack metadata versions and what each added (nova's names for them).
FOLSOM, GRIZZLY, HAVANA, LIBERTY = "2012-08-10", "2013-04-04", "2013-10-17", "2015-10-15"
NEWTON_ONE, NEWTON_TWO, OCATA, ROCKY = "2016-06-30", "2016-10-06", "2017-02-22", "2018-08-27"
VICTORIA = "2020-10-14"
OPENSTACK_VERSIONS = [FOLSOM, GRIZZLY, HAVANA, LIBERTY, NEWTON_ONE, NEWTON_TWO, OCATA, ROCKY,
                      VICTORIA]
EC2_VERSIONS = ["1.0", "2007-01-19", "2007-03-01", "2007-08-29", "2007-10-10", "2007-12-15",
                "2008-02-01", "2008-09-01", "2009-04-04"]

JSON, TEXT = "application/json", "text/plain"
PASSWORD_MAX_BYTES = 256  # nova's MAX_SIZE for the password a guest posts
PASSWORD_CHUNKS = 4       # stored as system_metadata password_0..3, 255 characters each


class NotFound(Exception):
    """No such path in this instance's metadata (404)."""


def _dump(data) -> bytes:
    return json.dumps(data).encode()


def _ec2_id(uuid: str, prefix: str) -> str:
    # nova maps UUIDs to small integers in a table; a stable 32-bit value of the UUID
    # gives the same shape (i-0000abcd) without one.
    return f"{prefix}-{int(uuid.replace('-', '')[:8], 16):08x}" if uuid else ""


# --- loading ---------------------------------------------------------------------------

def load_instance(uuid: str) -> dict | None:
    """The instance's row as a dict (None if it does not exist or is deleted), with its
    key pair's type and its security groups' names."""
    from pocketstack.compute.models import Instance, KeyPair

    with db.reader() as s:
        inst = s.get(Instance, uuid)
        if inst is None or inst.deleted:
            return None
        out = {c.key: getattr(inst, c.key) for c in Instance.__mapper__.column_attrs}
        out["metadata"] = dict(out.pop("metadata_") or {})
        out["key_type"] = "ssh"
        if inst.key_name:
            key_type = s.scalar(sa.select(KeyPair.type).where(
                KeyPair.user_id == inst.user_id, KeyPair.name == inst.key_name))
            out["key_type"] = key_type or "ssh"
    return out


def _network_facts(network_info: list) -> dict:
    """Per port id: the port, its network and its subnets, from the network API (as the
    nova service user). Ports that are gone are left out."""
    from pocketstack.clients.network import NetworkClient

    client = NetworkClient(caller="compute")
    facts = {}
    for vif in network_info:
        port = client.get_port(vif["port_id"])
        network = client.get_network(port["network_id"]) if port else None
        if network is None:  # the port or its network is gone
            continue
        subnet_ids = {ip["subnet_id"] for ip in port["fixed_ips"]}
        subnets = {s["id"]: s for s in client.list_subnets(id=sorted(subnet_ids))
                   } if subnet_ids else {}
        facts[vif["port_id"]] = {"port": port, "network": network, "subnets": subnets}
    return facts


# --- network_data.json (nova/virt/netutils.py get_network_metadata) ------------------------

def _route(destination: str, gateway: str) -> dict:
    net = ipaddress.ip_network(destination, strict=False)
    return {"network": str(net.network_address), "netmask": str(net.netmask),
            "gateway": gateway}


def network_data(network_info: list, facts: dict) -> dict:
    links, networks, services = [], [], []
    for vif in network_info:
        fact = facts.get(vif["port_id"])
        if fact is None:
            continue
        port, network = fact["port"], fact["network"]
        link_id = "tap" + port["id"][:11]
        links.append({"id": link_id, "vif_id": port["id"],
                      "type": port.get("binding:vif_type") or "bridge",
                      "mtu": network.get("mtu"), "ethernet_mac_address": port["mac_address"]})
        for ip in port["fixed_ips"]:
            subnet = fact["subnets"].get(ip["subnet_id"])
            if subnet is None:
                continue
            version = subnet["ip_version"]
            entry = {"id": f"network{len(networks)}", "link": link_id,
                     "network_id": network["id"]}
            if subnet["enable_dhcp"] and version == 4:
                entry["type"] = "ipv4_dhcp"
            else:
                cidr = ipaddress.ip_network(subnet["cidr"])
                routes = [_route(r["destination"], r["nexthop"])
                          for r in subnet.get("host_routes") or []]
                if subnet.get("gateway_ip"):
                    default = "0.0.0.0/0" if version == 4 else "::/0"
                    routes.insert(0, _route(default, subnet["gateway_ip"]))
                entry.update({"type": f"ipv{version}", "ip_address": ip["ip_address"],
                              "netmask": str(cidr.netmask), "routes": routes})
            dns = [{"type": "dns", "address": a} for a in subnet.get("dns_nameservers") or []]
            if dns:
                entry["services"] = dns
                services.extend(x for x in dns if x not in services)
            networks.append(entry)
    return {"links": links, "networks": networks, "services": services}


# --- the metadata of one instance -------------------------------------------------------

class InstanceMetadata:
    def __init__(self, instance: dict, network_info: list | None = None,
                 facts: dict | None = None, domain: str | None = None):
        self.instance = instance
        self.network_info = network_info if network_info is not None else (
            instance.get("network_info") or [])
        self._facts = facts  # asked of the network API when first needed
        from pocketstack.common import config

        self.domain = domain if domain is not None else (
            config.CONF.network.dns_domain or "").rstrip(".")
        user_data = instance.get("user_data")
        self.user_data = base64.b64decode(user_data) if user_data else None

    @classmethod
    def for_instance(cls, uuid: str) -> "InstanceMetadata | None":
        instance = load_instance(uuid)
        return None if instance is None else cls(instance)

    @property
    def facts(self) -> dict:
        if self._facts is None:
            self._facts = _network_facts(self.network_info)
        return self._facts

    # --- pieces ---------------------------------------------------------------------

    @property
    def hostname(self) -> str:
        name = self.instance.get("hostname") or ""
        return f"{name}.{self.domain}" if self.domain else name

    def fixed_ips(self, version: int = 4) -> list[str]:
        return [ip["ip_address"] for vif in self.network_info
                for ip in vif.get("fixed_ips") or [] if ip.get("version", 4) == version]

    def password(self) -> str:
        system = self.instance.get("system_metadata") or {}
        return "".join(system.get(f"password_{i}", "") for i in range(PASSWORD_CHUNKS))

    def meta_data(self, version: str) -> dict:
        inst = self.instance
        out = {"uuid": inst["uuid"]}
        if inst.get("metadata"):
            out["meta"] = dict(inst["metadata"])
        if inst.get("key_name"):
            out["public_keys"] = {inst["key_name"]: inst.get("key_data")}
            out["keys"] = [{"name": inst["key_name"], "type": inst.get("key_type", "ssh"),
                            "data": inst.get("key_data")}]
        out.update({"hostname": self.hostname, "name": inst.get("display_name"),
                    "launch_index": inst.get("launch_index", 0),
                    "availability_zone": inst.get("availability_zone")})
        if _at_least(version, GRIZZLY):
            out["random_seed"] = base64.b64encode(os.urandom(512)).decode()
        if _at_least(version, LIBERTY):
            out["project_id"] = inst.get("project_id")
        if _at_least(version, NEWTON_ONE):
            out["devices"] = []  # device role tags: none are recorded yet
        if _at_least(version, VICTORIA):
            out["dedicated_cpus"] = []
        return out

    def network_data(self) -> dict:
        return network_data(self.network_info, self.facts)

    def openstack_files(self, version: str) -> list[str]:
        """What ``openstack/<version>/`` lists."""
        names = ["meta_data.json"]
        if self.user_data is not None:
            names.append("user_data")
        if _at_least(version, GRIZZLY):
            names.append("password")
        if _at_least(version, HAVANA):
            names.append("vendor_data.json")
        if _at_least(version, LIBERTY):
            names.append("network_data.json")
        if _at_least(version, NEWTON_TWO):
            names.append("vendor_data2.json")
        return names

    def openstack_item(self, version: str, name: str) -> tuple[str, bytes]:
        if version != "latest" and version not in OPENSTACK_VERSIONS:
            raise NotFound(version)
        if name not in self.openstack_files(version):
            raise NotFound(name)
        if name == "meta_data.json":
            return JSON, _dump(self.meta_data(version))
        if name == "user_data":
            return TEXT, self.user_data
        if name == "password":
            return TEXT, self.password().encode()
        if name == "network_data.json":
            return JSON, _dump(self.network_data())
        return JSON, _dump({})  # vendor data: no static file, no dynamic targets

    def ec2_tree(self, version: str) -> dict:
        inst = self.instance
        if version == "latest":
            version = EC2_VERSIONS[-1]
        if version not in EC2_VERSIONS:
            raise NotFound(version)
        fixed = self.fixed_ips(4)
        floating = []
        meta = {"ami-id": _ec2_id(inst.get("image_ref") or "", "ami"),
                "ami-launch-index": inst.get("launch_index", 0),
                "ami-manifest-path": "FIXME",
                "instance-id": _ec2_id(inst["uuid"], "i"),
                "hostname": self.hostname,
                "local-ipv4": fixed[0] if fixed else "",
                "reservation-id": inst.get("reservation_id") or "",
                "security-groups": [g if isinstance(g, str) else g.get("name", "")
                                    for g in inst.get("security_groups") or []]}
        if inst.get("key_name"):
            meta["public-keys"] = {"0": {"_name": "0=" + inst["key_name"],
                                         "openssh-key": inst.get("key_data") or ""}}
        if _ec2_at_least(version, "2007-01-19"):
            meta.update({"local-hostname": self.hostname, "public-hostname": self.hostname,
                         "public-ipv4": floating[0] if floating else ""})
        if _ec2_at_least(version, "2007-08-29"):
            meta["instance-type"] = (inst.get("flavor") or {}).get("name", "")
        if _ec2_at_least(version, "2007-12-15"):
            meta["block-device-mapping"] = {"ami": "vda", "root": "/dev/vda"}
        if _ec2_at_least(version, "2008-02-01"):
            meta["placement"] = {"availability-zone": inst.get("availability_zone")}
        if _ec2_at_least(version, "2008-09-01"):
            meta["instance-action"] = "none"
        tree = {"meta-data": meta}
        if self.user_data is not None:
            tree["user-data"] = self.user_data
        return tree

    # --- the HTTP view ----------------------------------------------------------------

    def lookup(self, path: str) -> tuple[str, bytes]:
        """(content type, body) of a metadata path, as nova's metadata API answers it;
        raises NotFound."""
        path = posixpath.normpath("/" + path.lstrip("/"))
        tokens = [t for t in path.split("/") if t]
        if not tokens:
            return TEXT, versions_listing()
        if tokens[0] == "openstack":
            if len(tokens) == 1:
                return TEXT, _listing(OPENSTACK_VERSIONS + ["latest"])
            if len(tokens) == 2:
                if tokens[1] != "latest" and tokens[1] not in OPENSTACK_VERSIONS:
                    raise NotFound(path)
                return TEXT, _listing(self.openstack_files(tokens[1]))
            if len(tokens) > 3:
                raise NotFound(path)
            return self.openstack_item(tokens[1], tokens[2])
        if tokens[0] == "ec2":
            tokens = tokens[1:]
            if not tokens:
                return TEXT, _listing(EC2_VERSIONS + ["latest"])
        node = self.ec2_tree(tokens[0])
        for token in tokens[1:]:
            if not isinstance(node, dict) or token not in node:
                raise NotFound(path)
            node = node[token]
        return TEXT, _render_ec2(node)

    def files(self) -> list[tuple[str, bytes]]:
        """(path, content) of every file a config drive carries: the OpenStack tree for
        each version and ``latest`` (nova skips the EC2 tree's oldest versions; we keep
        ``ec2/latest/meta-data.json`` as it does)."""
        out = []
        for version in OPENSTACK_VERSIONS + ["latest"]:
            for name in self.openstack_files(version):
                if name == "password":
                    continue  # not on a config drive: the guest posts it to the service
                out.append((f"openstack/{version}/{name}", self.openstack_item(version,
                                                                               name)[1]))
        tree = self.ec2_tree("latest")
        for version in ("2009-04-04", "latest"):
            out.append((f"ec2/{version}/meta-data.json", _dump(tree["meta-data"])))
            if self.user_data is not None:
                out.append((f"ec2/{version}/user-data", self.user_data))
        return out


def _at_least(version: str, required: str) -> bool:
    return version == "latest" or (version in OPENSTACK_VERSIONS and
                                   OPENSTACK_VERSIONS.index(version) >=
                                   OPENSTACK_VERSIONS.index(required))


def _ec2_at_least(version: str, required: str) -> bool:
    return EC2_VERSIONS.index(version) >= EC2_VERSIONS.index(required)


def versions_listing() -> bytes:
    """What ``/`` lists: the EC2 versions (no instance needed to say so)."""
    return _listing(EC2_VERSIONS + ["latest"])


def _listing(names: list[str]) -> bytes:
    return "\n".join(names).encode()


def _render_ec2(node) -> bytes:
    """nova's EC2 rendering: a dict lists its keys (``name/`` for a sub-tree; a sub-tree
    with ``_name`` shows that instead, as public-keys' ``0=keyname``), a list one item a
    line, anything else its text."""
    if isinstance(node, bytes):
        return node
    if isinstance(node, dict):
        lines = []
        for key in sorted(node):
            if key == "_name":
                continue
            value = node[key]
            if isinstance(value, dict):
                lines.append(value["_name"] if "_name" in value else key + "/")
            else:
                lines.append(key)
        return "\n".join(lines).encode()
    if isinstance(node, list):
        return "\n".join(str(x) for x in node).encode()
    return str(node).encode()
