"""Volume service options ([volume] in pocketstack.conf), named after cinder.conf's."""
from oslo_config import cfg

OPTS = {
    "volume": [
        cfg.ListOpt("enabled_backends", default=["file"],
                    help="Backends this volume service runs, by name: 'file' (sparse raw "
                         "files under volumes_dir, needs no root), 'lvm' (logical volumes "
                         "in lvm_volume_group, needs root and lvm2) and 'rbd' (RBD images "
                         "in [ceph] volume_pool, see [ceph]). The first is where "
                         "volumes of a type without volume_backend_name go."),
        cfg.StrOpt("volumes_dir",
                   help="Directory of the file backend's volume files. Default: "
                        "<data dir>/volumes."),
        cfg.StrOpt("backup_driver", default="file", choices=["file", "swift"],
                   help="Where backups go: 'file' (file and lvm volumes: full sparse "
                        "copies in backup_dir; rbd volumes: [ceph] backup_pool, as "
                        "cinder's ceph driver) or 'swift' (volumes of every backend: "
                        "cinder's swift backup driver, chunked objects in the user's "
                        "object-store account, incremental on request)."),
        cfg.StrOpt("backup_swift_container", default="volumebackups",
                   help="Container of a swift backup whose request names none."),
        cfg.IntOpt("backup_swift_object_size", default=52428800, min=65536,
                   help="Bytes of each object of a swift backup (cinder's option)."),
        cfg.IntOpt("backup_swift_block_size", default=32768, min=512,
                   help="Bytes of each block an incremental swift backup compares by "
                        "sha256 (cinder's option; divides backup_swift_object_size)."),
        cfg.StrOpt("backup_dir",
                   help="Directory of volume backups (full sparse copies). Default: "
                        "<data dir>/volume-backups."),
        cfg.IntOpt("file_capacity_gb", default=1000, min=1,
                   help="Capacity in GiB the file backend reports and allocates up to "
                        "(files are sparse: a volume takes disk space only as it is "
                        "written)."),
        cfg.StrOpt("lvm_volume_group", default="pocketstack-volumes",
                   help="LVM volume group of the lvm backend; it must exist."),
        cfg.IntOpt("lvm_loop_file_gb", default=0, min=0,
                   help="For a lab without a spare disk: when lvm_volume_group does not "
                        "exist, create it on a sparse file of this many GiB under "
                        "<data dir>/volume-lvm, attached as a loop device (re-attached on "
                        "every start). 0: use an existing volume group only."),
        cfg.BoolOpt("lvm_thin", default=False,
                    help="Create thin logical volumes in the pool lvm_thin_pool (created in "
                         "the volume group when missing) instead of thick ones."),
        cfg.StrOpt("lvm_thin_pool", default="pocketstack-pool",
                   help="Name of the thin pool when lvm_thin is on."),
        cfg.IntOpt("rbd_max_clone_depth", default=5, min=0,
                   help="rbd backend: longest chain of copy-on-write clones; a volume "
                        "cloned past it is flattened (its own copy of every byte). 0: "
                        "always flatten."),
        cfg.BoolOpt("rbd_flatten_volume_from_snapshot", default=False,
                    help="rbd backend: flatten volumes made from a snapshot, so the "
                         "snapshot can be deleted without flattening them then."),
        cfg.StrOpt("target_helper", default="none", choices=["none", "tgtadm"],
                   help="How hosts open file and lvm volumes: none (the file or block "
                        "device on this machine, os-brick's local connector) or tgtadm "
                        "(an iSCSI export by a tgtd this service runs; QEMU opens it "
                        "itself), as cinder's target_helper."),
        cfg.StrOpt("target_ip_address", default="127.0.0.1",
                   help="tgtadm: the address of the iSCSI portal."),
        cfg.PortOpt("target_port", default=3260,
                    help="tgtadm: the port of the iSCSI portal (also tgtd's control port "
                         "number, so each cloud on a machine has its own tgtd)."),
        cfg.StrOpt("target_prefix", default="iqn.2010-10.org.openstack:",
                   help="tgtadm: the prefix of the targets' IQNs."),
        cfg.StrOpt("default_volume_type", default="__DEFAULT__",
                   help="Volume type of volumes created without one."),
        cfg.StrOpt("storage_availability_zone", default="nova",
                   help="Availability zone of this volume service."),
        cfg.IntOpt("report_interval", default=10, min=1,
                   help="Seconds between the volume service's heartbeats."),
        cfg.FloatOpt("orphaned_attachment_age", default=120.0, min=0.0,
                     help="Seconds after which an attachment whose server does not exist "
                          "is deleted (checked every report_interval). A boot's API "
                          "request reserves its volumes before it writes the server: "
                          "longer than such a request can take. Those made before the "
                          "volume service started go at its first check."),
        cfg.IntOpt("service_down_time", default=60, min=1,
                   help="Seconds without a heartbeat after which os-services shows the "
                        "volume service down."),
        cfg.IntOpt("osapi_max_limit", default=1000, min=1,
                   help="Most items one list request returns."),
        # Default quotas (cinder's quota_* options); -1 means unlimited.
        cfg.IntOpt("quota_volumes", default=10, min=-1, help="Volumes per project."),
        cfg.IntOpt("quota_snapshots", default=10, min=-1, help="Snapshots per project."),
        cfg.IntOpt("quota_gigabytes", default=1000, min=-1,
                   help="GiB of volumes and snapshots per project."),
        cfg.IntOpt("quota_backups", default=10, min=-1, help="Backups per project."),
        cfg.IntOpt("quota_backup_gigabytes", default=1000, min=-1,
                   help="GiB of backups per project."),
        cfg.IntOpt("quota_groups", default=10, min=-1, help="Volume groups per project."),
        cfg.IntOpt("per_volume_size_limit", default=-1, min=-1,
                   help="Largest volume in GiB a project may create (-1: no limit)."),
    ],
}
