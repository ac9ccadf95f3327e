"""/v2.0/floatingips"""
from pocketstack.network import floatingips
from pocketstack.network.rest import common


def list_floatingips(req):
    items, page = floatingips.list_floatingips(req.context, common.params(req))
    return common.collection(req, floatingips.COLLECTION, items, page)


def create_floatingip(req):
    return common.created({"floatingip": floatingips.create_floatingip(req.context,
                                                                       common.body(req))})


def show_floatingip(req):
    item = floatingips.get_floatingip(req.context, req.params["floatingip_id"])
    return common.ok({"floatingip": common.select(item, req)})


def update_floatingip(req):
    return common.ok({"floatingip": floatingips.update_floatingip(
        req.context, req.params["floatingip_id"], common.body(req))})


def delete_floatingip(req):
    floatingips.delete_floatingip(req.context, req.params["floatingip_id"])
    return common.deleted()
