"""DNS options ([dns] in pocketstack.conf), named after designate's where it has them."""
from oslo_config import cfg

OPTS = {
    "dns": [
        cfg.StrOpt("listen", default="127.0.0.1:5354",
                   help="HOST:PORT the embedded authoritative DNS server answers on, UDP and "
                        "TCP (port 0: a free one; `pocketstack dns server` prints it). "
                        "Empty: no server (zones then stay PENDING)."),
        cfg.ListOpt("ns_records", default=["ns1.pocketstack.local."],
                    help="Name servers of every zone: its NS records, the first one also "
                         "the SOA's MNAME (designate's pool ns_records)."),
        cfg.IntOpt("default_ttl", default=3600, min=1, help="TTL of a zone created without."),
        cfg.IntOpt("min_ttl", default=None, min=1,
                   help="Smallest TTL a zone or recordset may have (designate's min_ttl)."),
        cfg.IntOpt("quota_zones", default=10, help="Zones per project (-1: no limit)."),
        cfg.IntOpt("quota_zone_recordsets", default=500, help="Recordsets per zone."),
        cfg.IntOpt("quota_zone_records", default=500, help="Records per zone."),
        cfg.IntOpt("quota_recordset_records", default=20, help="Records per recordset."),
        cfg.IntOpt("quota_api_export_size", default=1000,
                   help="Most recordsets a zone export may hold."),
        cfg.StrOpt("backend", default="embedded", choices=["embedded", "pdns4"],
                    help="Who serves the zones: the embedded server alone, or PowerDNS too "
                         "(designate's pdns4 backend: each zone a secondary zone of "
                         "PowerDNS, transferred from the embedded server)."),
        cfg.StrOpt("pdns4_api_endpoint", default="http://127.0.0.1:8081",
                   help="PowerDNS's HTTP API (its webserver-address:webserver-port)."),
        cfg.StrOpt("pdns4_api_key", default="", secret=True, help="PowerDNS's api-key."),
        cfg.StrOpt("pdns4_listen", default="127.0.0.1:53",
                   help="HOST:PORT PowerDNS answers DNS on (to see that it serves a zone)."),
        cfg.StrOpt("pdns4_master", default="",
                   help="HOST:PORT PowerDNS transfers the zones from. Default: the "
                        "embedded server's address."),
        cfg.StrOpt("managed_resource_email", default="hostmaster@example.com",
                   help="Email of zones made for floating IPs' PTR records."),
    ],
}
