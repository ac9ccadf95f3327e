"""The QoS rule types neutron's reference drivers know (bandwidth_limit, dscp_marking,
minimum_bandwidth, minimum_packet_rate, packet_rate_limit): each one's fields and their
checks, and its rows of a policy as a policy's ``rules`` shows them. The rule API is
qos_rules.py; a policy (qos.py) reads and deletes its rules through this module.
"""
from __future__ import annotations

import dataclasses

import sqlalchemy as sa

from pocketstack.network import validate as v
from pocketstack.network.models import QosBandwidthLimitRule, QosRule

VALID_DSCP_MARKS = (0, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 44,
                    46, 48, 56)
_kbps = v.integer(0, 2 ** 31 - 1)
_DIRECTIONS = ("egress", "ingress")


def _dscp(value, name) -> int:
    mark = v.integer()(value, name)
    if mark not in VALID_DSCP_MARKS:
        raise v.invalid(name, f"{mark} is not in {list(VALID_DSCP_MARKS)}")
    return mark


@dataclasses.dataclass(frozen=True)
class Kind:
    type: str
    value: str                 # the one required field (QosRule.value for the generic ones)
    attrs: dict
    directions: tuple = ()     # () : the type has no direction (dscp_marking)
    burst: str = ""            # its burst field (QosRule.burst), if it has one
    aliased: bool = True       # reachable by id alone under /qos/alias_<type>_rules

    @property
    def own_table(self) -> bool:
        return self.type == "bandwidth_limit"

    @property
    def model(self):
        return QosBandwidthLimitRule if self.own_table else QosRule


KINDS = {k.type: k for k in (
    Kind("bandwidth_limit", "max_kbps",
         {"max_kbps": v.Attr(_kbps), "max_burst_kbps": v.Attr(_kbps),
          "direction": v.Attr(v.one_of(*_DIRECTIONS))}, _DIRECTIONS),
    Kind("dscp_marking", "dscp_mark", {"dscp_mark": v.Attr(_dscp)}),
    Kind("minimum_bandwidth", "min_kbps",
         {"min_kbps": v.Attr(_kbps), "direction": v.Attr(v.one_of(*_DIRECTIONS))},
         _DIRECTIONS),
    Kind("minimum_packet_rate", "min_kpps",
         {"min_kpps": v.Attr(_kbps), "direction": v.Attr(v.one_of("any", *_DIRECTIONS))},
         ("any", *_DIRECTIONS)),
    Kind("packet_rate_limit", "max_kpps",
         {"max_kpps": v.Attr(_kbps), "max_burst_kpps": v.Attr(_kbps),
          "direction": v.Attr(v.one_of(*_DIRECTIONS))}, _DIRECTIONS,
         burst="max_burst_kpps", aliased=False),
)}
RULE_TYPES = tuple(KINDS)


def fields(kind: Kind, rule) -> dict:
    if kind.own_table:
        return {"max_kbps": rule.max_kbps, "max_burst_kbps": rule.max_burst_kbps,
                "direction": rule.direction}
    out = {kind.value: rule.value}
    if kind.burst:
        out[kind.burst] = rule.burst or 0
    if kind.directions:
        out["direction"] = rule.direction
    return out


def view(kind: Kind, rule, in_policy: bool = False) -> dict:
    out = {"id": rule.id, **fields(kind, rule)}
    if in_policy:  # inside a policy's "rules"
        out.update(qos_policy_id=rule.qos_policy_id, type=kind.type)
    return out


def rows(s, kind: Kind, policy_id: str) -> list:
    model = kind.model
    query = sa.select(model).where(model.qos_policy_id == policy_id)
    if not kind.own_table:
        query = query.where(QosRule.rule_type == kind.type)
    return list(s.scalars(query.order_by(model.direction, model.id)))


def policy_rules(s, policy_id: str) -> list[dict]:
    """The policy's "rules": every type's, with ``type`` and ``qos_policy_id``."""
    return [view(kind, r, in_policy=True) for kind in KINDS.values()
            for r in rows(s, kind, policy_id)]


def delete_for_policy(s, policy_id: str) -> None:
    for model in (QosBandwidthLimitRule, QosRule):
        s.execute(sa.delete(model).where(model.qos_policy_id == policy_id))
