"""Designate's route table (designate/api/v2/controllers upstream): one line per URL.
The literal /v2/zones/tasks/... routes come before /v2/zones/{zone_id}/...: the first
match wins."""
from pocketstack.dns.rest import extras as x, root, zones

Z = "/v2/zones/{zone_id}"
RS = Z + "/recordsets/{recordset_id}"

ROUTES = {
    "/": {"GET": root.versions},
    "/v2": {"GET": root.v2},
    "/v2/limits": {"GET": root.limits},
    "/v2/pools": {"GET": root.pools},
    "/v2/service_statuses": {"GET": root.service_statuses},
    "/v2/zones": {"GET": zones.list_zones, "POST": zones.create_zone},
    "/v2/zones/tasks/transfer_requests": {"GET": x.list_transfer_requests},
    "/v2/zones/tasks/transfer_requests/{id}": {"GET": x.show_transfer_request,
                                               "PATCH": x.update_transfer_request,
                                               "DELETE": x.delete_transfer_request},
    "/v2/zones/tasks/transfer_accepts": {"GET": x.list_transfer_accepts,
                                         "POST": x.create_transfer_accept},
    "/v2/zones/tasks/transfer_accepts/{id}": {"GET": x.show_transfer_accept},
    "/v2/zones/tasks/exports": {"GET": x.list_exports},
    "/v2/zones/tasks/exports/{id}": {"GET": x.show_export, "DELETE": x.delete_export},
    "/v2/zones/tasks/exports/{id}/export": {"GET": x.export_file},
    # openstacksdk's ZoneExport lists and reads them under .../tasks/export (singular)
    "/v2/zones/tasks/export": {"GET": x.list_exports},
    "/v2/zones/tasks/export/{id}": {"GET": x.show_export, "DELETE": x.delete_export},
    "/v2/zones/tasks/export/{id}/export": {"GET": x.export_file},
    "/v2/zones/tasks/imports": {"GET": x.list_imports, "POST": x.create_import},
    "/v2/zones/tasks/imports/{id}": {"GET": x.show_import, "DELETE": x.delete_import},
    Z: {"GET": zones.show_zone, "PATCH": zones.update_zone, "DELETE": zones.delete_zone},
    Z + "/nameservers": {"GET": zones.nameservers},
    Z + "/tasks/transfer_requests": {"POST": x.create_transfer_request},
    Z + "/tasks/export": {"POST": x.create_export},
    Z + "/tasks/xfr": {"POST": zones.xfr},
    Z + "/shares": {"GET": x.list_shares, "POST": x.create_share},
    Z + "/shares/{share_id}": {"GET": x.show_share, "DELETE": x.delete_share},
    Z + "/recordsets": {"GET": zones.list_recordsets, "POST": zones.create_recordset},
    RS: {"GET": zones.show_recordset, "PUT": zones.update_recordset,
         "DELETE": zones.delete_recordset},
    "/v2/recordsets": {"GET": zones.list_recordsets},
    "/v2/recordsets/{recordset_id}": {"GET": zones.show_any_recordset},
    "/v2/tlds": x.TLDS["collection"],
    "/v2/tlds/{id}": x.TLDS["item"],
    "/v2/blacklists": x.BLACKLISTS["collection"],
    "/v2/blacklists/{id}": x.BLACKLISTS["item"],
    "/v2/quotas": {"GET": x.own_quotas},
    "/v2/quotas/{project_id}": {"GET": x.show_quotas, "PATCH": x.update_quotas,
                                "DELETE": x.reset_quotas},
    "/v2/reverse/floatingips": {"GET": x.list_floatingips},
    "/v2/reverse/floatingips/{key}": {"GET": x.show_floatingip,
                                      "PATCH": x.update_floatingip},
}
