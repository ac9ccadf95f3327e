"""oslo.policy with in-code defaults; ``<data dir>/policy.yaml`` overrides any rule.

Each service lists its rules in ``pocketstack/<service>/policies.py`` as ``list_rules()``.
The base rules below follow OpenStack's default roles: admin may do everything, members
manage what belongs to their project, readers read it.

The enforcer is built on first use (``configure`` only records where policy.yaml is):
oslo.policy and every service's rules cost a quarter of a second to load, which the cloud
pays after it has started listening rather than before.
"""
from __future__ import annotations

import functools
import logging
import os
import threading
import time

from pocketstack.common import cache, config, deferred, exceptions, runtime

ADMIN = "role:admin"
PROJECT_MEMBER = "role:member and project_id:%(project_id)s"
PROJECT_READER = "role:reader and project_id:%(project_id)s"

_BASE = [
    ("admin_required", ADMIN, "An administrator."),
    ("project_member", PROJECT_MEMBER, "A member of the target's project."),
    ("project_reader", PROJECT_READER, "A reader of the target's project."),
    ("admin_or_member", "rule:admin_required or rule:project_member",
     "An administrator or a member of the target's project."),
    ("admin_or_reader", "rule:admin_required or rule:project_reader",
     "An administrator or a reader of the target's project."),
    ("owner", "user_id:%(user_id)s", "The user the target belongs to."),
    ("admin_or_owner", "rule:admin_required or rule:owner",
     "An administrator or the user the target belongs to."),
]

RECHECK_SECONDS = 1.0            # how often to look for an edited policy.yaml


class _PolicyState:
    """One cloud's enforcer (common/runtime.py)."""

    def __init__(self):
        self.enforcer = None
        self.policy_file = "policy.yaml"
        self.stamp: tuple | None = None  # policy.yaml's (mtime, size) the enforcer was built from
        self.checked_at = -1e9
        self.lock = threading.Lock()


def _state() -> _PolicyState:
    return runtime.current().slot(__name__, _PolicyState)

LOG = logging.getLogger(__name__)


_setup_lock = threading.Lock()


def _oslo_policy():
    """oslo.policy's ``policy`` module, set up once per process for a faster start:

    * oslo_utils.strutils imported when first used (``common/deferred.py``), and
      xmlrpc.client (with the XML parser): oslo.serialization's jsonutils imports it to
      recognise xmlrpc's DateTime, which no policy check ever sees (~3 ms);
    * its ``http:``/``https:`` checks without stevedore's scan of every installed
      package's entry points (which also imported requests: a tenth of a second);
    * each check string parsed once: the ~400 rules have ~50 distinct strings, and
      oslo.policy parses a rule's string whenever a rule is made (a twentieth of a
      second). A parse depends on the string alone and check objects hold no state
      (oslo.policy shares them between rules itself)."""
    deferred.defer("xmlrpc.client")
    from oslo_policy import _checks, _parser, policy

    with _setup_lock:
        if _checks.extension_checks is None:
            _checks.extension_checks = _ExternalChecks()
        if not hasattr(_parser.parse_rule, "cache_info"):
            _parser.parse_rule = functools.lru_cache(maxsize=1024)(_parser.parse_rule)
    return policy


class _ExternalChecks(dict):
    """oslo.policy's own ``http:``/``https:`` checks, imported if a rule uses one (other
    packages' check plugins are not looked up: OpenStack's default rules use none)."""

    _CLASSES = {"http": "HttpCheck", "https": "HttpsCheck"}

    def __contains__(self, kind) -> bool:
        return kind in self._CLASSES

    def __getitem__(self, kind):
        from oslo_policy import _external

        return getattr(_external, self._CLASSES[kind])


def base_rules() -> list:
    policy = _oslo_policy()
    return [policy.RuleDefault(name, check, description) for name, check, description in _BASE]


def __getattr__(name):  # BASE_RULES, built on demand like everything from oslo.policy
    if name == "BASE_RULES":
        return base_rules()
    raise AttributeError(name)


def list_rules():
    rules = base_rules()
    for name in config.SERVICE_PACKAGES + ("control",):
        mod = config.optional_module(name, "policies")
        if mod is None:
            continue
        rules.extend(mod.list_rules())
    return rules


def configure(data_dir: str | None = None) -> None:
    """Use ``<data_dir>/policy.yaml``; the enforcer is (re)built on its next use."""
    st = _state()
    with st.lock:
        st.policy_file = os.path.join(data_dir, "policy.yaml") if data_dir else "policy.yaml"
        st.enforcer, st.checked_at = None, -1e9


def _file_stamp() -> tuple | None:
    try:
        stat = os.stat(_state().policy_file)
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


def _freeze(value):
    """A hashable copy of a policy target or credentials (TypeError if it cannot be)."""
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    hash(value)
    return value


def _build():
    policy = _oslo_policy()

    class Enforcer(policy.Enforcer):
        """Remembers decisions: a decision depends only on the rule, the target and the
        credentials, and oslo.policy takes a few hundred microseconds to reach one (it
        inspects every check's signature on every call). A new enforcer, with an empty
        memo, is built whenever policy.yaml changes."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._decisions = cache.TTLCache(ttl=3600, maxsize=8192)

        def register_defaults(self, defaults):
            """Without oslo.policy's deep copy of each rule (~10 ms at start-up): it
            guards rule objects shared between enforcers, and list_rules() makes new
            ones for each enforcer (the check objects inside hold no state)."""
            for default in defaults:
                if default.name in self.registered_rules:
                    raise policy.DuplicatePolicyError(default.name)
                self.registered_rules[default.name] = default

        def enforce(self, rule, target, creds, do_raise=False, exc=None, *args, **kwargs):
            if do_raise or args or kwargs or not isinstance(rule, str):
                return super().enforce(rule, target, creds, do_raise, exc, *args, **kwargs)
            try:
                key = (rule, _freeze(target), _freeze(creds))
            except TypeError:  # something unhashable inside: decide without the memo
                return super().enforce(rule, target, creds)
            decision = self._decisions.get(key)
            if decision is None:
                decision = bool(super().enforce(rule, target, creds))
                self._decisions.put(key, decision)
            return decision

    # use_conf=True: oslo.policy only merges the registered defaults (and reads policy.yaml,
    # if present) on that path; with use_conf=False it loads no rule at all and denies all.
    enforcer = Enforcer(config.conf(), policy_file=_state().policy_file, use_conf=True)
    enforcer.register_defaults(list_rules())
    enforcer.load_rules()
    # The rules are loaded. Left on, oslo.policy searches the config dirs for policy files
    # on every check (about a millisecond each); enforcer() watches policy.yaml instead.
    enforcer.use_conf = False
    return enforcer


def init(data_dir: str | None = None):
    """Build the enforcer now (reading ``<data_dir>/policy.yaml``) and return it."""
    configure(data_dir)
    return enforcer()


def enforcer():
    """The enforcer, rebuilt when policy.yaml changes (looked at once a second). A broken
    edit is logged and the rules in force stay; a broken file at start-up is an error."""
    st = _state()
    now = time.monotonic()
    if st.enforcer is not None and now - st.checked_at < RECHECK_SECONDS:
        return st.enforcer
    with st.lock:
        if st.enforcer is None or now - st.checked_at >= RECHECK_SECONDS:
            stamp = _file_stamp()
            if st.enforcer is None or stamp != st.stamp:
                try:
                    st.enforcer = _build()
                except Exception:
                    if st.enforcer is None:
                        raise
                    LOG.exception("%s is invalid; the policy rules in force are kept",
                                  st.policy_file)
                st.stamp = stamp
            st.checked_at = now
    return st.enforcer


def authorize(context, action: str, target: dict | None = None) -> None:
    """Raise PolicyNotAuthorized (403) unless ``context`` may do ``action`` on ``target``."""
    if context.is_service:
        return
    target = target if target is not None else {"project_id": context.project_id,
                                                 "user_id": context.user_id}
    if not enforcer().enforce(action, target, context.policy_creds(), do_raise=False):
        raise exceptions.PolicyNotAuthorized(action)


def check(context, action: str, target: dict | None = None) -> bool:
    try:
        authorize(context, action, target)
    except exceptions.Forbidden:
        return False
    return True
