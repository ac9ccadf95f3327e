"""Identity policy defaults (Keystone's names; admin, or the user acting on itself)."""
from oslo_policy import policy

ADMIN = "rule:admin_required"


def list_rules():
    return [
        policy.RuleDefault("identity:validate_token", f"{ADMIN} or rule:owner or role:service",
                           "Validate another user's token."),
        policy.RuleDefault("identity:revoke_token", f"{ADMIN} or rule:owner",
                           "Revoke another user's token."),
    ]
