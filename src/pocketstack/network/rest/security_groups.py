"""/v2.0/security-groups and /v2.0/security-group-rules"""
from pocketstack.network import security_groups as sg
from pocketstack.network.rest import common


def list_groups(req):
    items, page = sg.list_security_groups(req.context, common.params(req))
    return common.collection(req, sg.GROUPS, items, page)


def create_group(req):
    return common.created({"security_group": sg.create_security_group(req.context,
                                                                      common.body(req))})


def show_group(req):
    item = sg.get_security_group(req.context, req.params["group_id"])
    return common.ok({"security_group": common.select(item, req)})


def update_group(req):
    return common.ok({"security_group": sg.update_security_group(
        req.context, req.params["group_id"], common.body(req),
        if_revision=common.if_revision(req))})


def delete_group(req):
    sg.delete_security_group(req.context, req.params["group_id"],
                             if_revision=common.if_revision(req))
    return common.deleted()


def list_rules(req):
    items, page = sg.list_security_group_rules(req.context, common.params(req))
    return common.collection(req, sg.RULES, items, page)


def create_rule(req):
    return common.created(sg.create_security_group_rule(req.context, common.body(req)))


def show_rule(req):
    item = sg.get_security_group_rule(req.context, req.params["rule_id"])
    return common.ok({"security_group_rule": common.select(item, req)})


def update_rule(req):
    return common.ok({"security_group_rule": sg.update_security_group_rule(
        req.context, req.params["rule_id"], common.body(req))})


def delete_rule(req):
    sg.delete_security_group_rule(req.context, req.params["rule_id"],
                                  if_revision=common.if_revision(req))
    return common.deleted()
