"""Compute options, grouped as in nova.conf ([compute], [scheduler], [filter_scheduler],
[quota], [fake], [libvirt])."""
from oslo_config import cfg

OPTS = {
    "DEFAULT": [
        cfg.StrOpt("compute_driver", default="fake", choices=("fake", "libvirt"),
                   help="Hypervisor of the compute agents: fake (simulated hosts, no root "
                        "needed) or libvirt (real QEMU/KVM guests; `pip install "
                        "'pocketstack[libvirt]'`, `make libvirt`). The all-in-one with "
                        "libvirt runs one real host named after this machine; with fake, "
                        "[fake] hosts simulated ones ([libvirt] enabled adds a real one)."),
        cfg.BoolOpt("force_config_drive", default=False,
                    help="Give every new server a config drive, whether or not it asked for "
                         "one (its config_drive then shows True)."),
        cfg.BoolOpt("local_service_calls", default=True,
                    help="Compute's calls to the image, network and volume APIs that this "
                         "same process serves go straight to their handlers (same request, "
                         "token checks and answers; no socket). False sends them over HTTP "
                         "to public_url, as calls to another process always do."),
    ],
    "compute": [
        cfg.IntOpt("max_attempts", default=3, min=1,
                   help="Hosts a build is tried on (the first choice plus reschedules to "
                        "alternates) before the server goes to ERROR."),
        cfg.FloatOpt("build_timeout", default=120.0, min=0.1,
                     help="Seconds a server may stay in BUILD (one attempt) before the "
                          "conductor reschedules it or puts it in ERROR. Protects against "
                          "lost messages and hosts that die mid-build."),
        cfg.FloatOpt("build_stall_timeout", default=10.0, min=0.1,
                     help="Seconds a server may wait in BUILD/scheduling without progress "
                          "before the conductor assumes its message was lost and schedules "
                          "it again (checked every periodic_interval). Much shorter than "
                          "build_timeout, which covers a whole build."),
        cfg.FloatOpt("vif_plugging_timeout", default=30.0, min=0.0,
                     help="Seconds to wait for the network service's network-vif-plugged "
                          "event for each port of a new server; 0 does not wait."),
        cfg.IntOpt("reimage_timeout_per_gb", default=20, min=1,
                   help="Seconds per GiB of the root volume a rebuild of a volume-backed "
                        "server (2.93) waits for the volume service's volume-reimaged "
                        "event (nova's option of that name)."),
        cfg.BoolOpt("vif_plugging_is_fatal", default=True,
                    help="Fail the build (and reschedule) when network-vif-plugged does not "
                         "arrive in time."),
        cfg.FloatOpt("block_device_allocate_timeout", default=60.0, min=0.1,
                     help="Seconds a build waits for each volume it creates (from an "
                          "image, a snapshot or blank) to become available before it "
                          "fails (nova's block_device_allocate_retries x interval). Keep it "
                          "below build_timeout."),
        cfg.FloatOpt("report_interval", default=10.0, min=0.05,
                     help="Seconds between service heartbeats."),
        cfg.FloatOpt("service_down_time", default=60.0, min=0.1,
                     help="A service whose last heartbeat is older than this is down."),
        cfg.StrOpt("database_access", default="direct", choices=("direct", "conductor"),
                   help="How a compute agent changes the cloud's state (compute/hostdb.py): "
                        "'direct' runs each operation in its own process against the "
                        "database (the all-in-one); 'conductor' asks the conductor over "
                        "RPC, which checks that the host may change what it names, as "
                        "nova-compute does through nova-conductor."),
        cfg.FloatOpt("periodic_interval", default=10.0, min=0.05,
                     help="Seconds between periodic tasks (power-state sync, build "
                          "deadlines, resource reconciliation)."),
        cfg.IntOpt("reclaim_instance_interval", default=0, min=0,
                   help="Seconds a deleted server is kept SOFT_DELETED (powered off, "
                        "resources held, `restore` brings it back) before its host deletes "
                        "it for good; 0 deletes at once, as nova's default."),
        cfg.StrOpt("default_availability_zone", default="nova",
                   help="Zone of hosts that are in no aggregate with availability_zone."),
        cfg.IntOpt("max_user_data_bytes", default=65535, min=0,
                   help="Largest base64 user_data accepted on server create."),
    ],
    "scheduler": [
        cfg.IntOpt("max_placement_results", default=1000, min=1,
                   help="With more compute hosts than this, a request considers at most "
                        "this many candidates: hosts the database finds up, enabled and "
                        "with room for the flavor, in host id order (nova's placement "
                        "option of the same name). Filters and weighers (soft "
                        "(anti-)affinity included) then choose among the candidates; when "
                        "none is chosen the scheduler falls back to every host, so a host "
                        "that fits is never missed and NoValidHost still explains itself "
                        "over all of them."),
        cfg.IntOpt("host_subset_size", default=1, min=1,
                   help="Pick the host at random among the N best weighed ones; larger "
                        "values spread concurrent boots and reduce claim retries."),
        cfg.IntOpt("max_alternates", default=2, min=0,
                   help="Alternate hosts returned with each selection for reschedules."),
        # As nova's: the hosts report these to placement as their inventories'
        # allocation_ratio/reserved. Unset (None), a host writes the initial_* value when
        # it creates the inventory and then leaves what an operator set through the
        # placement API; set, the host writes it on every report.
        cfg.FloatOpt("cpu_allocation_ratio", default=None, min=0.0,
                     help="Virtual CPUs per physical CPU (unset: initial_cpu_allocation_"
                          "ratio when the host's inventory is made, then placement's)."),
        cfg.FloatOpt("ram_allocation_ratio", default=None, min=0.0,
                     help="Virtual RAM per physical RAM (unset: as cpu_allocation_ratio)."),
        cfg.FloatOpt("disk_allocation_ratio", default=None, min=0.0,
                     help="Virtual disk per physical disk (unset: as cpu_allocation_ratio)."),
        cfg.FloatOpt("initial_cpu_allocation_ratio", default=16.0, min=0.0,
                     help="VCPU allocation ratio of a new host's inventory."),
        cfg.FloatOpt("initial_ram_allocation_ratio", default=1.5, min=0.0,
                     help="MEMORY_MB allocation ratio of a new host's inventory."),
        cfg.FloatOpt("initial_disk_allocation_ratio", default=1.0, min=0.0,
                     help="DISK_GB allocation ratio of a new host's inventory."),
        cfg.IntOpt("reserved_host_cpus", default=None, min=0,
                   help="VCPUs kept for the host (unset: 0 on a new inventory, then "
                        "placement's reserved)."),
        cfg.IntOpt("reserved_host_memory_mb", default=None, min=0,
                   help="MEMORY_MB kept for the host (unset: 0 on a new inventory, then "
                        "placement's; nova's default is 512, simulated hosts keep none)."),
        cfg.IntOpt("reserved_host_disk_mb", default=None, min=0,
                   help="Disk kept for the host in MB, reported in whole GB rounded up "
                        "(unset: 0 on a new inventory, then placement's)."),
        cfg.FloatOpt("ram_weight_multiplier", default=1.0,
                     help="Positive spreads by free RAM, negative stacks."),
        cfg.FloatOpt("disk_weight_multiplier", default=1.0, help="Weight of free disk."),
        cfg.FloatOpt("cpu_weight_multiplier", default=1.0, help="Weight of free vCPUs."),
        cfg.FloatOpt("soft_affinity_weight_multiplier", default=1.0,
                     help="Weight of soft-affinity group members on a host."),
        cfg.FloatOpt("soft_anti_affinity_weight_multiplier", default=1.0,
                     help="Weight against soft-anti-affinity group members on a host."),
        cfg.FloatOpt("build_failure_weight_multiplier", default=1000000.0,
                     help="Weight against hosts with recent build failures."),
    ],
    "quota": [
        cfg.IntOpt("instances", default=10, help="Servers per project (-1 unlimited)."),
        cfg.IntOpt("cores", default=20, help="vCPUs per project."),
        cfg.IntOpt("ram", default=51200, help="MB of RAM per project."),
        cfg.IntOpt("metadata_items", default=128, help="Metadata items per server."),
        cfg.IntOpt("injected_files", default=5, help="Personality files per server."),
        cfg.IntOpt("injected_file_content_bytes", default=10240,
                   help="Bytes per personality file."),
        cfg.IntOpt("injected_file_path_length", default=255,
                   help="Characters per personality file path."),
        cfg.IntOpt("key_pairs", default=100, help="Keypairs per user."),
        cfg.IntOpt("server_groups", default=10, help="Server groups per project."),
        cfg.IntOpt("server_group_members", default=10, help="Servers per server group."),
    ],
    "fake": [
        cfg.IntOpt("hosts", default=4, min=0,
                   help="Simulated compute hosts the all-in-one runs (cmp-1 … cmp-N)."),
        cfg.StrOpt("host_prefix", default="cmp-", help="Name prefix of simulated hosts."),
        cfg.IntOpt("vcpus", default=32, min=1, help="vCPUs of each simulated host."),
        cfg.IntOpt("memory_mb", default=65536, min=1, help="RAM (MB) of each simulated host."),
        cfg.IntOpt("local_gb", default=2000, min=1, help="Disk (GB) of each simulated host."),
        cfg.FloatOpt("spawn_delay", default=0.0, min=0.0, help="Seconds spawn takes."),
        cfg.FloatOpt("power_delay", default=0.0, min=0.0,
                     help="Seconds stop/start/reboot/pause/suspend take."),
        cfg.FloatOpt("destroy_delay", default=0.0, min=0.0, help="Seconds destroy takes."),
        cfg.FloatOpt("transition_delay", default=2.0, min=0.0,
                     help="Seconds a simulated host keeps a server in a transitional status "
                          "a client polls for (REBOOT, HARD_REBOOT, REBUILD, RESIZE, "
                          "REVERT_RESIZE, MIGRATING, SHELVED before offload), as a real "
                          "host takes seconds: clients and SDK test suites that wait for "
                          "such a status (polling every second) see it. 0 makes these "
                          "operations as fast as the rest (test suites that only wait for "
                          "the final status)."),
    ],
    "libvirt": [
        cfg.BoolOpt("enabled", default=False,
                    help="With compute_driver = fake, also run one libvirt host (named "
                         "after this machine, [libvirt] host_name) next to the simulated "
                         "ones; an aggregate or the image property hypervisor_type=qemu "
                         "steers boots to it."),
        cfg.StrOpt("host_name", default=None,
                   help="Compute host name of the libvirt host (default: this machine's "
                        "hostname)."),
        cfg.StrOpt("connection_uri", default="qemu:///system",
                   help="libvirt connection URI (test:///default for libvirt's own mock)."),
        cfg.StrOpt("virt_type", default="qemu", choices=("qemu", "kvm"),
                   help="Domain type: qemu (software emulation; works everywhere, nested "
                        "KVM hangs on many CI machines) or kvm."),
        cfg.StrOpt("images_type", default="qcow2", choices=("qcow2", "raw", "rbd"),
                   help="Root and ephemeral disks: qcow2 overlays on the cached base image "
                        "(fast, small), raw copies, or RBD images <uuid>_disk* in [ceph] "
                        "compute_pool as [ceph] compute_user (nova's images_type = rbd: a "
                        "clone of the image when the image service keeps it in the same "
                        "cluster, else an import of the cached image)."),
        cfg.StrOpt("instances_path", default=None,
                   help="Directory of guest disks, config drives and console logs, with the "
                        "image cache in its _base (default: <data dir>/compute/<host>/"
                        "instances)."),
        cfg.StrOpt("shared_storage_id", default="",
                   help="Names the storage of instances_path: hosts of the same name share "
                        "their guests' disks, so a resize or cold migration of a guest may "
                        "go from one to the other. Empty: a random name kept in the "
                        "instances path's .pocketstack-storage-id, made by the first host "
                        "to start there (hosts whose instances path is the same shared "
                        "directory read the same one)."),
        cfg.FloatOpt("shutdown_timeout", default=60.0, min=0.0,
                     help="Seconds a clean shutdown (stop, soft reboot) waits for the guest "
                          "to power off after an ACPI power-button press before the guest "
                          "is destroyed."),
        cfg.FloatOpt("boot_timeout", default=60.0, min=1.0,
                     help="Seconds spawn waits for libvirt to report the guest running."),
        cfg.StrOpt("host_netns", default="",
                   help="For a compute host that is a network namespace on a shared machine "
                        "(a lab of several hosts on one machine): the namespace's name "
                        "(`ip netns`), where this host's network agent runs. The machine's "
                        "libvirtd makes each guest's tap outside it; the driver moves the "
                        "tap in and onto its bridge before the guest runs. Empty: libvirt "
                        "plugs taps onto the bridges itself."),
        cfg.IntOpt("console_log_bytes", default=100 * 1024, min=1024,
                   help="Most bytes of the serial console log the console-log API returns "
                        "(the end of it)."),
    ],
}
