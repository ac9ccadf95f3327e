"""Background services of compute: the conductor, the scheduler and compute agents (each a
real RPC server on compute.<host>; the hosts of one process share a worker pool, one
heartbeat and one periodic loop: fleet.py). The
all-in-one (cloud.py) runs all of them, compute as the simulated hosts ([fake] hosts = 4:
cmp-1 … cmp-4); `pocketstack service conductor|scheduler|compute --host NAME` runs one
per process (cli/service.py). ``start_roles`` is the one place that says what each role
starts. Also bootstraps DevStack's flavors, idempotently."""
from __future__ import annotations

import logging
import threading

import sqlalchemy as sa

from pocketstack.common import config, db, rpc, runtime
from pocketstack.common.context import RequestContext
from pocketstack.compute.runners import BuildPool, RPCService, make_driver

LOG = logging.getLogger(__name__)

# DevStack's flavors: m1.nano/m1.micro as lib/tempest creates them (TEMPEST_FLAVOR_RAM=192,
# TEMPEST_FLAVOR_ALT_RAM=256, disk = the cirros image's size in GiB = 1) and nova's classic
# m1.tiny … m1.xlarge. (name, id, RAM MB, disk GB, vCPUs)
DEVSTACK_FLAVORS = (
    ("m1.nano", "42", 192, 1, 1),
    ("m1.micro", "84", 256, 1, 1),
    ("m1.tiny", "1", 512, 1, 1),
    ("m1.small", "2", 2048, 20, 1),
    ("m1.medium", "3", 4096, 40, 2),
    ("m1.large", "4", 8192, 80, 4),
    ("m1.xlarge", "5", 16384, 160, 8),
)


def bootstrap_flavors() -> None:
    from pocketstack.compute.models import Flavor

    with db.transaction() as s:
        have = set(s.scalars(sa.select(Flavor.flavorid)).all())
        names = set(s.scalars(sa.select(Flavor.name)).all())
        for name, flavorid, ram, disk, vcpus in DEVSTACK_FLAVORS:
            if flavorid not in have and name not in names:
                s.add(Flavor(flavorid=flavorid, name=name, memory_mb=ram, root_gb=disk,
                             vcpus=vcpus, is_public=True))


def start_conductor(cloud=None) -> RPCService:
    from pocketstack.compute.conductor.manager import ConductorManager

    manager = ConductorManager()
    service = RPCService("conductor", manager, workers=16, periodic=manager.periodic_tasks,
                         binary="nova-conductor", host=config.CONF.host)
    service.manager = manager
    return service


def start_scheduler(cloud=None) -> RPCService:
    from pocketstack.compute.scheduler.manager import SchedulerManager

    return RPCService("scheduler", SchedulerManager(), workers=16, binary="nova-scheduler",
                      host=config.CONF.host)


def start_compute(host: str, data_dir: str, driver: str | None = None) -> RPCService:
    from pocketstack.compute.manager import ComputeManager

    kind = driver or config.CONF.compute_driver
    manager = ComputeManager(host, make_driver(kind, host, data_dir), data_dir)
    manager.register_node()
    builds = BuildPool(manager, workers=16)
    service = RPCService("compute", builds, server=host, workers=16,
                         periodic=manager.periodic_tasks, binary="nova-compute", host=host)
    service.manager, service.builds = manager, builds
    threading.Thread(target=runtime.bind(_safe_init), args=(manager,), name=f"init-{host}",
                     daemon=True).start()
    return service


def _safe_init(manager) -> None:
    try:
        manager.init_host()
    except Exception:  # noqa: BLE001
        LOG.exception("Recovery on %s failed", manager.host)


def fake_hosts() -> list[str]:
    conf = config.CONF.fake
    return [f"{conf.host_prefix}{i}" for i in range(1, conf.hosts + 1)]


def libvirt_host_name() -> str:
    return config.libvirt_host_name()  # in common: the network agent names it alike


def all_in_one_hosts() -> list[tuple[str, str]]:
    """(host, driver) of the compute agents `pocketstack up` runs: the simulated hosts, or
    with compute_driver = libvirt one real host named after this machine; [libvirt]
    enabled adds that real host next to the simulated ones."""
    if config.CONF.compute_driver == "libvirt":
        return [(libvirt_host_name(), "libvirt")]
    hosts = [(host, "fake") for host in fake_hosts()]
    if config.CONF.libvirt.enabled:
        hosts.append((libvirt_host_name(), "libvirt"))
    return hosts


def own_host_users(runs_hosts: bool) -> list[str]:
    """The identity users of the compute hosts this cloud runs itself on the conductor
    ([compute] database_access = conductor), in its process or its `up --workers`
    children: its bootstrap makes them, as a host elsewhere gets its own from `pocketstack
    host-credential`. None in direct mode."""
    from pocketstack.clients import host_users

    if config.CONF.compute.database_access != "conductor" or not runs_hosts:
        return []
    return [host_users.user_name(host) for host, _ in all_in_one_hosts()]


# The RPC roles a process can run. `pocketstack up` runs all of them (compute as the
# [fake] hosts); `pocketstack service api` none unless given --with; `pocketstack service
# conductor|scheduler|compute` exactly one.
ROLES = ("conductor", "scheduler", "compute")


def start_roles(roles, data_dir: str, hosts=(), recover: bool = True) -> list:
    """Start ``roles`` in this process — the one place that says what each role runs.
    ``hosts`` are the compute agents to run when ``compute`` is among the roles: names
    (with [DEFAULT] compute_driver) or (name, driver) pairs. ``recover`` False leaves the
    conductor's start-up recovery to the caller (start_deferred_recovery), for compute
    hosts that start elsewhere after it."""
    unknown = set(roles) - set(ROLES)
    if unknown:
        raise ValueError(f"Unknown role(s) {', '.join(sorted(unknown))}; one of "
                         f"{', '.join(ROLES)}.")
    services: list = []
    conductor = None
    try:
        if "scheduler" in roles:
            services.append(start_scheduler())
        if "conductor" in roles:
            conductor = start_conductor()
            services.append(conductor)
        if "compute" in roles and hosts:
            # All of this process's hosts as one fleet: one pool, one heartbeat, one
            # periodic loop (compute/fleet.py), however many hosts there are.
            from pocketstack.compute import fleet

            services.extend(fleet.start([(host, None) if isinstance(host, str) else host
                                         for host in hosts], data_dir))
        if recover and conductor is not None and not rpc.is_oslo(config.CONF.transport_url):
            # Once every role here listens (a build cast to a host not started yet would
            # fail): builds a previous process left unscheduled are scheduled. Only with the
            # in-process bus or unix sockets, whose messages died with that process; a
            # broker keeps them for us, and the periodic stalled-build check covers the
            # ones it lost.
            from pocketstack.compute.conductor.recovery import start_recovery

            start_recovery(conductor.manager)
    except BaseException:
        for service in reversed(services):
            service.stop()
        raise
    return services


def start_deferred_recovery(services) -> None:
    """The start-up recovery start_roles(recover=False) left out, for the conductor among
    ``services``: once the compute hosts it casts builds to listen."""
    from pocketstack.compute.conductor.manager import ConductorManager
    from pocketstack.compute.conductor.recovery import start_recovery

    if rpc.is_oslo(config.CONF.transport_url):
        return  # a broker kept the messages (see start_roles)
    for service in services:
        if isinstance(getattr(service, "manager", None), ConductorManager):
            start_recovery(service.manager)


def start(cloud) -> list:
    """The cloud process (`up`, `service api`): DevStack's flavors, then the roles the
    cloud was asked to run in-process (``cloud.roles``; all of them for `up`)."""
    if not getattr(cloud, "api_worker", False):  # once, by the main process (workers.py)
        bootstrap_flavors()
    roles = getattr(cloud, "roles", None)
    if roles is None:
        roles = ROLES
    # `up --workers` with compute hosts on the conductor recovers once they listen
    # (workers.Supervised.start_workers).
    recover = not getattr(cloud, "recovery_waits_for_children", False)
    services = start_roles(roles, cloud.data_dir, all_in_one_hosts(), recover=recover)
    if "compute" in roles and not getattr(cloud, "api_worker", False):
        retire_simulated_hosts({host for host, _ in all_in_one_hosts()})
    return services


# Why a simulated host of an earlier start is out of service: the reason shows in
# `openstack compute service list --long`, and a later start that runs it again clears it.
NOT_RUN_REASON = "simulated host not run by this start of the cloud (compute_driver)"


def retire_simulated_hosts(running: set[str]) -> None:
    """The simulated hosts an earlier start of this data dir ran but this one does not
    (restarted with compute_driver = libvirt) are forced down and disabled at once, instead
    of reading `up` until their last heartbeat ages out and staying schedulable-looking in
    `hypervisor list`; hosts this start runs again are put back."""
    from pocketstack.compute.models import ComputeNode, Service

    with db.transaction() as s:
        fake = {host for (host,) in s.query(ComputeNode.host)
                .filter(ComputeNode.hypervisor_type == "fake")}
        for service in s.query(Service).filter(Service.binary == "nova-compute",
                                               Service.host.in_(fake)):
            if service.host not in running:
                if not service.forced_down:
                    service.forced_down, service.disabled = True, True
                    service.disabled_reason = NOT_RUN_REASON
            elif service.disabled_reason == NOT_RUN_REASON:
                service.forced_down, service.disabled = False, False
                service.disabled_reason = None


def admin_context() -> RequestContext:
    return RequestContext.admin()
