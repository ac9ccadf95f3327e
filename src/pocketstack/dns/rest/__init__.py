"""Designate's route table (designate/api/v2/controllers upstream): one line per URL.
The literal /v2/zones/tasks/... routes come before /v2/zones/{zone_id}/...: the first
match wins."""
from pocketstack.dns.rest import root, zones

Z = "/v2/zones/{zone_id}"
RS = Z + "/recordsets/{recordset_id}"

ROUTES = {
    "/": {"GET": root.versions},
    "/v2": {"GET": root.v2},
    "/v2/limits": {"GET": root.limits},
    "/v2/zones": {"GET": zones.list_zones, "POST": zones.create_zone},
    Z: {"GET": zones.show_zone, "PATCH": zones.update_zone, "DELETE": zones.delete_zone},
    Z + "/nameservers": {"GET": zones.nameservers},
    Z + "/recordsets": {"GET": zones.list_recordsets, "POST": zones.create_recordset},
    RS: {"GET": zones.show_recordset, "PUT": zones.update_recordset,
         "DELETE": zones.delete_recordset},
    "/v2/recordsets": {"GET": zones.list_recordsets},
    "/v2/recordsets/{recordset_id}": {"GET": zones.show_any_recordset},
}
