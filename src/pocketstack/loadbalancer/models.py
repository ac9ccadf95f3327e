"""The load balancer service's tables (Octavia's data model, reduced to what its API
shows). Every object under a load balancer carries the load balancer's id, so the state
machine reads and locks one row set per change."""
# No `from __future__ import annotations`: SQLAlchemy would then eval every Mapped[...]
# annotation string when the class is made.

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from pocketstack.common.db import Base
from pocketstack.common.timeutils import utcnow

ID = sa.String(36)
NAME = sa.String(255)


class Provisioned:
    """What every object of the load balancer tree has: owner, statuses, tags, times."""
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(255), index=True)
    name: Mapped[str | None] = mapped_column(NAME)
    description: Mapped[str | None] = mapped_column(NAME)
    admin_state_up: Mapped[bool] = mapped_column(default=True)
    provisioning_status: Mapped[str] = mapped_column(sa.String(16))
    operating_status: Mapped[str] = mapped_column(sa.String(16))
    tags: Mapped[list] = mapped_column(sa.JSON, default=list)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None]


class LoadBalancer(Provisioned, Base):
    __tablename__ = "loadbalancer_load_balancers"
    vip_address: Mapped[str | None] = mapped_column(sa.String(64))
    vip_port_id: Mapped[str | None] = mapped_column(ID)
    vip_subnet_id: Mapped[str | None] = mapped_column(ID)
    vip_network_id: Mapped[str | None] = mapped_column(ID)
    vip_qos_policy_id: Mapped[str | None] = mapped_column(ID)
    vip_port_owned: Mapped[bool] = mapped_column(default=True)  # False: the user's own port
    provider: Mapped[str] = mapped_column(sa.String(64))
    flavor_id: Mapped[str | None] = mapped_column(ID)
    availability_zone: Mapped[str | None] = mapped_column(NAME)
    # The provider driver applying its pending change (host:pid), so that the drivers of
    # several API processes never apply one load balancer twice at once.
    claimed_by: Mapped[str | None] = mapped_column(NAME)
    claimed_at: Mapped[dt.datetime | None]


class Listener(Provisioned, Base):
    __tablename__ = "loadbalancer_listeners"
    __table_args__ = (sa.UniqueConstraint("load_balancer_id", "protocol_port", "l4_protocol"),)
    load_balancer_id: Mapped[str] = mapped_column(ID, index=True)
    protocol: Mapped[str] = mapped_column(sa.String(32))
    # TCP listeners and UDP ones may share a port
    l4_protocol: Mapped[str] = mapped_column(sa.String(8))
    protocol_port: Mapped[int]
    connection_limit: Mapped[int] = mapped_column(default=-1)
    default_pool_id: Mapped[str | None] = mapped_column(ID)
    timeout_client_data: Mapped[int | None]
    timeout_member_connect: Mapped[int | None]
    timeout_member_data: Mapped[int | None]
    timeout_tcp_inspect: Mapped[int | None]
    insert_headers: Mapped[dict] = mapped_column(sa.JSON, default=dict)
    allowed_cidrs: Mapped[list | None] = mapped_column(sa.JSON)
    default_tls_container_ref: Mapped[str | None] = mapped_column(sa.String(1024))
    sni_container_refs: Mapped[list] = mapped_column(sa.JSON, default=list)
    client_ca_tls_container_ref: Mapped[str | None] = mapped_column(sa.String(1024))
    client_authentication: Mapped[str] = mapped_column(sa.String(16), default="NONE",
                                                       server_default="NONE")
    client_crl_container_ref: Mapped[str | None] = mapped_column(sa.String(1024))


class Pool(Provisioned, Base):
    __tablename__ = "loadbalancer_pools"
    load_balancer_id: Mapped[str] = mapped_column(ID, index=True)
    protocol: Mapped[str] = mapped_column(sa.String(32))
    lb_algorithm: Mapped[str] = mapped_column(sa.String(32))
    session_persistence: Mapped[dict | None] = mapped_column(sa.JSON)
    tls_enabled: Mapped[bool] = mapped_column(default=False)
    tls_container_ref: Mapped[str | None] = mapped_column(sa.String(1024))
    ca_tls_container_ref: Mapped[str | None] = mapped_column(sa.String(1024))
    crl_container_ref: Mapped[str | None] = mapped_column(sa.String(1024))


class Member(Provisioned, Base):
    __tablename__ = "loadbalancer_members"
    load_balancer_id: Mapped[str] = mapped_column(ID, index=True)
    pool_id: Mapped[str] = mapped_column(ID, index=True)
    address: Mapped[str] = mapped_column(sa.String(64))
    protocol_port: Mapped[int]
    weight: Mapped[int] = mapped_column(default=1)
    backup: Mapped[bool] = mapped_column(default=False)
    subnet_id: Mapped[str | None] = mapped_column(ID)
    monitor_address: Mapped[str | None] = mapped_column(sa.String(64))
    monitor_port: Mapped[int | None]


class HealthMonitor(Provisioned, Base):
    __tablename__ = "loadbalancer_health_monitors"
    load_balancer_id: Mapped[str] = mapped_column(ID, index=True)
    pool_id: Mapped[str] = mapped_column(ID, unique=True)  # one monitor per pool
    type: Mapped[str] = mapped_column(sa.String(36))
    delay: Mapped[int]
    timeout: Mapped[int]
    max_retries: Mapped[int]
    max_retries_down: Mapped[int] = mapped_column(default=3)
    http_method: Mapped[str | None] = mapped_column(sa.String(16))
    url_path: Mapped[str | None] = mapped_column(sa.String(2048))
    expected_codes: Mapped[str | None] = mapped_column(sa.String(64))
    http_version: Mapped[float | None]
    domain_name: Mapped[str | None] = mapped_column(NAME)


class L7Policy(Provisioned, Base):
    __tablename__ = "loadbalancer_l7policies"
    load_balancer_id: Mapped[str] = mapped_column(ID, index=True)
    listener_id: Mapped[str] = mapped_column(ID, index=True)
    action: Mapped[str] = mapped_column(sa.String(36))
    position: Mapped[int]
    redirect_pool_id: Mapped[str | None] = mapped_column(ID)
    redirect_url: Mapped[str | None] = mapped_column(sa.String(2048))
    redirect_prefix: Mapped[str | None] = mapped_column(sa.String(2048))
    redirect_http_code: Mapped[int | None]


class L7Rule(Provisioned, Base):
    __tablename__ = "loadbalancer_l7rules"
    load_balancer_id: Mapped[str] = mapped_column(ID, index=True)
    l7policy_id: Mapped[str] = mapped_column(ID, index=True)
    type: Mapped[str] = mapped_column(sa.String(36))
    compare_type: Mapped[str] = mapped_column(sa.String(36))
    key: Mapped[str | None] = mapped_column(NAME)
    value: Mapped[str] = mapped_column(NAME)
    invert: Mapped[bool] = mapped_column(default=False)


class Amphora(Base):
    """The simulated provider's one amphora per load balancer (for the admin API)."""
    __tablename__ = "loadbalancer_amphorae"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    load_balancer_id: Mapped[str | None] = mapped_column(ID, index=True)
    status: Mapped[str] = mapped_column(sa.String(36))
    role: Mapped[str | None] = mapped_column(sa.String(36))
    lb_network_ip: Mapped[str | None] = mapped_column(sa.String(64))
    ha_ip: Mapped[str | None] = mapped_column(sa.String(64))
    ha_port_id: Mapped[str | None] = mapped_column(ID)
    compute_id: Mapped[str | None] = mapped_column(ID)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None]


class Quota(Base):
    __tablename__ = "loadbalancer_quotas"
    project_id: Mapped[str] = mapped_column(sa.String(255), primary_key=True)
    load_balancer: Mapped[int | None]
    listener: Mapped[int | None]
    pool: Mapped[int | None]
    health_monitor: Mapped[int | None]
    member: Mapped[int | None]
    l7policy: Mapped[int | None]
    l7rule: Mapped[int | None]


class FlavorProfile(Base):
    __tablename__ = "loadbalancer_flavor_profiles"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    name: Mapped[str] = mapped_column(NAME)
    provider_name: Mapped[str] = mapped_column(sa.String(64))
    flavor_data: Mapped[str] = mapped_column(sa.Text)


class Flavor(Base):
    __tablename__ = "loadbalancer_flavors"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    name: Mapped[str] = mapped_column(NAME, unique=True)
    description: Mapped[str | None] = mapped_column(NAME)
    enabled: Mapped[bool] = mapped_column(default=True)
    flavor_profile_id: Mapped[str] = mapped_column(ID)


class AvailabilityZoneProfile(Base):
    __tablename__ = "loadbalancer_az_profiles"
    id: Mapped[str] = mapped_column(ID, primary_key=True)
    name: Mapped[str] = mapped_column(NAME)
    provider_name: Mapped[str] = mapped_column(sa.String(64))
    availability_zone_data: Mapped[str] = mapped_column(sa.Text)


class AvailabilityZone(Base):
    __tablename__ = "loadbalancer_availability_zones"
    name: Mapped[str] = mapped_column(NAME, primary_key=True)
    description: Mapped[str | None] = mapped_column(NAME)
    enabled: Mapped[bool] = mapped_column(default=True)
    availability_zone_profile_id: Mapped[str] = mapped_column(ID)
