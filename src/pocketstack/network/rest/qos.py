"""/v2.0/qos/policies, their bandwidth_limit_rules, and /v2.0/qos/rule-types."""
from pocketstack.network import exceptions as exc
from pocketstack.network import qos
from pocketstack.network.rest import common


def list_policies(req):
    items, page = qos.list_policies(req.context, common.params(req))
    return common.collection(req, qos.COLLECTION, items, page, key="policies")


def create_policy(req):
    return common.created({"policy": qos.create_policy(req.context, common.body(req))})


def show_policy(req):
    return common.ok({"policy": common.select(qos.get_policy(req.context,
                                                              req.params["policy_id"]), req)})


def update_policy(req):
    return common.ok({"policy": qos.update_policy(
        req.context, req.params["policy_id"], common.body(req),
        if_revision=common.if_revision(req))})


def delete_policy(req):
    qos.delete_policy(req.context, req.params["policy_id"],
                      if_revision=common.if_revision(req))
    return common.deleted()


def list_rules(req):
    rules = qos.list_rules(req.context, req.params["policy_id"])
    return common.ok({"bandwidth_limit_rules": [common.select(r, req) for r in rules]})


def create_rule(req):
    return common.created({"bandwidth_limit_rule": qos.create_rule(
        req.context, req.params["policy_id"], common.body(req))})


def show_rule(req):
    rule = qos.get_rule(req.context, req.params["policy_id"], req.params["rule_id"])
    return common.ok({"bandwidth_limit_rule": common.select(rule, req)})


def update_rule(req):
    return common.ok({"bandwidth_limit_rule": qos.update_rule(
        req.context, req.params["policy_id"], req.params["rule_id"], common.body(req))})


def delete_rule(req):
    qos.delete_rule(req.context, req.params["policy_id"], req.params["rule_id"])
    return common.deleted()


def list_rule_types(req):
    return common.ok({"rule_types": [{"type": t} for t in qos.RULE_TYPES]})


def show_rule_type(req):
    rule_type = req.params["rule_type"]
    if rule_type not in qos.RULE_TYPES:
        raise exc.ResourceNotFound(f"QoS rule type {rule_type} could not be found.")
    return common.ok({"rule_type": {"type": rule_type, "drivers": []}})
