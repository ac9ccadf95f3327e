"""/v2.0/address-groups"""
from pocketstack.network import address_groups
from pocketstack.network.rest import common


def list_groups(req):
    items, page = address_groups.list_groups(req.context, common.params(req))
    return common.collection(req, address_groups.COLLECTION, items, page)


def create_group(req):
    return common.created({"address_group": address_groups.create(req.context,
                                                                   common.body(req))})


def show_group(req):
    return common.ok({"address_group": common.select(
        address_groups.get(req.context, req.params["address_group_id"]), req)})


def update_group(req):
    return common.ok({"address_group": address_groups.update(
        req.context, req.params["address_group_id"], common.body(req),
        if_revision=common.if_revision(req))})


def delete_group(req):
    address_groups.delete(req.context, req.params["address_group_id"],
                          if_revision=common.if_revision(req))
    return common.deleted()


def add_addresses(req):
    return common.ok({"address_group": address_groups.change_addresses(
        req.context, req.params["address_group_id"], req.json(), add=True)})


def remove_addresses(req):
    return common.ok({"address_group": address_groups.change_addresses(
        req.context, req.params["address_group_id"], req.json(), add=False)})
