"""Network tables (prefix network_). Relationships name classes directly, not by string,
so other services' models with the same class names cannot make lookups ambiguous.

IPAM's guarantee lives here: an address is a row keyed by (subnet_id, ip_address), so no
engine can hand it out twice, whatever the concurrency.
"""
# No `from __future__ import annotations`: SQLAlchemy would then eval every Mapped[...]
# annotation string when the class is made (a sixth of the models' import time).

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column, relationship

from pocketstack.common.db import Base
from pocketstack.common.timeutils import utcnow

ID = sa.String(36)
PROJECT = sa.String(255)


class StandardAttrs:
    """What neutron calls standard attributes: description, timestamps, revision."""
    description: Mapped[str] = mapped_column(sa.String(255), default="")
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    revision_number: Mapped[int] = mapped_column(default=0)


class Network(StandardAttrs, Base):
    __tablename__ = "network_networks"
    __table_args__ = (sa.UniqueConstraint("is_default", name="uq_network_networks_is_default"),)
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    project_id: Mapped[str] = mapped_column(PROJECT, index=True)
    name: Mapped[str] = mapped_column(sa.String(255), default="")
    admin_state_up: Mapped[bool] = mapped_column(default=True)
    status: Mapped[str] = mapped_column(sa.String(16), default="ACTIVE")
    shared: Mapped[bool] = mapped_column(default=False)
    external: Mapped[bool] = mapped_column(default=False)
    mtu: Mapped[int] = mapped_column(default=1500)
    port_security_enabled: Mapped[bool] = mapped_column(default=True)
    vlan_transparent: Mapped[bool] = mapped_column(default=False,
                                                   server_default=sa.false())
    dns_domain: Mapped[str] = mapped_column(sa.String(255), default="")
    network_type: Mapped[str] = mapped_column(sa.String(32))
    physical_network: Mapped[str | None] = mapped_column(sa.String(64))
    segmentation_id: Mapped[int | None] = mapped_column()
    # "type:physnet:id" for segments that must be unique (NULL for local networks).
    segment_key: Mapped[str | None] = mapped_column(sa.String(128), unique=True)
    # added in 0003; no foreign key: deleting a policy in use is refused in qos.py
    qos_policy_id: Mapped[str | None] = mapped_column(ID, index=True)
    # added in 0003: the name and description of the network's one segment (/segments)
    segment_name: Mapped[str | None] = mapped_column(sa.String(255))
    segment_description: Mapped[str] = mapped_column(sa.String(255), default="",
                                                     server_default="")
    # added in 0008: the default external network (auto-allocated-topology's is_default),
    # True or NULL: the unique constraint lets one network at most be the default
    is_default: Mapped[bool | None] = mapped_column()

    subnets: Mapped[list["Subnet"]] = relationship(
        lambda: Subnet, back_populates="network", order_by=lambda: Subnet.created_at,
        passive_deletes=True)


class Subnet(StandardAttrs, Base):
    __tablename__ = "network_subnets"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    project_id: Mapped[str] = mapped_column(PROJECT, index=True)
    network_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_networks.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(sa.String(255), default="")
    ip_version: Mapped[int] = mapped_column()
    cidr: Mapped[str] = mapped_column(sa.String(64))
    gateway_ip: Mapped[str | None] = mapped_column(sa.String(64))
    enable_dhcp: Mapped[bool] = mapped_column(default=True)
    ipv6_ra_mode: Mapped[str | None] = mapped_column(sa.String(16))
    ipv6_address_mode: Mapped[str | None] = mapped_column(sa.String(16))
    dns_nameservers: Mapped[list] = mapped_column(sa.JSON, default=list)
    host_routes: Mapped[list] = mapped_column(sa.JSON, default=list)
    allocation_pools: Mapped[list] = mapped_column(sa.JSON, default=list)
    dns_publish_fixed_ip: Mapped[bool] = mapped_column(default=False)
    # added in 0002; no foreign key: deleting a pool in use is refused in subnetpools.py
    subnetpool_id: Mapped[str | None] = mapped_column(ID, index=True)
    # added in 0005: device owners whose ports take addresses here (subnet-service-types;
    # None or []: any port)
    service_types: Mapped[list | None] = mapped_column(sa.JSON)

    network: Mapped[Network] = relationship(Network, back_populates="subnets")


class Port(StandardAttrs, Base):
    __tablename__ = "network_ports"
    __table_args__ = (sa.UniqueConstraint("network_id", "mac_address",
                                          name="uq_network_ports_network_mac"),)
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    project_id: Mapped[str] = mapped_column(PROJECT, index=True)
    network_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_networks.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(sa.String(255), default="")
    mac_address: Mapped[str] = mapped_column(sa.String(32))
    admin_state_up: Mapped[bool] = mapped_column(default=True)
    status: Mapped[str] = mapped_column(sa.String(16), default="DOWN")
    device_id: Mapped[str] = mapped_column(sa.String(255), default="", index=True)
    device_owner: Mapped[str] = mapped_column(sa.String(255), default="")
    host_id: Mapped[str] = mapped_column(sa.String(255), default="")
    vif_type: Mapped[str] = mapped_column(sa.String(64), default="unbound")
    vif_details: Mapped[dict] = mapped_column(sa.JSON, default=dict)
    vnic_type: Mapped[str] = mapped_column(sa.String(64), default="normal")
    profile: Mapped[dict] = mapped_column(sa.JSON, default=dict)
    port_security_enabled: Mapped[bool] = mapped_column(default=True)
    dns_name: Mapped[str] = mapped_column(sa.String(255), default="")
    # added in 0008: dns-domain-ports (the domain its floating IPs' records go to)
    dns_domain: Mapped[str] = mapped_column(sa.String(255), default="", server_default="")
    allowed_address_pairs: Mapped[list] = mapped_column(sa.JSON, default=list)
    # added in 0003; no foreign key: deleting a policy in use is refused in qos.py. Not
    # indexed: only that rare check searches by it, and port inserts are the hot path.
    qos_policy_id: Mapped[str | None] = mapped_column(ID)
    # added in 0004: neutron's extra_dhcp_opt (a list of {opt_name, opt_value,
    # ip_version}; None is none) and port-trusted-vif (None: never set).
    extra_dhcp_opts: Mapped[list | None] = mapped_column(sa.JSON)
    trusted: Mapped[bool | None] = mapped_column()

    fixed_ips: Mapped[list["IPAllocation"]] = relationship(
        lambda: IPAllocation, order_by=lambda: (IPAllocation.position,),
        cascade="all, delete-orphan", passive_deletes=True)
    security_group_bindings: Mapped[list["PortSecurityGroup"]] = relationship(
        lambda: PortSecurityGroup, cascade="all, delete-orphan", passive_deletes=True)


class IPAllocation(Base):
    __tablename__ = "network_ip_allocations"
    subnet_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_subnets.id", ondelete="CASCADE"), primary_key=True)
    ip_address: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    port_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_ports.id", ondelete="CASCADE"), index=True)
    network_id: Mapped[str] = mapped_column(ID, index=True)
    position: Mapped[int] = mapped_column(default=0)  # order in the port's fixed_ips


class SecurityGroup(StandardAttrs, Base):
    __tablename__ = "network_security_groups"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    project_id: Mapped[str] = mapped_column(PROJECT, index=True)
    name: Mapped[str] = mapped_column(sa.String(255), default="")
    stateful: Mapped[bool] = mapped_column(default=True)

    rules: Mapped[list["SecurityGroupRule"]] = relationship(
        lambda: SecurityGroupRule, order_by=lambda: SecurityGroupRule.created_at,
        primaryjoin=lambda: SecurityGroup.id == SecurityGroupRule.security_group_id,
        viewonly=True)


class DefaultSecurityGroup(Base):
    """One row per project: makes creating the `default` group race-free."""
    __tablename__ = "network_default_security_groups"
    project_id: Mapped[str] = mapped_column(PROJECT, primary_key=True)
    security_group_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_security_groups.id", ondelete="CASCADE"), unique=True)


class SecurityGroupRule(StandardAttrs, Base):
    __tablename__ = "network_security_group_rules"
    __table_args__ = (sa.UniqueConstraint("security_group_id", "fingerprint",
                                          name="uq_network_sg_rules_fingerprint"),)
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    project_id: Mapped[str] = mapped_column(PROJECT, index=True)
    security_group_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_security_groups.id", ondelete="CASCADE"), index=True)
    direction: Mapped[str] = mapped_column(sa.String(16))
    ethertype: Mapped[str] = mapped_column(sa.String(8))
    protocol: Mapped[str | None] = mapped_column(sa.String(40))
    port_range_min: Mapped[int | None] = mapped_column()
    port_range_max: Mapped[int | None] = mapped_column()
    remote_ip_prefix: Mapped[str | None] = mapped_column(sa.String(64))
    remote_group_id: Mapped[str | None] = mapped_column(
        sa.ForeignKey("network_security_groups.id", ondelete="CASCADE"), index=True)
    # added in 0005; no foreign key: deleting an address group in use is refused
    remote_address_group_id: Mapped[str | None] = mapped_column(ID, index=True)
    # The rule's meaning in one string: the unique key that makes duplicates a 409.
    fingerprint: Mapped[str] = mapped_column(sa.String(255))


class PortSecurityGroup(Base):
    __tablename__ = "network_port_security_groups"
    port_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_ports.id", ondelete="CASCADE"), primary_key=True)
    security_group_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_security_groups.id"), primary_key=True, index=True)


class Router(StandardAttrs, Base):
    __tablename__ = "network_routers"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    project_id: Mapped[str] = mapped_column(PROJECT, index=True)
    name: Mapped[str] = mapped_column(sa.String(255), default="")
    admin_state_up: Mapped[bool] = mapped_column(default=True)
    status: Mapped[str] = mapped_column(sa.String(16), default="ACTIVE")
    gw_port_id: Mapped[str | None] = mapped_column(
        sa.ForeignKey("network_ports.id", ondelete="SET NULL"))
    enable_snat: Mapped[bool] = mapped_column(default=True)
    routes: Mapped[list] = mapped_column(sa.JSON, default=list)
    # added in 0005: the gateway's QoS policy (qos-gateway-ip); no foreign key: deleting
    # a policy in use is refused in qos.py
    qos_policy_id: Mapped[str | None] = mapped_column(ID)


class FloatingIP(StandardAttrs, Base):
    __tablename__ = "network_floating_ips"
    __table_args__ = (sa.UniqueConstraint("fixed_port_id", "fixed_ip_address",
                                          name="uq_network_fip_fixed"),)
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    project_id: Mapped[str] = mapped_column(PROJECT, index=True)
    floating_network_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_networks.id"), index=True)
    floating_port_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_ports.id", ondelete="CASCADE"))
    floating_ip_address: Mapped[str] = mapped_column(sa.String(64))
    fixed_port_id: Mapped[str | None] = mapped_column(
        sa.ForeignKey("network_ports.id", ondelete="SET NULL"), index=True)
    fixed_ip_address: Mapped[str | None] = mapped_column(sa.String(64))
    router_id: Mapped[str | None] = mapped_column(ID)
    status: Mapped[str] = mapped_column(sa.String(16), default="DOWN")
    dns_name: Mapped[str] = mapped_column(sa.String(255), default="")
    # added in 0008: its own domain, and the A record published in the DNS service for
    # it (neutron's floatingipdnses): what to remove when that changes
    dns_domain: Mapped[str] = mapped_column(sa.String(255), default="", server_default="")
    published_dns_name: Mapped[str] = mapped_column(sa.String(255), default="",
                                                    server_default="")
    published_dns_domain: Mapped[str] = mapped_column(sa.String(255), default="",
                                                      server_default="")


class Quota(Base):
    __tablename__ = "network_quotas"
    project_id: Mapped[str] = mapped_column(PROJECT, primary_key=True)
    resource: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    hard_limit: Mapped[int] = mapped_column()


class Tag(Base):
    __tablename__ = "network_tags"
    resource_id: Mapped[str] = mapped_column(ID, primary_key=True)
    tag: Mapped[str] = mapped_column(sa.String(255), primary_key=True, index=True)


class SubnetPool(StandardAttrs, Base):
    """Prefixes that subnets can be carved from (neutron's subnetpools)."""
    __tablename__ = "network_subnetpools"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    project_id: Mapped[str] = mapped_column(PROJECT, index=True)
    name: Mapped[str] = mapped_column(sa.String(255), default="")
    ip_version: Mapped[int] = mapped_column()
    prefixes: Mapped[list] = mapped_column(sa.JSON, default=list)  # canonical CIDRs, merged
    min_prefixlen: Mapped[int] = mapped_column()
    max_prefixlen: Mapped[int] = mapped_column()
    default_prefixlen: Mapped[int] = mapped_column()
    shared: Mapped[bool] = mapped_column(default=False)
    is_default: Mapped[bool] = mapped_column(default=False)
    default_quota: Mapped[int | None] = mapped_column()
    address_scope_id: Mapped[str | None] = mapped_column(ID, index=True)


class AddressScope(Base):
    """neutron's address scopes (no standard attributes there either)."""
    __tablename__ = "network_address_scopes"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    project_id: Mapped[str] = mapped_column(PROJECT, index=True)
    name: Mapped[str] = mapped_column(sa.String(255), default="")
    ip_version: Mapped[int] = mapped_column()
    shared: Mapped[bool] = mapped_column(default=False)


class PortForwarding(Base):
    """A floating IP's port forwarding: its external port to a port's fixed IP and port
    (neutron's floating-ip-port-forwarding extension; no standard attributes there)."""
    __tablename__ = "network_port_forwardings"
    __table_args__ = (
        sa.UniqueConstraint("floatingip_id", "external_port", "protocol",
                            name="uq_network_pf_external"),
        sa.UniqueConstraint("internal_port_id", "internal_ip_address", "internal_port",
                            "protocol", name="uq_network_pf_internal"))
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    floatingip_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_floating_ips.id", ondelete="CASCADE"), index=True)
    internal_port_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_ports.id", ondelete="CASCADE"), index=True)
    internal_ip_address: Mapped[str] = mapped_column(sa.String(64))
    internal_port: Mapped[int] = mapped_column()  # the first of the range
    external_port: Mapped[int] = mapped_column()
    # added in 0005: the last port of a range (floating-ip-port-forwarding-port-ranges);
    # None: a single port
    internal_port_end: Mapped[int | None] = mapped_column()
    external_port_end: Mapped[int | None] = mapped_column()
    protocol: Mapped[str] = mapped_column(sa.String(40))
    description: Mapped[str] = mapped_column(sa.String(255), default="")


class Trunk(StandardAttrs, Base):
    """A trunk: a parent port carrying subports' traffic tagged by VLAN (neutron's trunk
    extension). The parent and every subport belong to one trunk at most."""
    __tablename__ = "network_trunks"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    project_id: Mapped[str] = mapped_column(PROJECT, index=True)
    name: Mapped[str] = mapped_column(sa.String(255), default="")
    admin_state_up: Mapped[bool] = mapped_column(default=True)
    status: Mapped[str] = mapped_column(sa.String(16), default="DOWN")
    port_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_ports.id", ondelete="CASCADE"), unique=True)


class SubPort(Base):
    __tablename__ = "network_trunk_subports"
    __table_args__ = (sa.UniqueConstraint("trunk_id", "segmentation_type", "segmentation_id",
                                          name="uq_network_subport_segmentation"),)
    port_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_ports.id", ondelete="CASCADE"), primary_key=True)
    trunk_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_trunks.id", ondelete="CASCADE"), index=True)
    segmentation_type: Mapped[str] = mapped_column(sa.String(32))
    segmentation_id: Mapped[int] = mapped_column()


class QosPolicy(StandardAttrs, Base):
    """A QoS policy: a named set of rules (neutron's qos extension). Rules are recorded;
    no traffic is shaped."""
    __tablename__ = "network_qos_policies"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    project_id: Mapped[str] = mapped_column(PROJECT, index=True)
    name: Mapped[str] = mapped_column(sa.String(255), default="")
    shared: Mapped[bool] = mapped_column(default=False)
    is_default: Mapped[bool] = mapped_column(default=False)


class QosBandwidthLimitRule(Base):
    __tablename__ = "network_qos_bandwidth_limit_rules"
    __table_args__ = (sa.UniqueConstraint("qos_policy_id", "direction",
                                          name="uq_network_qos_bw_direction"),)
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    qos_policy_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_qos_policies.id", ondelete="CASCADE"), index=True)
    max_kbps: Mapped[int] = mapped_column()
    max_burst_kbps: Mapped[int] = mapped_column(default=0)
    direction: Mapped[str] = mapped_column(sa.String(16), default="egress")


class QosRule(Base):
    """A QoS rule other than bandwidth_limit: dscp_marking (``value`` is dscp_mark),
    minimum_bandwidth (min_kbps), minimum_packet_rate (min_kpps) or packet_rate_limit
    (max_kpps, ``burst`` max_burst_kpps). One rule per type and direction in a policy ('' for
    DSCP, which has none), as neutron's duplicates()."""
    __tablename__ = "network_qos_rules"
    __table_args__ = (sa.UniqueConstraint("qos_policy_id", "rule_type", "direction",
                                          name="uq_network_qos_rules_type_direction"),)
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    qos_policy_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_qos_policies.id", ondelete="CASCADE"), index=True)
    rule_type: Mapped[str] = mapped_column(sa.String(32))
    direction: Mapped[str] = mapped_column(sa.String(16), default="")
    value: Mapped[int] = mapped_column()
    # added in 0008: packet_rate_limit's max_burst_kpps
    burst: Mapped[int | None] = mapped_column()


class RbacPolicy(Base):
    """Neutron's rbac-policies: ``object_type`` object ``object_id`` is shared with (or made
    external for) ``target_project`` ('*': every project). The '*' rows mirror the
    object's own ``shared`` / ``external`` columns, which the hot paths read."""
    __tablename__ = "network_rbac_policies"
    __table_args__ = (sa.UniqueConstraint("object_type", "object_id", "action",
                                          "target_project", name="uq_network_rbac"),)
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    project_id: Mapped[str] = mapped_column(PROJECT, index=True)
    object_type: Mapped[str] = mapped_column(sa.String(32))
    object_id: Mapped[str] = mapped_column(ID, index=True)
    action: Mapped[str] = mapped_column(sa.String(32))
    target_project: Mapped[str] = mapped_column(PROJECT, index=True)


class NetworkAgent(Base):
    """An agent as its heartbeats describe it (network/agents.py): one row per (host,
    binary), its id derived from both, so a restarted agent keeps its row. An admin sets
    admin_state_up and description (PUT /v2.0/agents/{id}). Rows of 0005 hold only those
    two: their agent fills the rest on its next heartbeat (until then they are not
    shown)."""
    __tablename__ = "network_agents"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    admin_state_up: Mapped[bool] = mapped_column(default=True)
    description: Mapped[str | None] = mapped_column(sa.String(255))
    # added in 0006: what the agent reports
    agent_type: Mapped[str | None] = mapped_column(sa.String(255))
    binary: Mapped[str | None] = mapped_column(sa.String(255))
    topic: Mapped[str | None] = mapped_column(sa.String(255))
    host: Mapped[str | None] = mapped_column(sa.String(255), index=True)
    availability_zone: Mapped[str | None] = mapped_column(sa.String(255))
    configurations: Mapped[dict | None] = mapped_column(sa.JSON)
    resources_synced: Mapped[bool | None] = mapped_column()
    created_at: Mapped[dt.datetime | None] = mapped_column()
    started_at: Mapped[dt.datetime | None] = mapped_column()
    heartbeat_timestamp: Mapped[dt.datetime | None] = mapped_column()


class AddressGroup(StandardAttrs, Base):
    """A named set of CIDRs that security group rules can name as their remote
    (neutron's address-group extension). ``addresses``: canonical CIDRs, sorted."""
    __tablename__ = "network_address_groups"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    project_id: Mapped[str] = mapped_column(PROJECT, index=True)
    name: Mapped[str] = mapped_column(sa.String(255), default="")
    addresses: Mapped[list] = mapped_column(sa.JSON, default=list)


class Flavor(Base):
    """neutron's network flavors: a named choice of service profiles for a service type
    (no project, no standard attributes there either)."""
    __tablename__ = "network_flavors"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255), default="")
    description: Mapped[str] = mapped_column(sa.String(1024), default="")
    service_type: Mapped[str] = mapped_column(sa.String(36))
    enabled: Mapped[bool] = mapped_column(default=True)


class ServiceProfile(Base):
    __tablename__ = "network_service_profiles"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    description: Mapped[str] = mapped_column(sa.String(1024), default="")
    driver: Mapped[str] = mapped_column(sa.String(1024), default="")
    metainfo: Mapped[str] = mapped_column(sa.String(4096), default="")
    enabled: Mapped[bool] = mapped_column(default=True)


class FlavorServiceProfile(Base):
    __tablename__ = "network_flavor_service_profiles"
    flavor_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_flavors.id", ondelete="CASCADE"), primary_key=True)
    service_profile_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_service_profiles.id", ondelete="CASCADE"), primary_key=True,
        index=True)


class RouterL3AgentBinding(Base):
    """Where an admin put a router (l3_agent_scheduler, network/l3_scheduling.py). A router
    without a row is on the network service's own L3 agent, where every router is
    scheduled when made; a row without an agent is a router taken off its agent and not
    yet scheduled again (neutron's unhosted router)."""
    __tablename__ = "network_router_l3_agent_bindings"
    router_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_routers.id", ondelete="CASCADE"), primary_key=True)
    l3_agent_id: Mapped[str | None] = mapped_column(ID, index=True)


class NetworkSegment(StandardAttrs, Base):
    """A network's second and further segments (neutron's segment and multi-provider
    extensions, network/segments.py); its first stays in its own row (network_type,
    physical_network, segmentation_id, segment_key). Ports bind to the first."""
    __tablename__ = "network_segments"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    network_id: Mapped[str] = mapped_column(
        sa.ForeignKey("network_networks.id", ondelete="CASCADE"), index=True)
    name: Mapped[str | None] = mapped_column(sa.String(255))
    network_type: Mapped[str] = mapped_column(sa.String(32))
    physical_network: Mapped[str | None] = mapped_column(sa.String(64))
    segmentation_id: Mapped[int | None] = mapped_column()
    # as Network.segment_key; a network's first segment and these are checked together
    segment_key: Mapped[str | None] = mapped_column(sa.String(128), unique=True)


Network.extra_segments = relationship(
    NetworkSegment, order_by=(NetworkSegment.created_at, NetworkSegment.id), viewonly=True)
