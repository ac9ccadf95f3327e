"""/os-volume-transfer (cinder's extension, every version) and /volume-transfers (3.55+:
``no_snapshots``; 3.59: paginated lists): create, list, detail, show, accept, delete."""
from __future__ import annotations

from pocketstack.volume import transfers
from pocketstack.volume.rest import microversion
from pocketstack.volume.rest.common import body, check_project, collection_links, respond


def _new_api(req) -> bool:
    """/volume-transfers exists from 3.55 on (404 below it, as cinder)."""
    new = "/volume-transfers" in req.raw.url.path
    if new:
        microversion.require(req, "3.55")
    return new


def _detail(req, row, auth_key=None) -> dict:
    return transfers.detail_view(row, req.context, req.service_url,
                                 microversion.version(req), auth_key)


def _list(req, detailed: bool):
    check_project(req)
    paginated = _new_api(req) and microversion.at_least(req, "3.59")
    found = transfers.list_transfers(req.context, req.query, paginated=paginated)
    items = [_detail(req, t) if detailed else
             transfers.summary_view(t, req.context, req.service_url) for t in found]
    out = {"transfers": items}
    if paginated:
        from pocketstack.volume import api

        links = collection_links(req, "volume-transfers", found,
                                 api.limit_marker(req.query)[0], len(found))
        if links:
            out["transfers_links"] = links
    return respond(req, out)


def list_transfers(req):
    return _list(req, detailed=False)


def list_detail(req):
    return _list(req, detailed=True)


def create(req):
    new = _new_api(req)
    row, auth_key = transfers.create(
        req.context, body(req), with_no_snapshots=new and microversion.at_least(req, "3.55"))
    return respond(req, {"transfer": _detail(req, row, auth_key)}, 202)


def show(req):
    check_project(req)
    _new_api(req)
    return respond(req, {"transfer": _detail(req, transfers.get(
        req.context, req.params["transfer_id"]))})


def accept(req):
    _new_api(req)
    row, _ = transfers.accept(req.context, req.params["transfer_id"], body(req))
    return respond(req, {"transfer": transfers.summary_view(row, req.context,
                                                            req.service_url)}, 202)


def delete(req):
    check_project(req)
    _new_api(req)
    transfers.delete(req.context, req.params["transfer_id"])
    return respond(req, None, 202)
