"""The check strings and the rule constructor that the identity policy modules share
(policies.py: the core API; policies_ext.py: the extensions)."""
from oslo_policy import policy

ADMIN = "rule:admin_required"
SYSTEM_READER = "(role:reader and system_scope:all)"
MANAGED_ROLE = "rule:domain_managed_target_role"


def _reader_in(domain_attr: str) -> str:
    return f"(role:reader and domain_id:%({domain_attr})s)"


def _manager_in(*domain_attrs: str) -> str:
    checks = " and ".join(f"domain_id:%({a})s" for a in domain_attrs)
    return f"(role:manager and {checks})"


def _rule(name: str, check: str, description: str, operations: list[tuple[str, str]]):
    return policy.DocumentedRuleDefault(
        name=f"identity:{name}", check_str=check, description=description,
        operations=[{"method": m, "path": p} for m, p in operations])


ADMIN_OR_SYSTEM_READER = f"{ADMIN} or {SYSTEM_READER}"
OWNER = "user_id:%(target.user.id)s"
