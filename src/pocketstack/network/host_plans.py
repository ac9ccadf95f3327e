"""What each host's networking agent should plumb, read from the database by the network
service and sent to the agent over RPC (agent_rpc.py): the agents never read the
database. Every answer is plain JSON (``dataclasses.asdict`` of the agent's plans; the
agent rebuilds them: agent_rpc.NetworkServiceClient).

Two kinds of host: a compute host's agent plumbs a bridge per network that has a port
bound to it and the security groups of those ports; the DHCP/L3 host (``[network]
dhcp_agent_host``, default the network service's own host, where the DHCP files are
written) also gets each network's DHCP namespace and every router its L3 agent hosts.
"""
from __future__ import annotations

import dataclasses

import sqlalchemy as sa
from sqlalchemy import orm

from pocketstack.common import config, db
from pocketstack.network import address_groups as agroups
from pocketstack.network import agent, l2pop, l3_hosting
from pocketstack.network.agent import firewall, plumbing
from pocketstack.network.agent.l3 import GATEWAY, INTERFACE, RouterPlan, RouterPort
from pocketstack.network.models import (FloatingIP, IPAllocation, Network, Port,
                                        PortForwarding, PortSecurityGroup, Router,
                                        SecurityGroupRule, Subnet)

DHCP_OWNER = "network:dhcp"


def network_node_hosts() -> set[str]:
    """The hosts whose agent serves DHCP, metadata and routers."""
    if config.CONF.network.dhcp_agent_host:
        return {config.CONF.network.dhcp_agent_host}
    return agent.bridge_hosts()


def is_network_node(hosts) -> bool:
    return bool(set(hosts) & network_node_hosts())


def _guest_ports(s, hosts, network_id: str | None = None):
    query = sa.select(Port).where(Port.host_id.in_(sorted(hosts)),
                                  sa.not_(Port.device_owner.startswith("network:"))).options(
        orm.selectinload(Port.fixed_ips), orm.selectinload(Port.security_group_bindings))
    if network_id is not None:
        query = query.where(Port.network_id == network_id)
    return s.scalars(query).all()


def _network_plan(s, network_id: str, hosts, endpoints: l2pop.Endpoints | None
                  ) -> plumbing.NetworkPlan | None:
    network = s.get(Network, network_id)
    if network is None:
        return None
    plan = plumbing.NetworkPlan(
        network_id=network_id, mtu=network.mtu or 1500,
        network_type=network.network_type or "local",
        segmentation_id=network.segmentation_id, physical_network=network.physical_network)
    if plan.network_type == "vxlan" and endpoints is not None:
        plan.flood, plan.fdb = l2pop.entries(s, network_id, hosts, endpoints)
    if not is_network_node(hosts):
        return plan  # a compute host: the bridge only
    subnets = {x.id: x for x in s.scalars(sa.select(Subnet).where(
        Subnet.network_id == network_id))}
    port = s.scalar(sa.select(Port).where(Port.network_id == network_id,
                                          Port.device_owner == DHCP_OWNER).limit(1))
    from pocketstack.network import dhcp

    plan.dns_domain = dhcp.network_domain(network.dns_domain)
    if port is not None:
        plan.dhcp_port_id, plan.dhcp_mac = port.id, port.mac_address
        for alloc in port.fixed_ips:
            subnet = subnets.get(alloc.subnet_id)
            if subnet is None or subnet.ip_version != 4 or not subnet.enable_dhcp:
                continue  # DHCPv6 is not served yet
            prefix = subnet.cidr.split("/")[1]
            plan.dhcp_addresses.append(f"{alloc.ip_address}/{prefix}")
            plan.dhcp_subnets.append((subnet.id, subnet.cidr))
    return plan


def _wanted(s, hosts, endpoints: l2pop.Endpoints | None
            ) -> tuple[set[str], dict[str, RouterPlan]]:
    """The networks the hosts plumb (their guests' and their routers') and the routers;
    the network node on the overlay also the vxlan networks it serves (DHCP, routers)
    to guests on other hosts."""
    guest_networks = {p.network_id for p in _guest_ports(s, hosts)}
    if endpoints is not None and is_network_node(hosts):
        guest_networks |= l2pop.served_networks(s, endpoints)
    routers = routers_for(s) if is_network_node(hosts) else {}
    return guest_networks | {p.network_id for r in routers.values() for p in r.ports}, routers


# --- the RPC answers (agent_rpc.NetworkRpcEndpoint) ------------------------------------

def _endpoints(s, hosts) -> l2pop.Endpoints | None:
    """The overlay's VTEPs, if the asking host has one (else it carries no overlay)."""
    endpoints = l2pop.Endpoints(s, network_node_hosts())
    return endpoints if endpoints.of(hosts) else None


def network_plan(network_id: str, hosts) -> dict | None:
    with db.reader() as s:
        plan = _network_plan(s, network_id, hosts, _endpoints(s, hosts))
    return dataclasses.asdict(plan) if plan is not None else None


def host_state(hosts) -> dict:
    """Every network and router the hosts' agent should have (a full reconcile)."""
    with db.reader() as s:
        endpoints = _endpoints(s, hosts)
        networks, routers = _wanted(s, hosts, endpoints)
        plans = [_network_plan(s, network_id, hosts, endpoints)
                 for network_id in sorted(networks)]
    return {"network_node": is_network_node(hosts),
            "networks": [dataclasses.asdict(p) for p in plans if p is not None],
            "routers": [dataclasses.asdict(r) for r in routers.values()]}


def firewall_state(hosts) -> dict:
    """The security group state of the hosts' guests: their ports, the rules of their
    groups, the members of remote groups, the taps kept from the host (DHCP and router
    veths) and the CIDRs of remote address groups."""
    with db.reader() as s:
        return _firewall_state(s, hosts)


def _firewall_state(s, hosts) -> dict:
    ports, group_ids = [], set()
    guest_ports = _guest_ports(s, hosts)
    for port in guest_ports:
        if not port.port_security_enabled:
            continue
        groups = sorted(b.security_group_id for b in port.security_group_bindings)
        ips = [a.ip_address for a in port.fixed_ips]
        if ips:
            ports.append(firewall.GuestPort(port.id, port.network_id, ips, groups,
                                            port.mac_address,
                                            list(port.allowed_address_pairs or [])))
            group_ids.update(groups)
    rules = [firewall.Rule(r.security_group_id, r.direction, r.ethertype, r.protocol,
                           r.port_range_min, r.port_range_max, r.remote_ip_prefix,
                           r.remote_group_id, r.remote_address_group_id)
             for r in s.scalars(sa.select(SecurityGroupRule).where(
                 SecurityGroupRule.security_group_id.in_(sorted(group_ids))).order_by(
                 SecurityGroupRule.created_at, SecurityGroupRule.id))]
    remote = sorted({r.remote_group_id for r in rules if r.remote_group_id})
    members: dict[str, list[str]] = {}
    for group_id, address in s.execute(
            sa.select(PortSecurityGroup.security_group_id, IPAllocation.ip_address).join(
                IPAllocation, IPAllocation.port_id == PortSecurityGroup.port_id).where(
                PortSecurityGroup.security_group_id.in_(remote))):
        members.setdefault(group_id, []).append(address)
    dhcp_taps: list[str] = []
    if is_network_node(hosts):
        networks, routers = _wanted(s, hosts, _endpoints(s, hosts))
        # DHCP and router veths, like guests' taps, are kept from the host
        dhcp_taps = [agent.tap_name(port_id) for port_id in s.scalars(
            sa.select(Port.id).where(Port.device_owner == DHCP_OWNER,
                                     Port.network_id.in_(sorted(networks))))] + sorted(
            p.tap for r in routers.values() for p in r.ports)
    address_groups = agroups.addresses_of(s, {r.remote_address_group_id for r in rules
                                              if r.remote_address_group_id})
    down_networks = set(s.scalars(sa.select(Network.id).where(
        Network.id.in_(sorted({p.network_id for p in guest_ports})),
        Network.admin_state_up.is_(False))))
    down_taps = sorted(agent.tap_name(p.id) for p in guest_ports
                       if not p.admin_state_up or p.network_id in down_networks)
    return {"ports": [dataclasses.asdict(p) for p in ports],
            "rules": [dataclasses.asdict(r) for r in rules], "members": members,
            "dhcp_taps": dhcp_taps, "address_groups": address_groups,
            "down_taps": down_taps}


# --- routers -------------------------------------------------------------------------

def routers_for(s) -> dict[str, RouterPlan]:
    """The routers the network node hosts: every router of its L3 agent with a gateway or
    an interface, plumbed at once as neutron's L3 agent does (its gateway answers from
    outside before any guest is bound on its networks); their networks get bridges."""
    owners = (INTERFACE, GATEWAY)
    router_ids = set(s.scalars(sa.select(Port.device_id).where(
        Port.device_owner.in_(owners)).distinct()))
    router_ids -= l3_hosting.not_hosted_here(s)  # an admin moved them or took them off
    routers = s.scalars(sa.select(Router).where(Router.id.in_(sorted(router_ids)),
                                                Router.admin_state_up.is_(True))).all()
    if not routers:
        return {}
    ids = sorted(r.id for r in routers)
    ports = s.scalars(sa.select(Port).where(Port.device_owner.in_(owners),
                                            Port.device_id.in_(ids))).all()
    network_mtu = dict(s.execute(sa.select(Network.id, Network.mtu).where(
        Network.id.in_(sorted({p.network_id for p in ports})))).all())
    subnets = {x.id: x for x in s.scalars(sa.select(Subnet).join(
        IPAllocation, IPAllocation.subnet_id == Subnet.id).where(
        IPAllocation.port_id.in_(sorted(p.id for p in ports))))}
    fips: dict[str, list[tuple[str, str]]] = {}
    for router_id, floating, fixed in s.execute(sa.select(
            FloatingIP.router_id, FloatingIP.floating_ip_address,
            FloatingIP.fixed_ip_address).where(FloatingIP.router_id.in_(ids),
                                               FloatingIP.fixed_ip_address.is_not(None))):
        fips.setdefault(router_id, []).append((floating, fixed))
    forwardings: dict[str, list[tuple]] = {}
    for router_id, floating, pf in s.execute(sa.select(
            FloatingIP.router_id, FloatingIP.floating_ip_address, PortForwarding).join(
            PortForwarding, PortForwarding.floatingip_id == FloatingIP.id).where(
            FloatingIP.router_id.in_(ids))):
        forwardings.setdefault(router_id, []).append((
            floating, pf.protocol, pf.external_port, pf.external_port_end or pf.external_port,
            pf.internal_ip_address, pf.internal_port, pf.internal_port_end or pf.internal_port))
    plans = {}
    for router in routers:
        mine = sorted((p for p in ports if p.device_id == router.id), key=lambda p: p.id)
        interfaces = tuple(_port(p, subnets, network_mtu) for p in mine
                           if p.device_owner == INTERFACE)
        gw = next((p for p in mine if p.id == router.gw_port_id), None)
        gateway = _port(gw, subnets, network_mtu, gateway=True) if gw else None
        gateway_ip = next((subnets[a.subnet_id].gateway_ip for a in (gw.fixed_ips if gw else [])
                           if a.subnet_id in subnets and subnets[a.subnet_id].ip_version == 4
                           and subnets[a.subnet_id].gateway_ip), None)
        plans[router.id] = RouterPlan(
            router.id, interfaces, gateway, gateway_ip, bool(router.enable_snat),
            tuple((r["destination"], r["nexthop"]) for r in router.routes or []),
            tuple(sorted(fips.get(router.id, []))) if gateway else (),
            tuple(sorted(forwardings.get(router.id, []))) if gateway else ())
    return plans


def _port(port: Port, subnets: dict, network_mtu: dict, gateway: bool = False) -> RouterPort:
    addresses = tuple(sorted(f"{a.ip_address}/{subnets[a.subnet_id].cidr.split('/')[1]}"
                             for a in port.fixed_ips if a.subnet_id in subnets))
    return RouterPort(port.id, port.network_id, port.mac_address,
                      network_mtu.get(port.network_id) or 1500, addresses, gateway)




# --- the metadata proxies' lookup ------------------------------------------------------

def metadata_ports(network_ids: list[str], ip_address: str) -> list[dict]:
    """The servers' ports on ``network_ids`` holding ``ip_address``: whose guest asks the
    metadata proxy of a network or router (neutron's metadata agent asks its server over
    RPC too, so a network node needs no API credentials for it)."""
    with db.reader() as s:
        rows = s.execute(sa.select(Port.id, Port.device_id, Port.project_id, Port.network_id)
                         .join(IPAllocation, IPAllocation.port_id == Port.id)
                         .where(IPAllocation.network_id.in_(network_ids),
                                IPAllocation.ip_address == ip_address,
                                Port.device_owner.startswith("compute:"),
                                Port.device_id != "")).all()
    return [{"id": port_id, "device_id": device_id, "project_id": project_id,
             "network_id": network_id} for port_id, device_id, project_id, network_id in rows]
