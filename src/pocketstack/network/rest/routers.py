"""/v2.0/routers (+ add_router_interface / remove_router_interface, add_extraroutes /
remove_extraroutes)"""
from pocketstack.network import routers
from pocketstack.network.rest import common


def list_routers(req):
    items, page = routers.list_routers(req.context, common.params(req))
    return common.collection(req, routers.COLLECTION, items, page)


def create_router(req):
    return common.created({"router": routers.create_router(req.context, common.body(req))})


def show_router(req):
    item = routers.get_router(req.context, req.params["router_id"])
    return common.ok({"router": common.select(item, req)})


def update_router(req):
    return common.ok({"router": routers.update_router(
        req.context, req.params["router_id"], common.body(req),
        if_revision=common.if_revision(req))})


def delete_router(req):
    routers.delete_router(req.context, req.params["router_id"],
                          if_revision=common.if_revision(req))
    return common.deleted()


def add_interface(req):
    return common.ok(routers.add_router_interface(req.context, req.params["router_id"],
                                                  common.body(req)))


def remove_interface(req):
    return common.ok(routers.remove_router_interface(req.context, req.params["router_id"],
                                                     common.body(req)))


def add_extraroutes(req):
    return common.ok({"router": routers.change_extraroutes(
        req.context, req.params["router_id"], common.body(req), add=True,
        if_revision=common.if_revision(req))})


def remove_extraroutes(req):
    return common.ok({"router": routers.change_extraroutes(
        req.context, req.params["router_id"], common.body(req), add=False,
        if_revision=common.if_revision(req))})


def _gateways(action: str):
    def handler(req):
        return common.ok({"router": routers.change_gateways(
            req.context, req.params["router_id"], req.json(), action,
            if_revision=common.if_revision(req))})
    handler.__name__ = f"{action}_external_gateways"
    return handler


add_external_gateways = _gateways("add")
update_external_gateways = _gateways("update")
remove_external_gateways = _gateways("remove")
