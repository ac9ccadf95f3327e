"""/v2.0/floatingips and /v2.0/floatingips/{id}/port_forwardings"""
from pocketstack.network import floatingips, port_forwardings
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
        req.context, req.params["floatingip_id"], common.body(req),
        if_revision=common.if_revision(req))})


def delete_floatingip(req):
    floatingips.delete_floatingip(req.context, req.params["floatingip_id"],
                                  if_revision=common.if_revision(req))
    return common.deleted()


# --- port forwardings ------------------------------------------------------------------

def list_port_forwardings(req):
    items = port_forwardings.list_for(req.context, req.params["floatingip_id"],
                                      common.params(req))
    return common.ok({"port_forwardings": [common.select(i, req) for i in items]})


def create_port_forwarding(req):
    return common.created({"port_forwarding": port_forwardings.create(
        req.context, req.params["floatingip_id"], common.body(req))})


def show_port_forwarding(req):
    item = port_forwardings.get(req.context, req.params["floatingip_id"],
                                req.params["port_forwarding_id"])
    return common.ok({"port_forwarding": common.select(item, req)})


def update_port_forwarding(req):
    return common.ok({"port_forwarding": port_forwardings.update(
        req.context, req.params["floatingip_id"], req.params["port_forwarding_id"],
        common.body(req))})


def delete_port_forwarding(req):
    port_forwardings.delete(req.context, req.params["floatingip_id"],
                            req.params["port_forwarding_id"])
    return common.deleted()
