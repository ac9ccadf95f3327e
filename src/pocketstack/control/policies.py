"""pocketstack's own admin API: traces (admin or the server's project) and fault rules
(admin only)."""
from oslo_policy import policy


def list_rules():
    return [
        policy.RuleDefault("pocketstack:faults", "rule:admin_required",
                           "Manage fault-injection rules of the simulated cloud."),
        policy.RuleDefault("pocketstack:traces", "rule:admin_or_reader",
                           "Read the pipeline trace of a request or server."),
    ]
