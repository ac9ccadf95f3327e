"""/v2.0/trunks and their add_subports / remove_subports / get_subports actions."""
from pocketstack.network import trunks
from pocketstack.network.rest import common


def list_trunks(req):
    items, page = trunks.list_trunks(req.context, common.params(req))
    return common.collection(req, trunks.COLLECTION, items, page)


def create_trunk(req):
    return common.created({"trunk": trunks.create_trunk(req.context, common.body(req))})


def show_trunk(req):
    return common.ok({"trunk": common.select(trunks.get_trunk(req.context,
                                                             req.params["trunk_id"]), req)})


def update_trunk(req):
    return common.ok({"trunk": trunks.update_trunk(
        req.context, req.params["trunk_id"], common.body(req),
        if_revision=common.if_revision(req))})


def delete_trunk(req):
    trunks.delete_trunk(req.context, req.params["trunk_id"],
                        if_revision=common.if_revision(req))
    return common.deleted()


def add_subports(req):
    return common.ok(trunks.add_subports(req.context, req.params["trunk_id"], req.json()))


def remove_subports(req):
    return common.ok(trunks.remove_subports(req.context, req.params["trunk_id"], req.json()))


def get_subports(req):
    return common.ok(trunks.get_subports(req.context, req.params["trunk_id"]))
