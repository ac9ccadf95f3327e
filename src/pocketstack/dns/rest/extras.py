"""TLDs, blacklists, quotas, zone transfers, exports, imports, shares and floating IPs'
PTR records: designate's v2 handlers beyond zones and recordsets."""
from __future__ import annotations

from starlette.responses import Response

from pocketstack.dns import admin, quotas, reverse, shares, tasks, transfers
from pocketstack.dns.rest import util
from pocketstack.wsgi import routing


def _with_link(req, body: dict, path: str, **more) -> dict:
    return dict(body, links=dict(util.link(req, path), **more))


# --- TLDs and blacklists (admin) ----------------------------------------------------------

def _admin_handlers(kind: str, plural: str, field: str):
    path = f"/v2/{plural}"

    def view(req, body):
        return _with_link(req, body, f"{path}/{body['id']}")

    def create(req):
        return routing.json_response(view(req, admin.create(req.context, kind, req.json())),
                                     201)

    def listing(req):
        rows = admin.listing(req.context, kind, {field: req.query.get(field)})
        return util.page(req, plural, rows,
                         lambda row: view(req, admin.KINDS[kind][1](row)), path)

    def show(req):
        return routing.json_response(view(req, admin.get(req.context, kind, req.params["id"])))

    def update(req):
        return routing.json_response(view(req, admin.update(req.context, kind,
                                                            req.params["id"], req.json())))

    def delete(req):
        admin.delete(req.context, kind, req.params["id"])
        return routing.empty(204)

    return {"collection": {"GET": listing, "POST": create},
            "item": {"GET": show, "PATCH": update, "DELETE": delete}}


TLDS = _admin_handlers("tld", "tlds", "name")
BLACKLISTS = _admin_handlers("blacklist", "blacklists", "pattern")


# --- quotas --------------------------------------------------------------------------------

def own_quotas(req):
    return routing.json_response(quotas.get(req.context, req.context.project_id))


def show_quotas(req):
    return routing.json_response(quotas.get(req.context, req.params["project_id"]))


def update_quotas(req):
    return routing.json_response(quotas.update(req.context, req.params["project_id"],
                                               req.json()))


def reset_quotas(req):
    quotas.reset(req.context, req.params["project_id"])
    return routing.empty(204)


# --- zone transfers ------------------------------------------------------------------------

def _request(req, row, zone_name):
    show_key = row.project_id == req.context.project_id or req.context.is_admin \
        or row.target_project_id == req.context.project_id
    return _with_link(req, transfers.request_view(row, zone_name, show_key),
                      f"/v2/zones/tasks/transfer_requests/{row.id}")


def create_transfer_request(req):
    row, zone_name = transfers.create_request(req.context, req.params["zone_id"],
                                              req.json(required=False))
    return routing.json_response(_request(req, row, zone_name), 201)


def list_transfer_requests(req):
    found = transfers.list_requests(req.context)
    return util.page(req, "transfer_requests", found, lambda item: _request(req, *item),
                     "/v2/zones/tasks/transfer_requests")


def show_transfer_request(req):
    return routing.json_response(_request(req, *transfers.get_request(req.context,
                                                                      req.params["id"])))


def update_transfer_request(req):
    return routing.json_response(_request(req, *transfers.update_request(
        req.context, req.params["id"], util.body(req))))


def delete_transfer_request(req):
    transfers.delete_request(req.context, req.params["id"])
    return routing.empty(204)


def _accept(req, row):
    return _with_link(req, transfers.accept_view(row),
                      f"/v2/zones/tasks/transfer_accepts/{row.id}",
                      zone=f"{req.service_url}/v2/zones/{row.zone_id}")


def create_transfer_accept(req):
    return routing.json_response(_accept(req, transfers.accept(req.context, req.json())), 201)


def list_transfer_accepts(req):
    return util.page(req, "transfer_accepts", transfers.list_accepts(req.context),
                     lambda row: _accept(req, row), "/v2/zones/tasks/transfer_accepts")


def show_transfer_accept(req):
    return routing.json_response(_accept(req, transfers.get_accept(req.context,
                                                                   req.params["id"])))


# --- exports and imports -------------------------------------------------------------------

def _task(req, row):
    plural = f"{row.kind}s"
    more = {}
    if row.zone_id:
        more["zone"] = f"{req.service_url}/v2/zones/{row.zone_id}"
    if row.kind == "export" and row.status == "COMPLETE":
        more["export"] = f"{req.service_url}/v2/zones/tasks/exports/{row.id}/export"
    return _with_link(req, tasks.view(row), f"/v2/zones/tasks/{plural}/{row.id}", **more)


def create_export(req):
    return routing.json_response(_task(req, tasks.create_export(req.context,
                                                                req.params["zone_id"])), 202)


def list_exports(req):
    return util.page(req, "exports", tasks.listing(req.context, "export"),
                     lambda row: _task(req, row), "/v2/zones/tasks/exports")


def show_export(req):
    return routing.json_response(_task(req, tasks.get(req.context, "export",
                                                      req.params["id"])))


def delete_export(req):
    tasks.delete(req.context, "export", req.params["id"])
    return routing.empty(204)


def export_file(req):
    return Response(tasks.zone_file(req.context, req.params["id"]),
                    media_type="text/dns")


def create_import(req):
    row = tasks.create_import(req.context, req.headers.get("content-type"), req.body)
    return routing.json_response(_task(req, row), 202)


def list_imports(req):
    return util.page(req, "imports", tasks.listing(req.context, "import"),
                     lambda row: _task(req, row), "/v2/zones/tasks/imports")


def show_import(req):
    return routing.json_response(_task(req, tasks.get(req.context, "import",
                                                      req.params["id"])))


def delete_import(req):
    tasks.delete(req.context, "import", req.params["id"])
    return routing.empty(204)


# --- shares --------------------------------------------------------------------------------

def _share(req, row):
    return _with_link(req, shares.view(row), f"/v2/zones/{row.zone_id}/shares/{row.id}",
                      zone=f"{req.service_url}/v2/zones/{row.zone_id}")


def create_share(req):
    row = shares.create(req.context, req.params["zone_id"], req.json())
    return routing.json_response(_share(req, row), 201)


def list_shares(req):
    rows = shares.listing(req.context, req.params["zone_id"])
    return util.page(req, "shared_zones", rows, lambda row: _share(req, row),
                     f"/v2/zones/{req.params['zone_id']}/shares")


def show_share(req):
    return routing.json_response(_share(req, shares.get(req.context, req.params["zone_id"],
                                                        req.params["share_id"])))


def delete_share(req):
    shares.delete(req.context, req.params["zone_id"], req.params["share_id"])
    return routing.empty(204)


# --- floating IPs' PTR records -------------------------------------------------------------

def _fip(req, body):
    return _with_link(req, body, f"/v2/reverse/floatingips/{body['id']}")


def list_floatingips(req):
    return routing.json_response({
        "floatingips": [_fip(req, f) for f in reverse.listing(req.context)],
        "links": util.link(req, "/v2/reverse/floatingips"), "metadata": {}})


def show_floatingip(req):
    return routing.json_response(_fip(req, reverse.get(req.context, req.params["key"])))


def update_floatingip(req):
    return routing.json_response(_fip(req, reverse.update(req.context, req.params["key"],
                                                           req.json())), 202)
