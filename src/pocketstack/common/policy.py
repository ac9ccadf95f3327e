"""oslo.policy with in-code defaults; ``<data dir>/policy.yaml`` overrides any rule.

Each service lists its rules in ``pocketstack/<service>/policies.py`` as ``list_rules()``.
The base rules below follow OpenStack's default roles: admin may do everything, members
manage what belongs to their project, readers read it.
"""
from __future__ import annotations

import os

from oslo_policy import policy

from pocketstack.common import config, exceptions

ADMIN = "role:admin"
PROJECT_MEMBER = "role:member and project_id:%(project_id)s"
PROJECT_READER = "role:reader and project_id:%(project_id)s"

BASE_RULES = [
    policy.RuleDefault("admin_required", ADMIN, "An administrator."),
    policy.RuleDefault("project_member", PROJECT_MEMBER, "A member of the target's project."),
    policy.RuleDefault("project_reader", PROJECT_READER, "A reader of the target's project."),
    policy.RuleDefault("admin_or_member", "rule:admin_required or rule:project_member",
                       "An administrator or a member of the target's project."),
    policy.RuleDefault("admin_or_reader", "rule:admin_required or rule:project_reader",
                       "An administrator or a reader of the target's project."),
    policy.RuleDefault("owner", "user_id:%(user_id)s", "The user the target belongs to."),
    policy.RuleDefault("admin_or_owner", "rule:admin_required or rule:owner",
                       "An administrator or the user the target belongs to."),
]

_enforcer: policy.Enforcer | None = None


def list_rules():
    rules = list(BASE_RULES)
    for name in config.SERVICE_PACKAGES + ("control",):
        mod = config.optional_module(name, "policies")
        if mod is None:
            continue
        rules.extend(mod.list_rules())
    return rules


def init(data_dir: str | None = None) -> policy.Enforcer:
    global _enforcer
    conf = config.CONF
    policy_file = os.path.join(data_dir, "policy.yaml") if data_dir else "policy.yaml"
    # use_conf=True: oslo.policy only merges the registered defaults (and reads policy.yaml,
    # if present) on that path; with use_conf=False it loads no rule at all and denies all.
    enforcer = policy.Enforcer(conf, policy_file=policy_file, use_conf=True)
    enforcer.register_defaults(list_rules())
    enforcer.load_rules()
    _enforcer = enforcer
    return enforcer


def enforcer() -> policy.Enforcer:
    return _enforcer or init()


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
