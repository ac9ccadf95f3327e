"""/v2.0/subnets"""
from pocketstack.network import subnets
from pocketstack.network.rest import common


def list_subnets(req):
    items, page = subnets.list_subnets(req.context, common.params(req))
    return common.collection(req, subnets.COLLECTION, items, page)


def create_subnet(req):
    body = common.body(req)
    if "subnets" in body:
        return common.created({"subnets": subnets.create_subnets(req.context,
                                                                 body["subnets"])})
    return common.created({"subnet": subnets.create_subnet(req.context, body)})


def show_subnet(req):
    item = subnets.get_subnet(req.context, req.params["subnet_id"])
    return common.ok({"subnet": common.select(item, req)})


def update_subnet(req):
    return common.ok({"subnet": subnets.update_subnet(
        req.context, req.params["subnet_id"], common.body(req),
        if_revision=common.if_revision(req))})


def delete_subnet(req):
    subnets.delete_subnet(req.context, req.params["subnet_id"],
                          if_revision=common.if_revision(req))
    return common.deleted()
