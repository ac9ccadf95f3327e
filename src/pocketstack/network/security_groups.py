"""Security groups and their rules, with neutron's defaults and validation.

Every project gets a `default` group on first use (listing groups, creating a network or
a port) holding neutron's four default rules: egress to anywhere over IPv4 and IPv6, and
ingress from members of the same group. A rule is stored with a fingerprint of what it
means (protocol by number, canonical ports and prefix), unique per group: a duplicate is a
409 on every database engine, even when two requests race.
"""
from __future__ import annotations

import ipaddress

import sqlalchemy as sa
from sqlalchemy import orm

from pocketstack.common import db, numbers
from pocketstack.network import agent as host_agent
from pocketstack.network import address_groups, base, listing, quotas, rbac
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import (DefaultSecurityGroup, PortSecurityGroup,
                                        SecurityGroup, SecurityGroupRule, Tag)

PROTOCOLS = {"ah": 51, "dccp": 33, "egp": 8, "esp": 50, "gre": 47, "hopopt": 0, "icmp": 1,
             "igmp": 2, "ip": 0, "ipip": 4, "ipv6-encap": 41, "ipv6-frag": 44,
             "ipv6-icmp": 58, "icmpv6": 58, "ipv6-nonxt": 59, "ipv6-opts": 60,
             "ipv6-route": 43, "ospf": 89, "pgm": 113, "rsvp": 46, "sctp": 132, "tcp": 6,
             "udp": 17, "udplite": 136, "vrrp": 112}
PORT_PROTOCOLS = {6, 17, 33, 132, 136}
ICMP_PROTOCOLS = {1, 58}
IPV6_ONLY = {"ipv6-encap", "ipv6-frag", "ipv6-icmp", "icmpv6", "ipv6-nonxt", "ipv6-opts",
             "ipv6-route", "41", "44", "58", "59", "60", "43"}
SUPPORTED = [None, "any"] + list(PROTOCOLS)


def _protocol(value, name):
    if value is None or value == "any":
        return None
    if isinstance(value, bool):
        raise exc.SecurityGroupRuleInvalidProtocol(value, SUPPORTED)
    if isinstance(value, int) or numbers.is_int_text(value):
        if 0 <= int(value) <= 255:
            return str(int(value))
        raise exc.SecurityGroupRuleInvalidProtocol(value, SUPPORTED)
    if isinstance(value, str) and value.lower() in PROTOCOLS:
        return value.lower()
    raise exc.SecurityGroupRuleInvalidProtocol(value, SUPPORTED)


def _ethertype(value, name):
    if isinstance(value, str):
        for ethertype in ("IPv4", "IPv6"):
            if value.lower() == ethertype.lower():
                return ethertype
    raise exc.SecurityGroupRuleInvalidEtherType(value)


def _port(value, name):
    if value is None:
        return None
    if isinstance(value, bool) or not (isinstance(value, int) or
                                       numbers.is_int_text(value)):
        raise exc.SecurityGroupInvalidPortValue(value)
    if not 0 <= int(value) <= 65535:
        raise exc.SecurityGroupInvalidPortValue(value)
    return int(value)


def _prefix(value, name):
    if value is None or value == "":
        return None
    try:
        if not isinstance(value, str) or "%" in value:
            raise ValueError(value)
        return str(ipaddress.ip_interface(value))
    except ValueError:
        raise exc.InvalidCIDR(value) from None


def _name_not_default(value, name):
    value = v.string()(value, name)
    if value.lower() == "default":
        raise exc.SecurityGroupDefaultAlreadyExists()
    return value


GROUP_ATTRS = {
    "name": v.Attr(_name_not_default),
    "description": v.Attr(v.string()),
    "stateful": v.Attr(v.boolean),
    "project_id": v.Attr(v.project_id, put=False),
    "tenant_id": v.Attr(v.project_id, put=False),
    "tags": v.Attr(v.tags, put=False),
}

def _group_reference(value, name):
    if value is None or isinstance(value, str):
        return value or None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise v.invalid(name, f"'{value}' is not a valid security group id")


RULE_ATTRS = {
    "security_group_id": v.Attr(v.uuid_string, put=False),
    "direction": v.Attr(v.one_of("ingress", "egress"), put=False),
    "ethertype": v.Attr(_ethertype, put=False),
    "protocol": v.Attr(_protocol, put=False),
    "port_range_min": v.Attr(_port, put=False),
    "port_range_max": v.Attr(_port, put=False),
    "remote_ip_prefix": v.Attr(_prefix, put=False),
    # Not validated as a UUID in neutron either: a malformed id is a group that does not
    # exist (404).
    "remote_group_id": v.Attr(_group_reference, put=False),
    "remote_address_group_id": v.Attr(v.nullable_uuid, put=False),
    "description": v.Attr(v.string()),
    "project_id": v.Attr(v.project_id, put=False),
    "tenant_id": v.Attr(v.project_id, put=False),
}


GROUPS = listing.Collection(
    name="security-groups", model=SecurityGroup, not_found=exc.SecurityGroupNotFound,
    columns={"id": SecurityGroup.id, "name": SecurityGroup.name,
             "description": SecurityGroup.description,
             "project_id": SecurityGroup.project_id, "tenant_id": SecurityGroup.project_id,
             "stateful": SecurityGroup.stateful,
             "revision_number": SecurityGroup.revision_number,
             "created_at": SecurityGroup.created_at, "updated_at": SecurityGroup.updated_at},
    special={"shared": lambda values: sa.true() if "false" in [x.lower() for x in values]
             else sa.false()},
    ignored=frozenset({"security_group_rules"}),
)

RULES = listing.Collection(
    name="security-group-rules", model=SecurityGroupRule,
    not_found=exc.SecurityGroupRuleNotFound,
    columns={"id": SecurityGroupRule.id, "security_group_id": SecurityGroupRule.security_group_id,
             "direction": SecurityGroupRule.direction, "ethertype": SecurityGroupRule.ethertype,
             "protocol": SecurityGroupRule.protocol,
             "port_range_min": SecurityGroupRule.port_range_min,
             "port_range_max": SecurityGroupRule.port_range_max,
             "remote_ip_prefix": SecurityGroupRule.remote_ip_prefix,
             "remote_group_id": SecurityGroupRule.remote_group_id,
             "remote_address_group_id": SecurityGroupRule.remote_address_group_id,
             "description": SecurityGroupRule.description,
             "project_id": SecurityGroupRule.project_id,
             "tenant_id": SecurityGroupRule.project_id,
             "revision_number": SecurityGroupRule.revision_number,
             "created_at": SecurityGroupRule.created_at,
             "updated_at": SecurityGroupRule.updated_at},
)


def group_visible(ctx):
    if base.sees_all(ctx):
        return sa.true()
    return sa.or_(SecurityGroup.project_id == ctx.project_id,
                  rbac.granted("security_group", SecurityGroup.id, ctx.project_id,
                               (rbac.SHARED,)))


def rule_visible(ctx):
    if base.sees_all(ctx):
        return sa.true()
    return sa.or_(SecurityGroupRule.project_id == ctx.project_id,
                  SecurityGroupRule.security_group_id.in_(
                      sa.select(SecurityGroup.id).where(
                          SecurityGroup.project_id == ctx.project_id)),
                  rbac.granted("security_group", SecurityGroupRule.security_group_id,
                               ctx.project_id, (rbac.SHARED,)))


# --- views ---------------------------------------------------------------------------

def rule_view(rule: SecurityGroupRule) -> dict:
    prefix = rule.remote_ip_prefix
    return {"id": rule.id, "security_group_id": rule.security_group_id,
            "direction": rule.direction, "ethertype": rule.ethertype,
            "protocol": rule.protocol, "port_range_min": rule.port_range_min,
            "port_range_max": rule.port_range_max, "remote_ip_prefix": prefix,
            "remote_group_id": rule.remote_group_id,
            "remote_address_group_id": rule.remote_address_group_id,
            "normalized_cidr": str(ipaddress.ip_interface(prefix).network) if prefix else None,
            "description": rule.description, **base.project_view(rule.project_id),
            "created_at": base.isotime(rule.created_at),
            "updated_at": base.isotime(rule.updated_at),
            "revision_number": rule.revision_number}


def group_view(group: SecurityGroup, tags, shared: bool = False) -> dict:
    """``shared``: an RBAC policy shares it with the caller's project (or everyone)."""
    return {"id": group.id, "name": group.name, **base.project_view(group.project_id),
            "security_group_rules": [rule_view(r) for r in group.rules],
            "stateful": group.stateful, "shared": shared,
            **base.standard_view(group, tags)}


# --- rules: canonical form, validation, fingerprint ---------------------------------

def _protocol_number(protocol: str | None) -> int | None:
    if protocol is None:
        return None
    return int(protocol) if numbers.is_int_text(protocol) else PROTOCOLS[protocol]


def canonical_rule(values: dict) -> dict:
    """neutron's _validate_base_security_group_rule_attributes, returning the rule."""
    rule = {"direction": values.get("direction"), "ethertype": values.get("ethertype", "IPv4"),
            "protocol": values.get("protocol"), "port_range_min": values.get("port_range_min"),
            "port_range_max": values.get("port_range_max"),
            "remote_ip_prefix": values.get("remote_ip_prefix"),
            "remote_group_id": values.get("remote_group_id"),
            "remote_address_group_id": values.get("remote_address_group_id")}
    if rule["direction"] is None:
        raise exc.HTTPBadRequest("Failed to parse request. Required attribute 'direction' "
                                 "not specified")
    if rule["ethertype"] == "IPv6":  # legacy IPv6 ICMP names become ipv6-icmp
        if rule["protocol"] in ("icmp", "icmpv6"):
            rule["protocol"] = "ipv6-icmp"
        elif rule["protocol"] == "1":
            rule["protocol"] = "58"
    if rule["port_range_min"] == 1 and rule["port_range_max"] == 65535:
        rule["port_range_min"] = rule["port_range_max"] = None
    low, high = rule["port_range_min"], rule["port_range_max"]
    if low is not None or high is not None:
        number = _protocol_number(rule["protocol"])
        if number is None:
            raise exc.SecurityGroupProtocolRequiredWithPorts()
        if number in PORT_PROTOCOLS:
            if low == 0 or high == 0:
                raise exc.SecurityGroupInvalidPortValue(0)
            if low is None or high is None or low > high:
                raise exc.SecurityGroupInvalidPortRange()
        elif number in ICMP_PROTOCOLS:
            for attr, field, value in (("port_range_min", "type", low),
                                       ("port_range_max", "code", high)):
                if value is not None and not 0 <= value <= 255:
                    raise exc.SecurityGroupInvalidIcmpValue(field, attr, value)
            if low is None and high is not None:
                raise exc.SecurityGroupMissingIcmpType(high)
        else:
            raise exc.SecurityGroupInvalidProtocolForPort(number)
    prefix = rule["remote_ip_prefix"]
    if prefix and rule["ethertype"] != f"IPv{ipaddress.ip_interface(prefix).version}":
        raise exc.SecurityGroupRuleParameterConflict(rule["ethertype"], prefix)
    if rule["protocol"] in IPV6_ONLY and rule["ethertype"] == "IPv4":
        raise exc.SecurityGroupEthertypeConflictWithProtocol(rule["ethertype"],
                                                             rule["protocol"])
    if sum(bool(rule[k]) for k in ("remote_ip_prefix", "remote_group_id",
                                   "remote_address_group_id")) > 1:
        raise exc.SecurityGroupMultipleRemoteEntites()
    return rule


def fingerprint(rule: dict) -> str:
    prefix = rule["remote_ip_prefix"]
    network = str(ipaddress.ip_interface(prefix).network) if prefix else ""
    if network in ("0.0.0.0/0", "::/0"):
        network = ""  # "anywhere" written out means the same as no prefix
    parts = (rule["direction"], rule["ethertype"], _protocol_number(rule["protocol"]),
             rule["port_range_min"], rule["port_range_max"], network,
             rule["remote_group_id"] or "")
    if rule.get("remote_address_group_id"):  # appended: older rules keep their print
        parts += (f"ag:{rule['remote_address_group_id']}",)
    return "|".join("" if p is None else str(p) for p in parts)


def _insert_rule(s, group: SecurityGroup, rule: dict, project_id: str,
                 description: str = "") -> SecurityGroupRule:
    row = SecurityGroupRule(id=base.new_id(), project_id=project_id,
                            security_group_id=group.id, description=description,
                            fingerprint=fingerprint(rule), **rule)
    base.init_standard(row)
    try:
        with s.begin_nested():
            s.add(row)
            s.flush()
    except sa.exc.IntegrityError as error:
        if not db.is_duplicate(error):
            raise
        existing = s.scalar(sa.select(SecurityGroupRule.id).where(
            SecurityGroupRule.security_group_id == group.id,
            SecurityGroupRule.fingerprint == fingerprint(rule)))
        raise exc.SecurityGroupRuleExists(existing) from None
    return row


# --- the default group ------------------------------------------------------------

def _default_rules(group_id: str) -> list[dict]:
    rules = []
    for ethertype in ("IPv4", "IPv6"):
        rules.append({"direction": "egress", "ethertype": ethertype})
        rules.append({"direction": "ingress", "ethertype": ethertype,
                      "remote_group_id": group_id})
    return [canonical_rule(r) for r in rules]


def _egress_rules() -> list[dict]:
    return [canonical_rule({"direction": "egress", "ethertype": e}) for e in ("IPv4", "IPv6")]


DEFAULT_GROUP = sa.select(DefaultSecurityGroup.security_group_id).where(
    DefaultSecurityGroup.project_id == sa.bindparam("project_id"))


def ensure_default(s, project_id: str) -> str:
    """The id of the project's `default` group, created (race-free) if missing."""
    found = base.core(s, DEFAULT_GROUP, {"project_id": project_id}).first()
    if found:
        return found[0]
    query = sa.select(DefaultSecurityGroup.security_group_id).where(
        DefaultSecurityGroup.project_id == project_id)
    group = SecurityGroup(id=base.new_id(), project_id=project_id, name="default",
                          description="Default security group", stateful=True)
    base.init_standard(group)
    try:
        with s.begin_nested():
            s.add(group)
            s.flush()
            s.add(DefaultSecurityGroup(project_id=project_id, security_group_id=group.id))
            s.flush()
            for rule in _default_rules(group.id):
                _insert_rule(s, group, rule, project_id)
    except sa.exc.IntegrityError as error:
        if not db.is_duplicate(error):
            raise
        # Another request created it first; a locking read sees its committed row.
        return s.scalar(query.with_for_update(read=True))
    return group.id


def check_usable(s, ctx, group_ids: list[str], project_id: str) -> None:
    """Groups a port of ``project_id`` may use: that project's, those shared with it by
    an RBAC policy (any, for admins)."""
    found = {g.id: g for g in s.scalars(sa.select(SecurityGroup).where(
        SecurityGroup.id.in_(group_ids)))}
    for group_id in group_ids:
        group = found.get(group_id)
        if group is None or (group.project_id != project_id and not base.sees_all(ctx)
                             and not rbac.has_access(s, "security_group", group_id,
                                                     project_id, (rbac.SHARED,))):
            raise exc.SecurityGroupNotFound(group_id)


def _group_row(s, ctx, group_id: str) -> SecurityGroup:
    group = s.scalar(sa.select(SecurityGroup).where(SecurityGroup.id == group_id,
                                                    group_visible(ctx)))
    if group is None:
        raise exc.SecurityGroupNotFound(group_id)
    return group


def _is_default(s, group: SecurityGroup) -> bool:
    return s.get(DefaultSecurityGroup, group.project_id) is not None and \
        s.get(DefaultSecurityGroup, group.project_id).security_group_id == group.id


# --- groups API ------------------------------------------------------------------

@base.retry_on_deadlock
def create_security_group(ctx, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "security_group"), GROUP_ATTRS, update=False)
    with db.transaction() as s:
        project_id = base.owner_project(ctx, values)
        base.authorize(ctx, "create_security_group", {"project_id": project_id})
        ensure_default(s, project_id)
        quotas.check(s, ctx, project_id, "security_group")
        group = SecurityGroup(id=base.new_id(), project_id=project_id,
                              name=values.get("name", ""),
                              description=values.get("description", ""),
                              stateful=values.get("stateful", True))
        base.init_standard(group)
        s.add(group)
        s.flush()
        for rule in _egress_rules():
            _insert_rule(s, group, rule, project_id)
        if values.get("tags"):
            base.set_tags(s, group.id, values["tags"])
        s.flush()
        s.refresh(group, ["rules"])
        return group_view(group, values.get("tags"))


def get_security_group(ctx, group_id: str) -> dict:
    if ctx.project_id:
        _ensure_default_for(ctx)
    with db.reader() as s:
        group = _group_row(s, ctx, group_id)
        return group_view(group, base.tags_of(s, group.id),
                          group.id in _shared_with_caller(s, ctx, [group]))


def _shared_with_caller(s, ctx, groups: list) -> dict:
    return rbac.actions_for(s, "security_group", [g.id for g in groups], ctx.project_id)


def _ensure_default_for(ctx) -> None:
    with db.reader() as s:
        if s.get(DefaultSecurityGroup, ctx.project_id) is not None:
            return
    with db.transaction() as s:
        ensure_default(s, ctx.project_id)


def list_security_groups(ctx, params: listing.Params):
    if ctx.project_id:
        _ensure_default_for(ctx)
    with db.reader() as s:
        page = listing.select_page(s, GROUPS, params, group_visible(ctx),
                                   options=[orm.selectinload(SecurityGroup.rules)])
        tags = listing.tags_by_id(s, [g.id for g in page.rows])
        shared = _shared_with_caller(s, ctx, page.rows)
        items = [listing.select_fields(group_view(g, tags.get(g.id), g.id in shared), params)
                 for g in page.rows]
    return items, page


@base.retry_on_deadlock
def update_security_group(ctx, group_id: str, body: dict,
                          if_revision: int | None = None) -> dict:
    values = v.parse(v.resource_body(body, "security_group"), GROUP_ATTRS, update=True)
    with db.transaction() as s:
        group = _group_row(s, ctx, group_id)
        base.authorize(ctx, "update_security_group", {"project_id": group.project_id})
        base.check_revision(group, if_revision)
        if "name" in values and _is_default(s, group) and values["name"] != group.name:
            raise exc.SecurityGroupCannotUpdateDefault()
        if "stateful" in values and values["stateful"] != group.stateful and s.scalar(
                sa.select(PortSecurityGroup.port_id).where(
                    PortSecurityGroup.security_group_id == group.id).limit(1)):
            raise exc.SecurityGroupInUse(group.id, "in use by ports, cannot change stateful")
        for key in ("name", "description", "stateful"):
            if key in values:
                setattr(group, key, values[key])
        base.touch(group)
        s.flush()
        return group_view(group, base.tags_of(s, group.id))


@base.retry_on_deadlock
def delete_security_group(ctx, group_id: str, if_revision: int | None = None) -> None:
    with db.transaction() as s:
        group = _group_row(s, ctx, group_id)
        target = {"project_id": group.project_id}
        base.authorize(ctx, "delete_security_group", target)
        base.check_revision(group, if_revision)
        if _is_default(s, group) and not base.can(ctx, "delete_security_group:default",
                                                  target):
            raise exc.SecurityGroupCannotRemoveDefault()
        if s.scalar(sa.select(PortSecurityGroup.port_id).where(
                PortSecurityGroup.security_group_id == group.id).limit(1)):
            raise exc.SecurityGroupInUse(group.id)
        s.execute(sa.delete(Tag).where(Tag.resource_id == group.id))
        s.execute(sa.delete(SecurityGroupRule).where(sa.or_(
            SecurityGroupRule.security_group_id == group.id,
            SecurityGroupRule.remote_group_id == group.id)))
        s.execute(sa.delete(DefaultSecurityGroup).where(
            DefaultSecurityGroup.security_group_id == group.id))
        rbac.delete_for(s, "security_group", group.id)
        s.execute(sa.delete(SecurityGroup).where(SecurityGroup.id == group.id))


# --- rules API -----------------------------------------------------------------

def _create_rule_in(s, ctx, values: dict) -> SecurityGroupRule:
    if "security_group_id" not in values:
        raise exc.HTTPBadRequest("Failed to parse request. Required attribute "
                                 "'security_group_id' not specified")
    group = _group_row(s, ctx, values["security_group_id"])
    project_id = values.get("project_id") or group.project_id
    base.authorize(ctx, "create_security_group_rule", {"project_id": group.project_id})
    rule = canonical_rule(values)
    if rule["remote_group_id"]:
        _group_row(s, ctx, rule["remote_group_id"])
    if rule["remote_address_group_id"]:
        address_groups.check_usable(s, ctx, rule["remote_address_group_id"], project_id)
    quotas.check(s, ctx, project_id, "security_group_rule")
    row = _insert_rule(s, group, rule, project_id, values.get("description", ""))
    base.touch(group)
    return row


@base.retry_on_deadlock
def create_security_group_rule(ctx, body: dict) -> dict:
    if isinstance(body, dict) and "security_group_rules" in body:
        items = body["security_group_rules"]
        if not isinstance(items, list):
            raise exc.HTTPBadRequest("Unable to find 'security_group_rules' in request body")
        parsed = [v.parse(v.resource_body({"r": i}, "r"), RULE_ATTRS, update=False)
                  for i in items]
        seen = set()
        for values in parsed:
            key = (values.get("security_group_id"), fingerprint(canonical_rule(values)))
            if key in seen:
                raise exc.DuplicateSecurityGroupRuleInPost()
            seen.add(key)
        with db.transaction() as s:
            out = {"security_group_rules": [rule_view(_create_rule_in(s, ctx, values))
                                            for values in parsed]}
        host_agent.changed()  # real guests' firewall rules follow
        return out
    values = v.parse(v.resource_body(body, "security_group_rule"), RULE_ATTRS, update=False)
    with db.transaction() as s:
        out = {"security_group_rule": rule_view(_create_rule_in(s, ctx, values))}
    host_agent.changed()
    return out


def _rule_row(s, ctx, rule_id: str) -> SecurityGroupRule:
    rule = s.scalar(sa.select(SecurityGroupRule).where(SecurityGroupRule.id == rule_id,
                                                       rule_visible(ctx)))
    if rule is None:
        raise exc.SecurityGroupRuleNotFound(rule_id)
    return rule


def get_security_group_rule(ctx, rule_id: str) -> dict:
    with db.reader() as s:
        return rule_view(_rule_row(s, ctx, rule_id))


def list_security_group_rules(ctx, params: listing.Params):
    with db.reader() as s:
        page = listing.select_page(s, RULES, params, rule_visible(ctx))
        items = [listing.select_fields(rule_view(r), params) for r in page.rows]
    return items, page


@base.retry_on_deadlock
def update_security_group_rule(ctx, rule_id: str, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "security_group_rule"), RULE_ATTRS, update=True)
    with db.transaction() as s:
        rule = _rule_row(s, ctx, rule_id)
        base.authorize(ctx, "update_security_group_rule", {"project_id": rule.project_id})
        if "description" in values:
            rule.description = values["description"]
        base.touch(rule)
        s.flush()
        return rule_view(rule)


@base.retry_on_deadlock
def delete_security_group_rule(ctx, rule_id: str, if_revision: int | None = None) -> None:
    with db.transaction() as s:
        rule = _rule_row(s, ctx, rule_id)
        base.authorize(ctx, "delete_security_group_rule", {"project_id": rule.project_id})
        base.check_revision(rule, if_revision)
        group = s.get(SecurityGroup, rule.security_group_id)
        s.delete(rule)
        if group is not None:
            base.touch(group)
    host_agent.changed()
