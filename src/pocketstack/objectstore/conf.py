"""[objectstore] options."""
from oslo_config import cfg

OPTS = {
    "objectstore": [
        cfg.StrOpt("backend", default="embedded", choices=["embedded", "rgw"],
                   help="What serves the catalog's object-store endpoint: embedded (this "
                        "service; bytes in files of the data dir) or rgw (Ceph's RADOS "
                        "Gateway on the [ceph] cluster, the scale-out backend)."),
        cfg.StrOpt("rgw_url",
                   help="With backend = rgw: the URL (scheme, host, port) of a gateway run "
                        "elsewhere, set up for this cloud's identity API. Default: the "
                        "cloud starts a radosgw of its own."),
        cfg.PortOpt("rgw_port", default=0,
                    help="Port of the cloud's own radosgw. 0: one chosen free at the first "
                         "start and kept (<data dir>/rgw/port)."),
        cfg.StrOpt("data_dir",
                   help="Where object bytes are kept. Default: <data dir>/objects."),
        cfg.BoolOpt("fsync", default=True,
                    help="fsync an object's bytes (and its directory) before its PUT is "
                         "acknowledged, so an acknowledged object survives a crash."),
        cfg.StrOpt("reseller_prefix", default="AUTH_",
                   help="Prefix of account names: an account is <prefix><project id>."),
        cfg.IntOpt("expirer_interval", default=10, min=1,
                   help="Seconds between sweeps that remove expired objects (X-Delete-At) "
                        "from listings and disk; reads refuse them at once."),
        cfg.IntOpt("max_file_size", default=5368709122, min=1,
                   help="Largest object in bytes (swift's max_file_size)."),
        cfg.ListOpt("tempurl_methods", default=["GET", "HEAD", "PUT", "POST", "DELETE"],
                    help="Methods a temporary URL may be made for."),
    ],
}
OPTS["objectstore"].append(
    cfg.ListOpt("tempurl_digests", default=["sha1", "sha256", "sha512"],
                help="Digests a temporary URL's signature may use."))
