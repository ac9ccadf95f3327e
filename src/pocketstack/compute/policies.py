"""Compute policy defaults, with nova's rule names (os_compute_api:...) so a policy.yaml
written for nova reads the same here."""
from oslo_policy import policy

ADMIN = "rule:admin_required"
MEMBER = "rule:admin_or_member"
READER = "rule:admin_or_reader"
ANY = "@"

_RULES = {
    # servers
    "os_compute_api:servers:index": READER,
    "os_compute_api:servers:detail": READER,
    "os_compute_api:servers:show": READER,
    "os_compute_api:servers:create": MEMBER,
    "os_compute_api:servers:create:forced_host": ADMIN,
    "os_compute_api:servers:update": MEMBER,
    "os_compute_api:servers:delete": MEMBER,
    "os_compute_api:servers:index:get_all_tenants": ADMIN,
    "os_compute_api:servers:detail:get_all_tenants": ADMIN,
    "os_compute_api:servers:allow_all_filters": ADMIN,
    "os_compute_api:servers:show:host_status": ADMIN,
    "os_compute_api:servers:show:flavor-extra-specs": READER,
    "os_compute_api:os-extended-server-attributes": ADMIN,
    "os_compute_api:servers:start": MEMBER,
    "os_compute_api:servers:stop": MEMBER,
    "os_compute_api:servers:reboot": MEMBER,
    "os_compute_api:servers:rebuild": MEMBER,
    "os_compute_api:servers:resize": MEMBER,
    "os_compute_api:servers:confirm_resize": MEMBER,
    "os_compute_api:servers:revert_resize": MEMBER,
    "os_compute_api:servers:create_image": MEMBER,
    "os_compute_api:os-pause-server:pause": MEMBER,
    "os_compute_api:os-pause-server:unpause": MEMBER,
    "os_compute_api:os-suspend-server:suspend": MEMBER,
    "os_compute_api:os-suspend-server:resume": MEMBER,
    "os_compute_api:os-lock-server:lock": MEMBER,
    "os_compute_api:os-lock-server:unlock": MEMBER,
    "os_compute_api:os-lock-server:unlock:unlock_override": ADMIN,
    "os_compute_api:os-console-output": MEMBER,
    "os_compute_api:os-admin-actions:reset_state": ADMIN,
    "os_compute_api:server-metadata:index": READER,
    "os_compute_api:server-metadata:show": READER,
    "os_compute_api:server-metadata:create": MEMBER,
    "os_compute_api:server-metadata:update": MEMBER,
    "os_compute_api:server-metadata:update_all": MEMBER,
    "os_compute_api:server-metadata:delete": MEMBER,
    "os_compute_api:os-server-tags:index": READER,
    "os_compute_api:os-server-tags:show": READER,
    "os_compute_api:os-server-tags:update": MEMBER,
    "os_compute_api:os-server-tags:update_all": MEMBER,
    "os_compute_api:os-server-tags:delete": MEMBER,
    "os_compute_api:os-server-tags:delete_all": MEMBER,
    "os_compute_api:os-attach-interfaces:list": READER,
    "os_compute_api:os-attach-interfaces:show": READER,
    "os_compute_api:os-attach-interfaces:create": MEMBER,
    "os_compute_api:os-attach-interfaces:delete": MEMBER,
    "os_compute_api:ips:index": READER,
    "os_compute_api:ips:show": READER,
    "os_compute_api:os-instance-actions:list": READER,
    "os_compute_api:os-instance-actions:show": READER,
    "os_compute_api:os-instance-actions:events": ADMIN,
    "os_compute_api:os-instance-actions:events:details": ADMIN,
    "os_compute_api:os-server-external-events:create": "rule:admin_required or role:service",
    # flavors
    "os_compute_api:os-flavor-manage:create": ADMIN,
    "os_compute_api:os-flavor-manage:update": ADMIN,
    "os_compute_api:os-flavor-manage:delete": ADMIN,
    "os_compute_api:os-flavor-extra-specs:index": ANY,
    "os_compute_api:os-flavor-extra-specs:show": ANY,
    "os_compute_api:os-flavor-extra-specs:create": ADMIN,
    "os_compute_api:os-flavor-extra-specs:update": ADMIN,
    "os_compute_api:os-flavor-extra-specs:delete": ADMIN,
    "os_compute_api:os-flavor-access": ADMIN,
    "os_compute_api:os-flavor-access:add_tenant_access": ADMIN,
    "os_compute_api:os-flavor-access:remove_tenant_access": ADMIN,
    # keypairs: the owner, or an admin acting for another user (2.10)
    "os_compute_api:os-keypairs:index": "rule:admin_required or user_id:%(user_id)s",
    "os_compute_api:os-keypairs:show": "rule:admin_required or user_id:%(user_id)s",
    "os_compute_api:os-keypairs:create": "rule:admin_required or user_id:%(user_id)s",
    "os_compute_api:os-keypairs:delete": "rule:admin_required or user_id:%(user_id)s",
    # the rest of the API
    "os_compute_api:os-availability-zone:list": ANY,
    "os_compute_api:os-availability-zone:detail": ADMIN,
    "os_compute_api:os-services:list": ADMIN,
    "os_compute_api:os-services:update": ADMIN,
    "os_compute_api:os-services:delete": ADMIN,
    "os_compute_api:os-hypervisors:list": ADMIN,
    "os_compute_api:os-hypervisors:list-detail": ADMIN,
    "os_compute_api:os-hypervisors:show": ADMIN,
    "os_compute_api:os-hypervisors:statistics": ADMIN,
    "os_compute_api:os-hypervisors:servers": ADMIN,
    "os_compute_api:limits": ANY,
    "os_compute_api:os-quota-sets:show": READER,
    "os_compute_api:os-quota-sets:defaults": ANY,
    "os_compute_api:os-quota-sets:detail": READER,
    "os_compute_api:os-quota-sets:update": ADMIN,
    "os_compute_api:os-quota-sets:delete": ADMIN,
    "os_compute_api:os-server-groups:index": READER,
    "os_compute_api:os-server-groups:index:all_projects": ADMIN,
    "os_compute_api:os-server-groups:show": READER,
    "os_compute_api:os-server-groups:create": "rule:admin_or_member",
    "os_compute_api:os-server-groups:delete": MEMBER,
    "os_compute_api:os-aggregates:index": ADMIN,
    "os_compute_api:os-aggregates:create": ADMIN,
    "os_compute_api:os-aggregates:show": ADMIN,
    "os_compute_api:os-aggregates:update": ADMIN,
    "os_compute_api:os-aggregates:delete": ADMIN,
    "os_compute_api:os-aggregates:add_host": ADMIN,
    "os_compute_api:os-aggregates:remove_host": ADMIN,
    "os_compute_api:os-aggregates:set_metadata": ADMIN,
}

# issue 10: the routes and actions real clients were missing
_COMPAT_RULES = {
    "os_compute_api:os-security-groups:list": READER,
    "os_compute_api:os-security-groups:add": MEMBER,
    "os_compute_api:os-security-groups:remove": MEMBER,
}


def list_rules():
    return [policy.RuleDefault(name, check, f"nova's {name}")
            for name, check in {**_RULES, **_COMPAT_RULES}.items()]
