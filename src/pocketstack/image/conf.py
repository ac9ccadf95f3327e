"""Image service options ([image] in pocketstack.conf), named as in glance-api.conf."""
import hashlib

from oslo_config import cfg

# What hashlib can name and give a fixed-length hexdigest of (not the shake_* XOFs).
HASHING_ALGORITHMS = sorted(a for a in hashlib.algorithms_guaranteed
                            if not a.startswith("shake_"))

DISK_FORMATS = ["ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "iso",
                "ploop"]
CONTAINER_FORMATS = ["ami", "ari", "aki", "bare", "ovf", "ova", "docker", "compressed"]

OPTS = {
    "image": [
        cfg.StrOpt("filesystem_store_datadir",
                   help="Directory holding image data. Default: <data dir>/images."),
        cfg.StrOpt("default_store", default="file", choices=["file", "rbd", "swift"],
                   help="Where new image data goes (glance's default_store): 'file' (the "
                        "data dir), 'rbd' ([ceph] image_pool as [ceph] image_user) or "
                        "'swift' (the object store, the image service's own account). "
                        "Images keep the store that holds them, so switching serves old "
                        "images still."),
        cfg.BoolOpt("show_image_direct_url", default=False,
                    help="Show 'direct_url' (the image data's location, e.g. "
                         "rbd://<fsid>/<pool>/<id>/snap) in image views, as glance: to "
                         "everyone who can see the image. The volume and compute services "
                         "need it to clone rbd images instead of copying them."),
        cfg.BoolOpt("show_multiple_locations", default=False,
                    help="Show 'locations' ([{url, metadata}]) in image views, as glance "
                         "(deprecated there); changing locations stays refused."),
        cfg.StrOpt("swift_store_container", default="glance",
                   help="Container of the swift store's images (glance_store's option)."),
        cfg.BoolOpt("swift_store_create_container_on_put", default=True,
                    help="Create swift_store_container when an upload finds none."),
        cfg.IntOpt("swift_store_large_object_size", default=5120, min=1,
                   help="MiB from which an upload is stored as segments joined by a "
                        "manifest; an upload of unknown size always is (glance_store's "
                        "option)."),
        cfg.IntOpt("swift_store_large_object_chunk_size", default=200, min=1,
                   help="MiB of each segment of a large image in the swift store."),
        cfg.IntOpt("rbd_store_chunk_size", default=8, min=1, max=32,
                   help="Object size in MiB of the RBD images of the rbd store (a power "
                        "of two; glance_store's option)."),
        cfg.BoolOpt("rbd_thin_provisioning", default=True,
                    help="Do not write the all-zero blocks of an upload to the rbd store "
                         "(glance_store's option, off there by default): a new RBD image "
                         "reads zeros where nothing was written, so a sparse image takes "
                         "the space of its data, as `rbd import` stores it."),
        cfg.IntOpt("image_size_cap", default=1099511627776, min=1,
                   help="Largest image data upload in bytes (default 1 TiB); a larger "
                        "upload gets 413 and nothing is kept."),
        cfg.BoolOpt("filesystem_store_fsync", default=False,
                    help="fsync image data before it becomes active. Glance does not; turn "
                         "it on if images must survive a power loss right after upload."),
        cfg.StrOpt("hashing_algorithm", default="sha512", choices=HASHING_ALGORITHMS,
                   help="The secure hash of image data (os_hash_algo / os_hash_value), "
                        "as glance's option of that name; md5 'checksum' is computed as "
                        "well. sha256 hashes about twice as fast as sha512 on x86-64 "
                        "CPUs without SHA-512 instructions, so uploads are faster."),
        cfg.FloatOpt("upload_idle_timeout", default=120.0, min=1.0,
                     help="Seconds an upload may go without receiving data before it is "
                          "abandoned (the image goes back to queued)."),
        cfg.ListOpt("disk_formats", default=DISK_FORMATS,
                    help="Disk formats images may declare."),
        cfg.ListOpt("container_formats", default=CONTAINER_FORMATS,
                    help="Container formats images may declare."),
        cfg.BoolOpt("require_image_format_match", default=True,
                    help="Refuse image data (upload or import) that is not in the image's "
                         "disk_format, and qcow2 data that refers to other files, as glance "
                         "2024+ does ([image_format] in glance-api.conf)."),
        cfg.IntOpt("limit_param_default", default=25, min=1,
                   help="Images returned by a list request that does not give a limit."),
        cfg.IntOpt("api_limit_max", default=1000, min=1,
                   help="Most images one list request returns, whatever limit it asks."),
        cfg.IntOpt("image_property_quota", default=128, min=-1,
                   help="Most additional properties an image may carry (-1: unlimited)."),
        cfg.IntOpt("image_tag_quota", default=128, min=-1,
                   help="Most tags an image may carry (-1: unlimited)."),
        cfg.IntOpt("image_member_quota", default=128, min=-1,
                   help="Most projects an image may be shared with (-1: unlimited)."),
        cfg.ListOpt("enabled_import_methods",
                    default=["glance-direct", "web-download", "copy-image"],
                    help="Interoperable image import methods offered (/v2/info/import); "
                         "copy-image is offered only while two stores are enabled."),
        cfg.BoolOpt("image_cache_enabled", default=True,
                    help="The image cache API (/v2/cache, Image API 2.14): local copies "
                         "of image data on the API host, kept in <data dir>/image-cache "
                         "(glance's image_cache_dir); downloads are served from them."),
        cfg.StrOpt("image_cache_dir",
                   help="Where cached image data lives. Default: <data dir>/image-cache."),
        cfg.IntOpt("image_cache_max_size", default=10 << 30, min=0,
                   help="Bytes of cached data above which /v2/cache/prune removes the "
                        "least recently used entries (glance's option)."),
        cfg.IntOpt("task_time_to_live", default=48, min=1,
                   help="Hours an import task is kept after it ends (glance's option)."),
    ],
    # glance's [import_filtering_opts]: which URLs web-download may fetch. An allowed list,
    # when not empty, wins over the disallowed one of the same kind (as glance).
    "import_filtering_opts": [
        cfg.ListOpt("allowed_schemes", default=["http", "https"],
                    help="URL schemes web-download may fetch."),
        cfg.ListOpt("disallowed_schemes", default=[],
                    help="URL schemes web-download refuses (ignored if allowed_schemes)."),
        cfg.ListOpt("allowed_hosts", default=[],
                    help="Hosts (names or IP addresses) web-download may fetch from; empty: "
                         "any host not disallowed. Either way a host that resolves to a "
                         "loopback, link-local, multicast, broadcast, reserved or "
                         "unspecified address (IPv6 forms that carry an IPv4 address "
                         "counted as that address) is refused unless that address itself "
                         "is listed here (e.g. 127.0.0.1 in tests)."),
        cfg.ListOpt("disallowed_hosts", default=[],
                    help="Hosts web-download refuses (ignored if allowed_hosts)."),
        cfg.ListOpt("allowed_ports", default=[80, 443], item_type=cfg.types.Integer(),
                    help="Ports web-download may connect to; a URL without a port passes."),
        cfg.ListOpt("disallowed_ports", default=[], item_type=cfg.types.Integer(),
                    help="Ports web-download refuses (ignored if allowed_ports)."),
    ],
}
