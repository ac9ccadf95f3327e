"""Octavia's policy names (os_load-balancer_api:<object>:<action>) with OpenStack's
default roles: readers read their project's objects, members change them, admins
everything; the provider catalog, flavors, quotas and amphorae are the admin's."""
from oslo_policy import policy

PREFIX = "os_load-balancer_api"
OWNED = ("loadbalancer", "listener", "pool", "member", "healthmonitor", "l7policy", "l7rule")


def list_rules():
    rules = []
    for obj in OWNED:
        for action, check in (("get_all", "rule:admin_or_reader"),
                              ("get_one", "rule:admin_or_reader"),
                              ("post", "rule:admin_or_member"),
                              ("put", "rule:admin_or_member"),
                              ("delete", "rule:admin_or_member")):
            rules.append(policy.RuleDefault(f"{PREFIX}:{obj}:{action}", check,
                                            f"{action} of a {obj}"))
    rules += [
        policy.RuleDefault(f"{PREFIX}:loadbalancer:get_stats", "rule:admin_or_reader",
                           "A load balancer's statistics."),
        policy.RuleDefault(f"{PREFIX}:loadbalancer:get_status", "rule:admin_or_reader",
                           "A load balancer's status tree."),
        policy.RuleDefault(f"{PREFIX}:loadbalancer:put_failover", "rule:admin_required",
                           "Fail a load balancer over."),
        policy.RuleDefault(f"{PREFIX}:listener:get_stats", "rule:admin_or_reader",
                           "A listener's statistics."),
        policy.RuleDefault(f"{PREFIX}:quota:get_all", "rule:admin_required", "List quotas."),
        policy.RuleDefault(f"{PREFIX}:quota:get_one", "rule:admin_or_reader",
                           "A project's quotas."),
        policy.RuleDefault(f"{PREFIX}:quota:get_defaults", "rule:admin_or_reader",
                           "The default quotas."),
        policy.RuleDefault(f"{PREFIX}:quota:put", "rule:admin_required", "Set quotas."),
        policy.RuleDefault(f"{PREFIX}:quota:delete", "rule:admin_required",
                           "Reset quotas to the defaults."),
        policy.RuleDefault(f"{PREFIX}:provider:get_all", "rule:admin_or_reader",
                           "List providers."),
        policy.RuleDefault(f"{PREFIX}:provider-flavor:get_all", "rule:admin_required",
                           "A provider's flavor capabilities."),
        policy.RuleDefault(f"{PREFIX}:provider-availability-zone:get_all",
                           "rule:admin_required", "A provider's availability zone capabilities."),
    ]
    for obj in ("flavor", "availability-zone"):
        rules += [policy.RuleDefault(f"{PREFIX}:{obj}:get_all", "rule:admin_or_reader", ""),
                  policy.RuleDefault(f"{PREFIX}:{obj}:get_one", "rule:admin_or_reader", "")]
        for action in ("post", "put", "delete"):
            rules.append(policy.RuleDefault(f"{PREFIX}:{obj}:{action}",
                                            "rule:admin_required", ""))
    for obj in ("flavor-profile", "availability-zone-profile"):
        for action in ("get_all", "get_one", "post", "put", "delete"):
            rules.append(policy.RuleDefault(f"{PREFIX}:{obj}:{action}",
                                            "rule:admin_required", ""))
    for action in ("get_all", "get_one", "delete", "put_config", "put_failover", "get_stats"):
        rules.append(policy.RuleDefault(f"{PREFIX}:amphora:{action}", "rule:admin_required",
                                        f"{action} of an amphora"))
    return rules
