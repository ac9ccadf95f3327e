"""/v2.0/subnetpools"""
from pocketstack.network import subnetpools
from pocketstack.network.rest import common


def list_subnetpools(req):
    items, page = subnetpools.list_subnetpools(req.context, common.params(req))
    return common.collection(req, subnetpools.COLLECTION, items, page)


def create_subnetpool(req):
    return common.created({"subnetpool": subnetpools.create_subnetpool(req.context,
                                                                       common.body(req))})


def show_subnetpool(req):
    item = subnetpools.get_subnetpool(req.context, req.params["subnetpool_id"])
    return common.ok({"subnetpool": common.select(item, req)})


def update_subnetpool(req):
    return common.ok({"subnetpool": subnetpools.update_subnetpool(
        req.context, req.params["subnetpool_id"], common.body(req),
        if_revision=common.if_revision(req))})


def delete_subnetpool(req):
    subnetpools.delete_subnetpool(req.context, req.params["subnetpool_id"],
                                  if_revision=common.if_revision(req))
    return common.deleted()


def add_prefixes(req):
    return common.ok(subnetpools.add_prefixes(req.context, req.params["subnetpool_id"],
                                              req.json()))


def remove_prefixes(req):
    return common.ok(subnetpools.remove_prefixes(req.context, req.params["subnetpool_id"],
                                                 req.json()))
