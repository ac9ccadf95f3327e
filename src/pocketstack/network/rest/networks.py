"""/v2.0/networks"""
from pocketstack.network import networks
from pocketstack.network.rest import common


def list_networks(req):
    items, page = networks.list_networks(req.context, common.params(req))
    return common.collection(req, networks.COLLECTION, items, page)


def create_network(req):
    body = common.body(req)
    if "networks" in body:
        return common.created({"networks": networks.create_networks(req.context,
                                                                    body["networks"])})
    return common.created({"network": networks.create_network(req.context, body)})


def show_network(req):
    item = networks.get_network(req.context, req.params["network_id"])
    return common.ok({"network": common.select(item, req)})


def update_network(req):
    return common.ok({"network": networks.update_network(
        req.context, req.params["network_id"], common.body(req),
        if_revision=common.if_revision(req))})


def delete_network(req):
    networks.delete_network(req.context, req.params["network_id"],
                            if_revision=common.if_revision(req))
    return common.deleted()
