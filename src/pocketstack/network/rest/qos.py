"""/v2.0/qos/policies, their bandwidth_limit_rules, and /v2.0/qos/rule-types."""
from pocketstack.network import exceptions as exc
from pocketstack.network import qos, qos_rule_kinds, qos_rules
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


def _kind(req) -> str:
    rule_type = req.params["rule_type"]
    if rule_type not in qos_rule_kinds.KINDS:  # no such collection
        raise exc.ResourceNotFound("The resource could not be found.")
    return rule_type


def _aliased_kind(req) -> str:
    rule_type = _kind(req)
    if not qos_rule_kinds.KINDS[rule_type].aliased:  # neutron has no alias collection for it
        raise exc.ResourceNotFound("The resource could not be found.")
    return rule_type


def list_rules(req):
    rules = qos_rules.list_rules(req.context, _kind(req), req.params["policy_id"])
    return common.ok({f"{_kind(req)}_rules": [common.select(r, req) for r in rules]})


def create_rule(req):
    return common.created({f"{_kind(req)}_rule": qos_rules.create_rule(
        req.context, _kind(req), req.params["policy_id"], common.body(req))})


def show_rule(req):
    rule = qos_rules.get_rule(req.context, _kind(req), req.params["policy_id"],
                              req.params["rule_id"])
    return common.ok({f"{_kind(req)}_rule": common.select(rule, req)})


def update_rule(req):
    return common.ok({f"{_kind(req)}_rule": qos_rules.update_rule(
        req.context, _kind(req), req.params["policy_id"], req.params["rule_id"],
        common.body(req))})


def delete_rule(req):
    qos_rules.delete_rule(req.context, _kind(req), req.params["policy_id"],
                          req.params["rule_id"])
    return common.deleted()


# qos-rules-alias: the same rules by id alone, under "alias_<type>_rule"

def show_alias_rule(req):
    policy_id = qos_rules.policy_of(_aliased_kind(req), req.params["rule_id"])
    rule = qos_rules.get_rule(req.context, _aliased_kind(req), policy_id, req.params["rule_id"])
    return common.ok({f"alias_{_aliased_kind(req)}_rule": common.select(rule, req)})


def update_alias_rule(req):
    policy_id = qos_rules.policy_of(_aliased_kind(req), req.params["rule_id"])
    return common.ok({f"alias_{_aliased_kind(req)}_rule": qos_rules.update_rule(
        req.context, _aliased_kind(req), policy_id, req.params["rule_id"], common.body(req),
        alias=True)})


def delete_alias_rule(req):
    policy_id = qos_rules.policy_of(_aliased_kind(req), req.params["rule_id"])
    qos_rules.delete_rule(req.context, _aliased_kind(req), policy_id, req.params["rule_id"])
    return common.deleted()


def list_rule_types(req):
    # all_rules / all_supported (qos-rule-type-filter) list the same: every type here
    # is recorded alike
    return common.ok({"rule_types": [common.select({"type": t}, req)
                                     for t in qos_rule_kinds.RULE_TYPES]})


def show_rule_type(req):
    return common.ok({"rule_type": common.select(
        qos_rules.rule_type(req.context, req.params["rule_type"]), req)})
