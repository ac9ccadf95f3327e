"""The rules of a QoS policy, of the types neutron's reference drivers know:
bandwidth_limit, dscp_marking, minimum_bandwidth, minimum_packet_rate and
packet_rate_limit (qos-pps), under /v2.0/qos/policies/{id}/<type>_rules and, by rule id
alone, /v2.0/qos/alias_<type>_rules (qos-rules-alias, qos-pps-minimum-rule-alias); each
type's fields are in qos_rule_kinds.py. Conflicts are refused as neutron's
qos_policy_validator does. Writing is for admins, as in neutron. Rules are recorded: no
packet is shaped or marked, and a minimum_* rule asks placement for nothing.
"""
from __future__ import annotations

from pocketstack.common import db
from pocketstack.network import base, qos
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import QosBandwidthLimitRule, QosPolicy, QosRule
from pocketstack.network.qos_rule_kinds import KINDS, Kind, fields, rows, view


def _row(s, kind: Kind, policy: QosPolicy, rule_id: str):
    rule = s.get(kind.model, rule_id)
    if rule is None or rule.qos_policy_id != policy.id or (
            not kind.own_table and rule.rule_type != kind.type):
        raise exc.QosRuleNotFound(policy.id, rule_id)
    return rule


def _check_conflicts(s, policy: QosPolicy, kind: Kind, asked: dict, merged: dict,
                     rule_id: str = "") -> None:
    """neutron's checks, in its order: a minimum below a limit of the same direction (on
    what was asked), 'any' beside a directed minimum packet rate, then a second rule of
    the same type and direction."""
    others = {k.type: [r for r in rows(s, k, policy.id) if r.id != rule_id]
              for k in KINDS.values()}
    direction = asked.get("direction")
    for rule in others["minimum_bandwidth"]:
        if "max_kbps" in asked and (not direction or rule.direction == direction) \
                and rule.value > asked["max_kbps"]:
            raise exc.QoSRuleParameterConflict(asked["max_kbps"], policy.id,
                                               "minimum_bandwidth", rule.value)
    for rule in others["bandwidth_limit"]:
        if "min_kbps" in asked and (not direction or rule.direction == direction) \
                and rule.max_kbps < asked["min_kbps"]:
            raise exc.QoSRuleParameterConflict(asked["min_kbps"], policy.id,
                                               "bandwidth_limit", rule.max_kbps)
    if kind.type == "minimum_packet_rate":
        new = merged["direction"]
        for rule in others["minimum_packet_rate"]:
            if (new == "any") != (rule.direction == "any"):
                raise exc.QoSRuleParameterConflict(new, policy.id, "minimum_packet_rate",
                                                   rule.direction)
    for rule in others[kind.type]:
        if not kind.directions or rule.direction == merged["direction"]:
            raise exc.QoSRulesConflict(policy.id, rule.id, kind.type)


def _body(kind: Kind, body, update: bool, alias: bool = False) -> dict:
    key = f"alias_{kind.type}_rule" if alias else f"{kind.type}_rule"
    values = v.parse(v.resource_body(body, key), kind.attrs, update=update)
    if not update and kind.value not in values:
        raise exc.HTTPBadRequest(f"Failed to parse request. Required attribute "
                                 f"'{kind.value}' not specified")
    return values


def _defaults(kind: Kind) -> dict:
    out = {"direction": "egress"} if kind.directions else {}
    if kind.own_table:
        out["max_burst_kbps"] = 0
    if kind.burst:
        out[kind.burst] = 0
    return out


def create_rule(ctx, rule_type: str, policy_id: str, body) -> dict:
    kind = KINDS[rule_type]
    values = _body(kind, body, update=False)
    with db.transaction() as s:
        policy = qos.get_row(s, ctx, policy_id, lock=True)
        base.authorize(ctx, f"create_policy_{rule_type}_rule",
                       {"project_id": policy.project_id})
        merged = {**_defaults(kind), **values}
        _check_conflicts(s, policy, kind, values, merged)
        if kind.own_table:
            rule = QosBandwidthLimitRule(id=base.new_id(), qos_policy_id=policy.id, **merged)
        else:
            rule = QosRule(id=base.new_id(), qos_policy_id=policy.id, rule_type=kind.type,
                           direction=merged.get("direction", ""), value=merged[kind.value],
                           burst=merged[kind.burst] if kind.burst else None)
        s.add(rule)
        base.touch(policy)
        s.flush()
        return view(kind, rule)


def list_rules(ctx, rule_type: str, policy_id: str) -> list[dict]:
    kind = KINDS[rule_type]
    with db.reader() as s:
        return [view(kind, r) for r in rows(s, kind, qos.get_row(s, ctx, policy_id).id)]


def get_rule(ctx, rule_type: str, policy_id: str, rule_id: str) -> dict:
    kind = KINDS[rule_type]
    with db.reader() as s:
        return view(kind, _row(s, kind, qos.get_row(s, ctx, policy_id), rule_id))


def update_rule(ctx, rule_type: str, policy_id: str, rule_id: str, body,
                alias: bool = False) -> dict:
    kind = KINDS[rule_type]
    values = _body(kind, body, update=True, alias=alias)
    with db.transaction() as s:
        policy = qos.get_row(s, ctx, policy_id, lock=True)
        base.authorize(ctx, f"update_policy_{rule_type}_rule",
                       {"project_id": policy.project_id})
        rule = _row(s, kind, policy, rule_id)
        merged = {**fields(kind, rule), **values}
        _check_conflicts(s, policy, kind, values, merged, rule_id=rule.id)
        if kind.own_table:
            for key, value in values.items():
                setattr(rule, key, value)
        else:
            rule.value = merged[kind.value]
            rule.direction = merged.get("direction", "")
            if kind.burst:
                rule.burst = merged[kind.burst]
        base.touch(policy)
        s.flush()
        return view(kind, rule)


def delete_rule(ctx, rule_type: str, policy_id: str, rule_id: str) -> None:
    kind = KINDS[rule_type]
    with db.transaction() as s:
        policy = qos.get_row(s, ctx, policy_id, lock=True)
        base.authorize(ctx, f"delete_policy_{rule_type}_rule",
                       {"project_id": policy.project_id})
        s.delete(_row(s, kind, policy, rule_id))
        base.touch(policy)


# --- qos-rules-alias: a rule by its id alone -------------------------------------------

def policy_of(rule_type: str, rule_id: str) -> str:
    """The policy a rule belongs to (neutron's _get_policy_id: a rule of another type or
    none at all is 404 with an empty policy id)."""
    kind = KINDS[rule_type]
    with db.reader() as s:
        rule = s.get(kind.model, rule_id)
        if rule is None or (not kind.own_table and rule.rule_type != kind.type):
            raise exc.QosRuleNotFound("", rule_id)
        return rule.qos_policy_id


# --- rule types ------------------------------------------------------------------------

def rule_type(ctx, name: str) -> dict:
    """GET /qos/rule-types/{type}: for admins, as neutron's plugin. No backend driver
    enforces rules here, so none is listed."""
    if not base.sees_all(ctx):
        raise exc.NotAuthorized("Not authorized.")
    if name not in KINDS:
        raise exc.ResourceNotFound(f"QoS rule type {name} could not be found.")
    return {"type": name, "drivers": []}
