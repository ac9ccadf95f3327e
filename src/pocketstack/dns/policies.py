"""Designate's default policies (designate/common/policies/ upstream), by their upstream
names (those of floating IPs prefixed "designate:", as neutron has the bare ones):
members of the owning project write, its readers read, admins everything; TLDs,
blacklists, quotas of other projects and pools are admin only."""
from oslo_policy import policy

ADMIN = "role:admin"
ADMIN_OR_MEMBER = "role:admin or (role:member and project_id:%(project_id)s)"
ADMIN_OR_READER = "role:admin or (role:reader and project_id:%(project_id)s)"
ANY_READER = "role:admin or role:reader"

_RULES = {
    ADMIN_OR_MEMBER: (
        "create_zone", "update_zone", "delete_zone", "create_recordset", "update_recordset",
        "delete_recordset", "create_zone_transfer_request",
        "update_zone_transfer_request", "delete_zone_transfer_request",
        "create_zone_transfer_accept", "create_zone_export", "create_zone_import",
        "delete_zone_import", "delete_zone_export", "share_zone", "unshare_zone",
        "designate:update_floatingip", "xfr_zone"),
    ADMIN_OR_READER: (
        "get_zone", "get_zones", "get_zone_ns_records", "get_recordset", "get_recordsets",
        "get_zone_export", "get_zone_exports", "get_zone_import", "get_zone_imports",
        "get_zone_share", "find_zone_shares", "get_quotas", "designate:find_floatingips",
        "designate:get_floatingip", "get_zone_transfer_accept", "find_zone_transfer_accepts"),
    ANY_READER: ("get_tld", "find_tlds", "get_zone_transfer_request",
                 "find_zone_transfer_requests", "find_pools", "get_pool"),
    ADMIN: ("create_tld", "update_tld", "delete_tld", "create_blacklist", "find_blacklists",
            "get_blacklist", "update_blacklist", "delete_blacklist", "set_quota",
            "reset_quotas", "all_tenants", "abandon_zone"),
}


def list_rules():
    return [policy.RuleDefault(name, check, f"designate: {name.replace('_', ' ')}")
            for check, names in _RULES.items() for name in names]
