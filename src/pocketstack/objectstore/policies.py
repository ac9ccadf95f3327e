"""Object storage follows swift's keystoneauth rather than per-action oslo.policy rules:
an account ``AUTH_<project id>`` belongs to that project. These rules name the roles
(defaults from [objectstore] operator_roles, reseller_admin_role, reader_roles) so an
operator can widen or narrow them in the policy file like any other service's."""
from oslo_policy import policy


def list_rules():
    return [
        policy.RuleDefault("objectstore:operator", "role:admin or role:member",
                           "Owns its project's account: every operation on it."),
        policy.RuleDefault("objectstore:reader", "role:reader",
                           "Reads its project's account: GET and HEAD."),
        policy.RuleDefault("objectstore:reseller_admin", "role:ResellerAdmin",
                           "Every operation on every account."),
    ]
