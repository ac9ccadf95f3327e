"""/v2.0/address-scopes"""
from pocketstack.network import address_scopes
from pocketstack.network.rest import common


def list_address_scopes(req):
    items, page = address_scopes.list_address_scopes(req.context, common.params(req))
    return common.collection(req, address_scopes.COLLECTION, items, page)


def create_address_scope(req):
    return common.created({"address_scope": address_scopes.create_address_scope(
        req.context, common.body(req))})


def show_address_scope(req):
    item = address_scopes.get_address_scope(req.context, req.params["address_scope_id"])
    return common.ok({"address_scope": common.select(item, req)})


def update_address_scope(req):
    return common.ok({"address_scope": address_scopes.update_address_scope(
        req.context, req.params["address_scope_id"], common.body(req))})


def delete_address_scope(req):
    address_scopes.delete_address_scope(req.context, req.params["address_scope_id"])
    return common.deleted()
