"""/v2/zones and /v2/zones/{id}/recordsets, /v2/recordsets: designate's v2 API."""
from __future__ import annotations

from pocketstack.dns import api
from pocketstack.dns.rest import util
from pocketstack.wsgi import routing

ZONE_FILTERS = ("name", "email", "status", "type", "description", "ttl")
RECORDSET_FILTERS = ("name", "type", "status", "description", "ttl", "data")


def _zone(req, zone, shared=False) -> dict:
    return dict(api.zone_view(zone, shared=shared),
                links=util.link(req, f"/v2/zones/{zone.id}"))


def _recordset(req, rs, zone_name) -> dict:
    return dict(api.recordset_view(rs, zone_name),
                links=util.link(req, f"/v2/zones/{rs.zone_id}/recordsets/{rs.id}"))


def create_zone(req):
    ctx = util.sudo(req)
    zone = api.create_zone(ctx, util.body(req))
    return routing.json_response(_zone(req, zone), 202)


def list_zones(req):
    filters = {k: req.query.get(k) for k in ZONE_FILTERS}
    found = api.list_zones(req.context, filters, util.all_projects(req))
    return util.page(req, "zones", found, lambda item: _zone(req, *item), "/v2/zones")


def show_zone(req):
    zone, shared = api.get_zone(util.sudo(req), req.params["zone_id"], util.all_projects(req))
    return routing.json_response(_zone(req, zone, shared))


def update_zone(req):
    zone = api.update_zone(util.sudo(req), req.params["zone_id"], util.body(req),
                           util.all_projects(req))
    return routing.json_response(_zone(req, zone), 202)


def delete_zone(req):
    shares = (req.headers.get("x-designate-delete-shares") or "").lower() in util.TRUE
    zone = api.delete_zone(util.sudo(req), req.params["zone_id"], util.all_projects(req),
                           shares)
    return routing.json_response(_zone(req, zone), 202)


def nameservers(req):
    return routing.json_response(
        {"nameservers": api.nameservers(util.sudo(req), req.params["zone_id"])})


def create_recordset(req):
    rs, zone_name = api.create_recordset(util.sudo(req), req.params["zone_id"],
                                         util.body(req), util.all_projects(req))
    return routing.json_response(_recordset(req, rs, zone_name), 202)


def list_recordsets(req):
    zone_id = req.params.get("zone_id")
    filters = {k: req.query.get(k) for k in RECORDSET_FILTERS}
    found = api.list_recordsets(util.sudo(req), zone_id, filters, util.all_projects(req))
    path = f"/v2/zones/{zone_id}/recordsets" if zone_id else "/v2/recordsets"
    return util.page(req, "recordsets", found, lambda item: _recordset(req, *item), path)


def show_recordset(req):
    rs, zone_name = api.get_recordset(util.sudo(req), req.params["zone_id"],
                                      req.params["recordset_id"], util.all_projects(req))
    return routing.json_response(_recordset(req, rs, zone_name))


def show_any_recordset(req):
    """GET /v2/recordsets/{id}: designate answers with a redirect to its zone's URL."""
    found = [item for item in api.list_recordsets(req.context, None, {},
                                                  util.all_projects(req))
             if item[0].id == req.params["recordset_id"]]
    if not found:
        from pocketstack.dns import errors

        raise errors.not_found("RecordSet", "recordset_not_found")
    rs, zone_name = found[0]
    url = f"{req.service_url}/v2/zones/{rs.zone_id}/recordsets/{rs.id}"
    return routing.json_response(_recordset(req, rs, zone_name), 301,
                                 headers={"Location": url})


def update_recordset(req):
    rs, zone_name = api.update_recordset(util.sudo(req), req.params["zone_id"],
                                         req.params["recordset_id"], util.body(req),
                                         util.all_projects(req))
    return routing.json_response(_recordset(req, rs, zone_name), 202)


def delete_recordset(req):
    rs, zone_name = api.delete_recordset(util.sudo(req), req.params["zone_id"],
                                         req.params["recordset_id"], util.all_projects(req))
    return routing.json_response(_recordset(req, rs, zone_name), 202)


def xfr(req):
    api.transfer_now(util.sudo(req), req.params["zone_id"], util.all_projects(req))
    return routing.empty(202)
