"""Compute tables (prefix compute_). Instances keep nova's vm_state/task_state/power_state;
the flavor and request spec are snapshotted as JSON at boot, as nova does, so later flavor
edits never change a running server. Resource claims are placement's allocations
(compute/scheduler/claims.py); compute_nodes' *_used columns follow them for
os-hypervisors."""
# No `from __future__ import annotations`: SQLAlchemy would then eval every Mapped[...]
# annotation string when the class is made (a sixth of the models' import time).

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from pocketstack.common.db import Base
from pocketstack.common.timeutils import utcnow


class Flavor(Base):
    __tablename__ = "compute_flavors"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    flavorid: Mapped[str] = mapped_column(sa.String(255), unique=True)
    name: Mapped[str] = mapped_column(sa.String(255), unique=True)
    memory_mb: Mapped[int]
    vcpus: Mapped[int]
    root_gb: Mapped[int] = mapped_column(default=0)
    ephemeral_gb: Mapped[int] = mapped_column(default=0)
    swap: Mapped[int] = mapped_column(default=0)
    rxtx_factor: Mapped[float] = mapped_column(default=1.0)
    is_public: Mapped[bool] = mapped_column(default=True)
    disabled: Mapped[bool] = mapped_column(default=False)
    description: Mapped[str | None] = mapped_column(sa.Text)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None]


class FlavorExtraSpec(Base):
    __tablename__ = "compute_flavor_extra_specs"
    flavor_id: Mapped[int] = mapped_column(
        sa.ForeignKey("compute_flavors.id", ondelete="CASCADE"), primary_key=True)
    key: Mapped[str] = mapped_column(sa.String(255), primary_key=True)
    value: Mapped[str] = mapped_column(sa.String(255))


class FlavorAccess(Base):
    __tablename__ = "compute_flavor_access"
    flavor_id: Mapped[int] = mapped_column(
        sa.ForeignKey("compute_flavors.id", ondelete="CASCADE"), primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(255), primary_key=True)


class KeyPair(Base):
    __tablename__ = "compute_keypairs"
    __table_args__ = (sa.UniqueConstraint("user_id", "name", name="uq_keypair_user_name"),)
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(sa.String(255), index=True)
    name: Mapped[str] = mapped_column(sa.String(255))
    fingerprint: Mapped[str] = mapped_column(sa.String(255))
    public_key: Mapped[str] = mapped_column(sa.Text)
    type: Mapped[str] = mapped_column(sa.String(16), default="ssh")
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Instance(Base):
    __tablename__ = "compute_instances"
    __table_args__ = (sa.Index("ix_compute_instances_project_deleted", "project_id", "deleted"),
                      sa.Index("ix_compute_instances_host", "host"),
                      sa.Index("ix_compute_instances_vm_state", "vm_state"))
    uuid: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    display_name: Mapped[str] = mapped_column(sa.String(255))
    display_description: Mapped[str | None] = mapped_column(sa.Text)
    hostname: Mapped[str] = mapped_column(sa.String(255), default="")
    project_id: Mapped[str] = mapped_column(sa.String(255))
    user_id: Mapped[str] = mapped_column(sa.String(255))
    image_ref: Mapped[str] = mapped_column(sa.String(255), default="")
    flavor: Mapped[dict] = mapped_column(sa.JSON)
    vcpus: Mapped[int] = mapped_column(default=0)  # copies of the flavor's, for quota sums
    memory_mb: Mapped[int] = mapped_column(default=0)
    key_name: Mapped[str | None] = mapped_column(sa.String(255))
    key_data: Mapped[str | None] = mapped_column(sa.Text)
    vm_state: Mapped[str] = mapped_column(sa.String(32))
    task_state: Mapped[str | None] = mapped_column(sa.String(32))
    power_state: Mapped[int] = mapped_column(default=0)
    host: Mapped[str | None] = mapped_column(sa.String(255))
    node: Mapped[str | None] = mapped_column(sa.String(255))
    availability_zone: Mapped[str | None] = mapped_column(sa.String(255))
    reservation_id: Mapped[str] = mapped_column(sa.String(255), default="")
    launch_index: Mapped[int] = mapped_column(default=0)
    config_drive: Mapped[str] = mapped_column(sa.String(16), default="")
    user_data: Mapped[str | None] = mapped_column(sa.Text)
    access_ip_v4: Mapped[str | None] = mapped_column(sa.String(64))
    access_ip_v6: Mapped[str | None] = mapped_column(sa.String(64))
    auto_disk_config: Mapped[bool] = mapped_column(default=False)
    root_device_name: Mapped[str | None] = mapped_column(sa.String(255))
    locked_by: Mapped[str | None] = mapped_column(sa.String(16))
    locked_reason: Mapped[str | None] = mapped_column(sa.String(255))
    metadata_: Mapped[dict] = mapped_column("metadata", sa.JSON, default=dict)
    system_metadata: Mapped[dict] = mapped_column(sa.JSON, default=dict)
    security_groups: Mapped[list] = mapped_column(sa.JSON, default=list)
    # [{"network_id", "port_id", "fixed_ip", "tag"}] as requested; "auto"/"none" kept as such
    requested_networks: Mapped[list | str] = mapped_column(sa.JSON, default=list)
    # the ports the server has: [{"port_id", "network_id", "network_name", "mac_address",
    # "fixed_ips": [{"ip_address", "version"}], "created": bool}]
    network_info: Mapped[list] = mapped_column(sa.JSON, default=list)
    request_spec: Mapped[dict] = mapped_column(sa.JSON, default=dict)
    # Bumped on every (re)schedule: stale workers' conditional updates then match nothing.
    attempt: Mapped[int] = mapped_column(default=0)
    build_deadline: Mapped[dt.datetime | None]
    # The creating user's token while a build that creates volumes runs: a build
    # rescheduled in the background creates them as that user (with the service token
    # beside it, the volume service accepts it even once expired). Cleared when it ends.
    build_token: Mapped[str | None] = mapped_column(sa.Text)
    progress: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(default=utcnow)
    launched_at: Mapped[dt.datetime | None]
    terminated_at: Mapped[dt.datetime | None]
    deleted_at: Mapped[dt.datetime | None]
    deleted: Mapped[bool] = mapped_column(default=False)


class InstanceTag(Base):
    __tablename__ = "compute_instance_tags"
    instance_uuid: Mapped[str] = mapped_column(
        sa.ForeignKey("compute_instances.uuid", ondelete="CASCADE"), primary_key=True)
    tag: Mapped[str] = mapped_column(sa.String(80), primary_key=True, index=True)


class InstanceFault(Base):
    __tablename__ = "compute_instance_faults"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    instance_uuid: Mapped[str] = mapped_column(sa.String(36), index=True)
    code: Mapped[int]
    message: Mapped[str] = mapped_column(sa.Text)
    details: Mapped[str] = mapped_column(sa.Text, default="")
    host: Mapped[str | None] = mapped_column(sa.String(255))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class InstanceAction(Base):
    """One user request on a server (create, stop, …), keyed by its request id."""
    __tablename__ = "compute_instance_actions"
    __table_args__ = (sa.Index("ix_compute_actions_instance", "instance_uuid", "start_time"),
                      sa.Index("ix_compute_actions_request", "request_id"))
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    instance_uuid: Mapped[str] = mapped_column(sa.String(36))
    action: Mapped[str] = mapped_column(sa.String(255))
    request_id: Mapped[str] = mapped_column(sa.String(255))
    user_id: Mapped[str | None] = mapped_column(sa.String(255))
    project_id: Mapped[str | None] = mapped_column(sa.String(255))
    start_time: Mapped[dt.datetime] = mapped_column(default=utcnow)
    finish_time: Mapped[dt.datetime | None]
    message: Mapped[str | None] = mapped_column(sa.String(255))
    updated_at: Mapped[dt.datetime | None] = mapped_column(default=utcnow)


class ActionEvent(Base):
    """One pipeline step: the trace row and nova's instance action event in one."""
    __tablename__ = "compute_instance_action_events"
    __table_args__ = (sa.Index("ix_compute_events_request", "request_id"),
                      sa.Index("ix_compute_events_action", "action_id"))
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    action_id: Mapped[int | None] = mapped_column(sa.Integer)
    request_id: Mapped[str] = mapped_column(sa.String(255))
    instance_uuid: Mapped[str] = mapped_column(sa.String(36), index=True)
    event: Mapped[str] = mapped_column(sa.String(255))
    service: Mapped[str] = mapped_column(sa.String(64))
    host: Mapped[str | None] = mapped_column(sa.String(255))
    seed_step: Mapped[str] = mapped_column(sa.String(16), default="")
    start_time: Mapped[dt.datetime]
    finish_time: Mapped[dt.datetime | None]
    result: Mapped[str | None] = mapped_column(sa.String(32))
    detail: Mapped[str] = mapped_column(sa.Text, default="")
    traceback: Mapped[str | None] = mapped_column(sa.Text)


class Service(Base):
    __tablename__ = "compute_services"
    __table_args__ = (sa.UniqueConstraint("host", "binary", name="uq_service_host_binary"),)
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(sa.String(36), unique=True)
    host: Mapped[str] = mapped_column(sa.String(255))
    binary: Mapped[str] = mapped_column(sa.String(255))
    topic: Mapped[str] = mapped_column(sa.String(255))
    disabled: Mapped[bool] = mapped_column(default=False)
    disabled_reason: Mapped[str | None] = mapped_column(sa.String(255))
    forced_down: Mapped[bool] = mapped_column(default=False)
    last_seen_up: Mapped[dt.datetime | None]
    report_count: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None]


class ComputeNode(Base):
    """A compute node: its totals, and usage counters os-hypervisors shows, kept in step
    with its resource provider in placement (same uuid), where the claims are."""
    __tablename__ = "compute_nodes"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(sa.String(36), unique=True)
    host: Mapped[str] = mapped_column(sa.String(255), unique=True)
    hypervisor_hostname: Mapped[str] = mapped_column(sa.String(255))
    hypervisor_type: Mapped[str] = mapped_column(sa.String(64), default="fake")
    hypervisor_version: Mapped[int] = mapped_column(default=1000)
    host_ip: Mapped[str] = mapped_column(sa.String(64), default="127.0.0.1")
    # Where its guests' disks live, when other hosts see them too (libvirt's instances
    # path on shared storage): hosts of the same value can take each other's guests.
    shared_storage: Mapped[str | None] = mapped_column(sa.String(255))
    vcpus: Mapped[int]
    memory_mb: Mapped[int]
    local_gb: Mapped[int]
    vcpus_used: Mapped[int] = mapped_column(default=0)
    memory_mb_used: Mapped[int] = mapped_column(default=0)
    local_gb_used: Mapped[int] = mapped_column(default=0)
    running_vms: Mapped[int] = mapped_column(default=0)
    cpu_allocation_ratio: Mapped[float] = mapped_column(default=16.0)
    ram_allocation_ratio: Mapped[float] = mapped_column(default=1.5)
    disk_allocation_ratio: Mapped[float] = mapped_column(default=1.0)
    generation: Mapped[int] = mapped_column(default=0)
    # Recent build failures (the BuildFailureWeigher); reset by a successful build.
    failed_builds: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None]


class Allocation(Base):
    """Claims from before placement held them; a host adopts its rows into placement at start-up."""
    __tablename__ = "compute_allocations"
    instance_uuid: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    node_id: Mapped[int] = mapped_column(sa.Integer, index=True)
    host: Mapped[str] = mapped_column(sa.String(255))
    vcpus: Mapped[int]
    memory_mb: Mapped[int]
    disk_gb: Mapped[int]
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Quota(Base):
    __tablename__ = "compute_quotas"
    project_id: Mapped[str] = mapped_column(sa.String(255), primary_key=True)
    resource: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    hard_limit: Mapped[int]


class ServerGroup(Base):
    __tablename__ = "compute_server_groups"
    uuid: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255))
    project_id: Mapped[str] = mapped_column(sa.String(255), index=True)
    user_id: Mapped[str] = mapped_column(sa.String(255))
    policy: Mapped[str] = mapped_column(sa.String(64))
    rules: Mapped[dict] = mapped_column(sa.JSON, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class ServerGroupMember(Base):
    __tablename__ = "compute_server_group_members"
    group_uuid: Mapped[str] = mapped_column(
        sa.ForeignKey("compute_server_groups.uuid", ondelete="CASCADE"), primary_key=True)
    instance_uuid: Mapped[str] = mapped_column(sa.String(36), primary_key=True, index=True)


class Aggregate(Base):
    __tablename__ = "compute_aggregates"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(sa.String(36), unique=True)
    name: Mapped[str] = mapped_column(sa.String(255), unique=True)
    metadata_: Mapped[dict] = mapped_column("metadata", sa.JSON, default=dict)
    hosts: Mapped[list] = mapped_column(sa.JSON, default=list)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None]


class Migration(Base):
    """A resize (nova's migration record): the source keeps its claim under this row's
    uuid until the resize is confirmed (released) or reverted (handed back)."""
    __tablename__ = "compute_migrations"
    __table_args__ = (sa.Index("ix_compute_migrations_instance_status", "instance_uuid",
                               "status"),)
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(sa.String(36), unique=True)
    instance_uuid: Mapped[str] = mapped_column(sa.String(36))
    migration_type: Mapped[str] = mapped_column(sa.String(16), default="resize")
    status: Mapped[str] = mapped_column(sa.String(32))
    source_compute: Mapped[str | None] = mapped_column(sa.String(255))
    source_node: Mapped[str | None] = mapped_column(sa.String(255))
    dest_compute: Mapped[str | None] = mapped_column(sa.String(255))
    dest_node: Mapped[str | None] = mapped_column(sa.String(255))
    old_flavor: Mapped[dict] = mapped_column(sa.JSON)
    new_flavor: Mapped[dict] = mapped_column(sa.JSON)
    old_vm_state: Mapped[str] = mapped_column(sa.String(32))
    project_id: Mapped[str] = mapped_column(sa.String(255))
    user_id: Mapped[str] = mapped_column(sa.String(255))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(default=utcnow)


class BlockDeviceMapping(Base):
    """A volume of a server (nova's block_device_mapping, volume destinations only: the
    local root disk is the server's image_ref). Written by the API with the server (boot)
    or the attach request; the host fills in the volume it created, the attachment and the
    connection_info. The row goes when the volume is detached or the server deleted."""
    __tablename__ = "compute_block_device_mappings"
    __table_args__ = (sa.UniqueConstraint("instance_uuid", "device_name",
                                          name="uq_compute_bdm_instance_device"),
                      sa.Index("ix_compute_bdm_volume", "volume_id"))
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(sa.String(36), unique=True)
    instance_uuid: Mapped[str] = mapped_column(sa.String(36), index=True)
    source_type: Mapped[str] = mapped_column(sa.String(16))  # volume, image, snapshot, blank
    destination_type: Mapped[str] = mapped_column(sa.String(16), default="volume")
    boot_index: Mapped[int | None]
    device_name: Mapped[str | None] = mapped_column(sa.String(255))
    device_type: Mapped[str | None] = mapped_column(sa.String(255))
    disk_bus: Mapped[str | None] = mapped_column(sa.String(255))
    guest_format: Mapped[str | None] = mapped_column(sa.String(255))
    volume_id: Mapped[str | None] = mapped_column(sa.String(36))
    image_id: Mapped[str | None] = mapped_column(sa.String(36))
    snapshot_id: Mapped[str | None] = mapped_column(sa.String(36))
    volume_size: Mapped[int | None]
    volume_type: Mapped[str | None] = mapped_column(sa.String(255))
    delete_on_termination: Mapped[bool] = mapped_column(default=False)
    tag: Mapped[str | None] = mapped_column(sa.String(255))
    attachment_id: Mapped[str | None] = mapped_column(sa.String(36))
    # SQL NULL (not JSON null) until the host connects the volume: queries look for it
    connection_info: Mapped[dict | None] = mapped_column(sa.JSON(none_as_null=True))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(default=utcnow)
