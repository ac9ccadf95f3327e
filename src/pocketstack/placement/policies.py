"""Placement's default policies (placement/policies/ upstream): admin or service for
everything, project readers too for GET /usages, the service role alone for reshaper."""
from oslo_policy import policy

ADMIN_OR_SERVICE = "rule:placement_admin_or_service_api"
SERVICE = "rule:placement_service_api"
ADMIN_OR_READER_OR_SERVICE = "rule:placement_admin_or_project_reader_or_service_api"

_NAMES = {
    "resource_providers": ("list", "create", "show", "update", "delete"),
    "resource_providers:inventories": ("list", "create", "show", "update", "delete"),
    "resource_providers:aggregates": ("list", "update"),
    "resource_providers:traits": ("list", "update", "delete"),
    "resource_classes": ("list", "create", "show", "update", "delete"),
    "traits": ("list", "show", "update", "delete"),
    "allocations": ("list", "manage", "update", "delete"),
}


def list_rules():
    rules = [
        policy.RuleDefault("placement_admin_api", "role:admin",
                           "Default rule for most placement APIs."),
        policy.RuleDefault("placement_service_api", "role:service",
                           "Default rule for service-to-service placement APIs."),
        policy.RuleDefault("placement_admin_or_service_api", "role:admin or role:service",
                           "Default rule for most placement APIs."),
        policy.RuleDefault("placement_project_reader_api",
                           "role:reader and project_id:%(project_id)s",
                           "Default rule for project level reader APIs."),
        policy.RuleDefault("placement_admin_or_project_reader_or_service_api",
                           "role:admin or rule:placement_project_reader_api or role:service",
                           "Default rule for project level reader APIs."),
        policy.RuleDefault("placement:resource_providers:allocations:list", ADMIN_OR_SERVICE,
                           "List a provider's allocations."),
        policy.RuleDefault("placement:resource_providers:usages", ADMIN_OR_SERVICE,
                           "Show a provider's usages."),
        policy.RuleDefault("placement:usages", ADMIN_OR_READER_OR_SERVICE,
                           "Show a project's (and user's) total usages."),
        policy.RuleDefault("placement:allocation_candidates:list", ADMIN_OR_SERVICE,
                           "List allocation candidates."),
        policy.RuleDefault("placement:reshaper:reshape", SERVICE,
                           "Move inventories and allocations between providers at once."),
    ]
    for noun, actions in _NAMES.items():
        for action in actions:
            rules.append(policy.RuleDefault(f"placement:{noun}:{action}", ADMIN_OR_SERVICE,
                                            f"{action} {noun.replace(':', ' ')}"))
    return rules
