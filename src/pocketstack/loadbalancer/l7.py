"""L7 policies (ordered per listener) and their rules."""
from __future__ import annotations

import re
import urllib.parse

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.loadbalancer import api, driver, quotas, show, tree
from pocketstack.loadbalancer import constants as C
from pocketstack.loadbalancer import models as M
from pocketstack.loadbalancer import validation as V
from pocketstack.loadbalancer.validation import Field


# Octavia's validate.INVALID_URL_CHARS_RE: control characters and blanks, refused before
# parsing (a newline in a redirect target would begin a line of haproxy.cfg).
INVALID_URL_CHARS = re.compile(r"[\x00-\x20\x7f-\x9f]")


def _url(value: str) -> str | None:
    parsed = urllib.parse.urlparse(value)
    if INVALID_URL_CHARS.search(value) or parsed.scheme not in ("http", "https") \
            or not parsed.netloc:
        return f"Not a valid URL: {value}"
    return None


POLICY_FIELDS = {**api.COMMON, "action": Field("enum", choices=C.L7_ACTIONS, nullable=False),
                 "position": Field("int", minimum=1, maximum=2147483647),
                 "redirect_pool_id": V.UUID,
                 "redirect_url": Field("str", max_length=2048, check=_url),
                 "redirect_prefix": Field("str", max_length=2048, check=_url),
                 "redirect_http_code": Field("enum", choices=C.L7_REDIRECT_CODES)}
POLICY_SCHEMA = {**POLICY_FIELDS, **api.OWNER, "listener_id": Field("uuid", mandatory=True),
                 "action": Field("enum", mandatory=True, choices=C.L7_ACTIONS)}
REDIRECTS = {"REDIRECT_TO_URL": "redirect_url", "REDIRECT_TO_POOL": "redirect_pool_id",
             "REDIRECT_PREFIX": "redirect_prefix"}


def _invalid_args(msg: str) -> V.Invalid:
    return V.Invalid(f"Invalid L7 Policy arguments: {msg}")


def normalize(s, listener: M.Listener, merged: dict) -> dict:
    """Octavia's sanitize_l7policy_api_args: the fields the action needs, the others
    cleared; a redirect pool must be on the listener's load balancer and speak a
    protocol the listener can send to."""
    action = merged["action"]
    needed = REDIRECTS.get(action)
    given = [f for f in REDIRECTS.values() if merged.get(f)]
    if needed and not merged.get(needed):
        also = " or redirect_pool" if needed == "redirect_pool_id" else ""
        raise _invalid_args(f"{needed}{also} must not be None")
    if len(given) > 1:
        raise _invalid_args("Cannot specify redirect_pool_id and redirect_url or "
                            "redirect_prefix at the same time")
    out = {field: (merged.get(field) if field == needed else None)
           for field in REDIRECTS.values()}
    if action in ("REDIRECT_TO_URL", "REDIRECT_PREFIX"):
        out["redirect_http_code"] = merged.get("redirect_http_code") or 302
    else:
        out["redirect_http_code"] = None
    if action == "REDIRECT_TO_POOL":
        pool = s.get(M.Pool, out["redirect_pool_id"])
        if pool is None or pool.load_balancer_id != listener.load_balancer_id:
            raise tree.not_found(M.Pool, out["redirect_pool_id"])
        api.check_protocols(listener.protocol, pool.protocol)
    if action in ("REDIRECT_TO_URL", "REDIRECT_PREFIX") and _loops(listener, merged, s):
        raise V.validation_failure(f"The redirect would send every request matched back to "
                                   f"this listener: {merged.get(needed)}")
    return out


def _loops(listener: M.Listener, merged: dict, s) -> bool:
    """A redirect to the listener's own address and port with no rule to tell the
    redirected request apart would loop (only a policy without rules can be judged
    now: it matches everything)."""
    if merged.get("id") and tree.rows(s, M.L7Rule, listener.load_balancer_id,
                                      l7policy_id=merged["id"]):
        return False
    target = urllib.parse.urlparse(merged.get("redirect_url") or merged.get("redirect_prefix"))
    lb = s.get(M.LoadBalancer, listener.load_balancer_id)
    default = 443 if target.scheme == "https" else 80
    scheme_ok = (target.scheme == "https") == (listener.protocol == C.TERMINATED_HTTPS)
    return (scheme_ok and target.hostname == lb.vip_address
            and (target.port or default) == listener.protocol_port)


def check_listener(listener: M.Listener) -> None:
    if listener.protocol not in (C.HTTP, C.TERMINATED_HTTPS):
        raise V.validation_failure(f"L7 policies are not supported on {listener.protocol} "
                                   f"listeners. L7 policies are only supported on HTTP and "
                                   f"TERMINATED_HTTPS listeners.")


def reorder(s, listener_id: str, policy: M.L7Policy, position: int | None) -> None:
    """Positions 1..n without gaps, ``policy`` at ``position`` (the end when None or
    past it), as Octavia orders a listener's policies."""
    others = [p for p in s.scalars(sa.select(M.L7Policy).where(
        M.L7Policy.listener_id == listener_id).order_by(M.L7Policy.position))
        if p.id != policy.id and p.provisioning_status != C.PENDING_DELETE]
    index = len(others) if position is None else min(position - 1, len(others))
    others.insert(index, policy)
    for i, p in enumerate(others, start=1):
        p.position = i


def new_policy(listener: M.Listener, data: dict, redirect: dict) -> M.L7Policy:
    return M.L7Policy(
        id=tree.new_id(), project_id=listener.project_id,
        load_balancer_id=listener.load_balancer_id, listener_id=listener.id,
        name=data.get("name"), description=data.get("description"),
        admin_state_up=data.get("admin_state_up", True), tags=data.get("tags") or [],
        provisioning_status=C.PENDING_CREATE, operating_status=C.OFFLINE,
        action=data["action"], position=0, **redirect)


def new_rule(policy: M.L7Policy, data: dict) -> M.L7Rule:
    return M.L7Rule(id=tree.new_id(), project_id=policy.project_id,
                    load_balancer_id=policy.load_balancer_id, l7policy_id=policy.id,
                    admin_state_up=data.get("admin_state_up", True),
                    tags=data.get("tags") or [], provisioning_status=C.PENDING_CREATE,
                    operating_status=C.OFFLINE, type=data["type"],
                    compare_type=data["compare_type"], key=data.get("key"),
                    value=data["value"], invert=bool(data.get("invert")))


def create_l7policy(ctx, body) -> dict:
    data = V.parse(body, "l7policy", POLICY_SCHEMA, create=True)
    api.project_of(ctx, data)
    with db.transaction() as s:
        listener = tree.get(s, M.Listener, data["listener_id"], ctx, ("l7policy", "post"))
        check_listener(listener)
        redirect = normalize(s, listener, data)
        quotas.check(s, listener.project_id, "l7policy")
        tree.take(s, listener.load_balancer_id)
        tree.mark(listener)
        policy = new_policy(listener, data, redirect)
        s.add(policy)
        reorder(s, listener.id, policy, data.get("position"))
        s.flush()
        out = {"l7policy": show.view(s, policy)}
    driver.notify()
    return out


def update_l7policy(ctx, policy_id: str, body) -> dict:
    data = V.parse(body, "l7policy", POLICY_FIELDS, create=False)
    with db.transaction() as s:
        policy = tree.get(s, M.L7Policy, policy_id, ctx, ("l7policy", "put"))
        listener = s.get(M.Listener, policy.listener_id)
        merged = {"id": policy.id, "action": policy.action,
                  **{f: getattr(policy, f) for f in REDIRECTS.values()},
                  "redirect_http_code": policy.redirect_http_code}
        if "action" in data and data["action"] != policy.action:
            for field in REDIRECTS.values():  # a new action brings its own target
                merged[field] = None
        merged.update(data)
        redirect = normalize(s, listener, merged)
        tree.take(s, policy.load_balancer_id)
        tree.mark(policy, listener)
        position = data.pop("position", None)
        api._apply(policy, {**{k: v for k, v in data.items() if k not in redirect}, **redirect})
        if position is not None:
            reorder(s, listener.id, policy, position)
        out = {"l7policy": show.view(s, policy)}
    driver.notify()
    return out


def delete_l7policy(ctx, policy_id: str) -> None:
    with db.transaction() as s:
        policy = tree.get(s, M.L7Policy, policy_id, ctx, ("l7policy", "delete"))
        tree.take(s, policy.load_balancer_id)
        tree.mark(s.get(M.Listener, policy.listener_id))
        policy.provisioning_status = C.PENDING_DELETE
        for rule in tree.rows(s, M.L7Rule, policy.load_balancer_id, l7policy_id=policy.id):
            rule.provisioning_status = C.PENDING_DELETE
        reorder(s, policy.listener_id, policy, None)
    driver.notify()


# --- rules --------------------------------------------------------------------------------

RULE_FIELDS = {"admin_state_up": V.ADMIN_STATE, "tags": V.TAGS,
               "type": Field("enum", choices=C.L7_RULE_TYPES, nullable=False),
               "compare_type": Field("enum", choices=C.L7_COMPARE_TYPES, nullable=False),
               "key": Field("str"), "value": Field("str", nullable=False),
               "invert": Field("bool")}
RULE_SCHEMA = {**RULE_FIELDS, **api.OWNER,
               "type": Field("enum", mandatory=True, choices=C.L7_RULE_TYPES),
               "compare_type": Field("enum", mandatory=True, choices=C.L7_COMPARE_TYPES),
               "value": Field("str", mandatory=True)}
# Octavia's constants (RFCs 7230, 6265), matched whole with \A and \Z as there; the
# header name's class without the '+-.' range Octavia's has, which lets in a comma (no
# token character, and the end of a sample fetch's argument in HAProxy).
HEADER_NAME = re.compile(r"\A[a-zA-Z0-9!#$%&'*+\-.^_`|~]+\Z")
COOKIE_VALUE = re.compile(r"\A[a-zA-Z0-9!#$%&'()*+-./:<=>?@[\]^_`{|}~]+\Z")
HEADER_VALUE = re.compile(r"\A[a-zA-Z0-9!\"#$%&'()*+,-./:;<=>?@[\]^_`{|}~\\]+\Z")
QUOTED_HEADER_VALUE = re.compile(r"\A\"[a-zA-Z0-9 \t!\"#$%&'()*+,-./:;<=>?@[\]^_`{|}~\\]*\"\Z")


def _rule_error(msg: str) -> V.Invalid:
    return V.Invalid(f"Error parsing L7Rule: Invalid L7 Rule: {msg}")


def _header_value(value: str) -> bool:
    """Octavia's header_value_string, less the tab its quoted form lets in (HAProxy reads
    a tab as the end of a word)."""
    return bool(HEADER_VALUE.match(value) or QUOTED_HEADER_VALUE.match(value)) \
        and not V.has_control(value)


def _invalid_string(what: str) -> V.Invalid:
    return V.Invalid(f"Error parsing L7Rule: Invalid characters in {what}")


def check_rule(rule: dict) -> None:
    """Octavia's validate.l7rule_data, for the rule types the amphora driver serves: a
    header or cookie name a token, a value of the characters a header (or a cookie) value
    may have, a regex one Python compiles; and (beyond Octavia, whose regexes and DN
    values may hold them) no control character in any value."""
    rtype, compare, value = rule["type"], rule["compare_type"], rule.get("value")
    if not value:
        raise _rule_error("L7 rule type requires a value")
    if rtype in ("HEADER", "COOKIE"):
        if not rule.get("key"):
            raise _rule_error("L7 rule type requires a key")
        if not HEADER_NAME.match(rule["key"]):
            raise _invalid_string("key")
    if rtype == "FILE_TYPE" and compare not in ("REGEX", "EQUAL_TO"):
        raise _rule_error("invalid comparison type for rule type")
    if compare == "REGEX":
        try:
            re.compile(value)
        except re.error as error:
            raise V.Invalid(f"Error parsing L7Rule: Unable to parse regular expression: "
                            f"{error}") from None
        if V.has_control(value):
            raise _invalid_string("regular expression")
    elif rtype == "HEADER":
        if not _header_value(value):
            raise _invalid_string("header value")
    elif rtype == "COOKIE":
        if not COOKIE_VALUE.match(value):
            raise _invalid_string("cookie value")
    elif rtype in ("PATH", "HOST_NAME", "FILE_TYPE"):
        if not _header_value(value):
            raise _invalid_string("comparison value")
    elif V.has_control(value):  # the client certificate's rules
        raise _invalid_string("comparison value")
    if rtype.startswith("SSL_"):
        check_ssl_rule(rtype, compare, rule.get("key"), value)


DN_FIELD = re.compile(r"([a-zA-Z][A-Za-z0-9-]*)")  # octavia-lib's, matched whole


def check_ssl_rule(rtype: str, compare: str, key: str | None, value: str) -> None:
    """Octavia's validate_l7rule_ssl_types: the client certificate's rules."""
    msg = None
    if rtype in ("SSL_CONN_HAS_CERT", "SSL_VERIFY_RESULT") and key:
        msg = f'L7rule type {rtype} does not use the "key" field.'
    elif rtype == "SSL_CONN_HAS_CERT" and value.lower() != "true":
        msg = f"L7rule value {value} is not a boolean True string."
    elif rtype == "SSL_VERIFY_RESULT" and not value.isdigit():
        msg = f"L7rule type {rtype} needs a int value, which is >= 0"
    elif rtype in ("SSL_CONN_HAS_CERT", "SSL_VERIFY_RESULT") and compare != "EQUAL_TO":
        msg = f"L7rule type {rtype} only supports the EQUAL_TO compare type."
    elif rtype == "SSL_DN_FIELD" and not key:
        msg = f"L7rule type {rtype} needs to specify a key and a value."
    elif rtype == "SSL_DN_FIELD" and not DN_FIELD.fullmatch(key):
        msg = "Invalid L7rule distinguished name field."
    if msg:
        raise _rule_error(msg)


def _policy_of(s, ctx, policy_id: str, rule_id: str | None, action: str):
    policy = tree.get(s, M.L7Policy, policy_id, ctx, ("l7rule", action))
    if rule_id is None:
        return policy, None
    rule = tree.get(s, M.L7Rule, rule_id)
    if rule.l7policy_id != policy_id:
        raise tree.not_found(M.L7Rule, rule_id)
    return policy, rule


def create_l7rule(ctx, policy_id: str, body) -> dict:
    data = V.parse(body, "rule", RULE_SCHEMA, create=True)
    api.project_of(ctx, data)
    check_rule(data)
    with db.transaction() as s:
        policy, _ = _policy_of(s, ctx, policy_id, None, "post")
        if len(tree.rows(s, M.L7Rule, policy.load_balancer_id,
                         l7policy_id=policy.id)) >= C.MAX_L7RULES_PER_POLICY:
            raise exceptions.Conflict(f"Too many rules on L7 policy {policy.id}")
        quotas.check(s, policy.project_id, "l7rule")
        tree.take(s, policy.load_balancer_id)
        tree.mark(policy, s.get(M.Listener, policy.listener_id))
        rule = new_rule(policy, data)
        s.add(rule)
        s.flush()
        out = {"rule": show.view(s, rule)}
    driver.notify()
    return out


def update_l7rule(ctx, policy_id: str, rule_id: str, body) -> dict:
    data = V.parse(body, "rule", RULE_FIELDS, create=False)
    with db.transaction() as s:
        policy, rule = _policy_of(s, ctx, policy_id, rule_id, "put")
        merged = {"type": rule.type, "compare_type": rule.compare_type, "key": rule.key,
                  "value": rule.value}
        merged.update(data)
        check_rule(merged)
        tree.take(s, policy.load_balancer_id)
        tree.mark(rule, policy, s.get(M.Listener, policy.listener_id))
        api._apply(rule, data)
        out = {"rule": show.view(s, rule)}
    driver.notify()
    return out


def delete_l7rule(ctx, policy_id: str, rule_id: str) -> None:
    with db.transaction() as s:
        policy, rule = _policy_of(s, ctx, policy_id, rule_id, "delete")
        tree.take(s, policy.load_balancer_id)
        tree.mark(policy, s.get(M.Listener, policy.listener_id))
        rule.provisioning_status = C.PENDING_DELETE
    driver.notify()
