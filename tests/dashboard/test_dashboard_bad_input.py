"""Garbage in every field of the new dashboard forms (network, storage and admin pages):
always a 4xx page with the API's (or the form's) message, or a redirect when the odd value
is valid, never a 500 or a traceback."""
from __future__ import annotations

import pytest

from helpers.dashboard import csrf_token, login

GARBAGE = ["²", "9" * 40, "-0", " ", "\x00", "a" * 300, "<script>x</script>", "1e3", "../..",
           "ünïcödé"]


@pytest.fixture(scope="module")
def people(cloud):
    """A member (with one security group) and the admin, logged in; a throwaway project
    whose quotas the garbage may reach."""
    user = cloud.make_user()
    member = login(cloud, user["name"], user["password"])
    admin = login(cloud, "admin", cloud.admin_password, "admin")
    group = cloud.user_sdk(user).network.create_security_group(name="garbage-target")
    yield user, member, admin, group.id
    member.close()
    admin.close()


def _check(client, path, csrf, form):
    r = client.post(path, data={"csrf_token": csrf, **form})
    assert r.status_code < 500 and "Traceback" not in r.text, (path, form, r.text[-500:])
    assert r.status_code in (200, 303) or 'role="alert"' in r.text, (path, form)
    return r


@pytest.mark.parametrize("value", GARBAGE)
def test_garbage_in_the_network_storage_and_admin_forms_is_never_a_500(cloud, people, value):
    user, member, admin, group = people
    csrf = csrf_token(member.get("/dashboard/servers").text)
    for path, form in [
        ("/dashboard/floating-ips", {"action": "allocate", "network_id": value}),
        ("/dashboard/floating-ips", {"action": "associate", "floatingip_id": value,
                                     "port_id": value}),
        ("/dashboard/floating-ips", {"action": "release", "floatingip_id": value}),
        ("/dashboard/routers", {"action": "create", "name": "r", "gateway_network_id": value}),
        ("/dashboard/routers", {"action": "add_interface", "router_id": value,
                                "subnet_id": value}),
        ("/dashboard/routers", {"action": "add_route", "router_id": value,
                                "destination": value, "nexthop": value}),
        ("/dashboard/routers", {"action": "set_gateway", "router_id": value,
                                "gateway_network_id": value}),
        ("/dashboard/security-groups", {"action": "add_rule", "group_id": group,
                                        "direction": value, "ethertype": value,
                                        "protocol": value, "port_range_min": value,
                                        "port_range_max": value, "remote_ip_prefix": value}),
        ("/dashboard/security-groups", {"action": "delete_rule", "rule_id": value}),
        ("/dashboard/security-groups", {"action": "delete", "group_id": value}),
        ("/dashboard/volumes/snapshots", {"action": "create", "volume_id": value,
                                          "name": value}),
        ("/dashboard/volumes/backups", {"action": "create", "volume_id": value,
                                        "name": value, "incremental": "yes"}),
        ("/dashboard/volumes/backups", {"action": "delete", "item_id": value}),
    ]:
        _check(member, path, csrf, form)
    csrf = csrf_token(admin.get("/dashboard/servers").text)
    roles = {"project_id": user["project_id"], "user_id": user["id"], "role_id": value}
    for path, form in [
        ("/dashboard/admin/users", {"action": "assign", **roles}),
        ("/dashboard/admin/users", {"action": "revoke", **roles}),
        ("/dashboard/admin/users", {"action": "delete", "user_id": value}),
        ("/dashboard/admin/projects", {"action": "delete", "project_id": value}),
        ("/dashboard/admin/quotas", {"project_id": value, "compute.instances": "3"}),
        ("/dashboard/admin/quotas", {"project_id": user["project_id"],
                                     "compute.cores": value, "volume.volumes": value,
                                     "network.port": value}),
    ]:
        _check(admin, path, csrf, form)
    # Odd but valid names make things: the same forms then delete them again.
    sdk = cloud.sdk()
    r = _check(admin, "/dashboard/admin/projects", csrf, {"action": "create", "name": value})
    if r.status_code == 303:
        project = next(p for p in sdk.identity.projects() if p.name == value.strip())
        _check(admin, "/dashboard/admin/projects", csrf,
               {"action": "delete", "project_id": project.id})
    r = _check(admin, "/dashboard/admin/users", csrf,
               {"action": "create", "name": value, "password": value})
    if r.status_code == 303:
        made = next(u for u in sdk.identity.users() if u.name == value.strip())
        _check(admin, "/dashboard/admin/users", csrf, {"action": "delete", "user_id": made.id})
