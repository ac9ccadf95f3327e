"""/v2.0/ports"""
from pocketstack.network import port_delete, port_update, ports
from pocketstack.network.rest import common


def list_ports(req):
    items, page = ports.list_ports(req.context, common.params(req))
    return common.collection(req, ports.COLLECTION, items, page)


def create_port(req):
    return common.created(ports.create_port(req.context, common.body(req)))


def show_port(req):
    item = ports.get_port(req.context, req.params["port_id"])
    return common.ok({"port": common.select(item, req)})


def update_port(req):
    return common.ok(port_update.update_port(req.context, req.params["port_id"],
                                             common.body(req),
                                             if_revision=common.if_revision(req)))


def delete_port(req):
    port_delete.delete_port(req.context, req.params["port_id"],
                            if_revision=common.if_revision(req))
    return common.deleted()
