"""DNS: zones, recordsets, TLDs, blacklists, quotas, transfers, exports/imports, shares
and floating IPs' PTR records (OpenStack Designate's API v2, under /dns), served by an
authoritative DNS server of its own (server.py) that answers what the API holds."""
