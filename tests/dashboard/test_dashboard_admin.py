"""The dashboard's keystone and quota admin pages over real HTTP: projects, users, role
assignments and quotas, checked through openstacksdk; bad input shows the API's message
and leaves nothing made; a member gets 403 pages and no admin menu."""
from __future__ import annotations

import uuid

import pytest

from helpers.dashboard import alert_text, csrf_token, login

ADMIN_PAGES = ("/dashboard/admin/projects", "/dashboard/admin/users",
               "/dashboard/admin/quotas", "/dashboard/admin/resource-providers",
               "/dashboard/admin/volume-backends")


@pytest.fixture(scope="module")
def admin_client(cloud):
    client = login(cloud, "admin", cloud.admin_password, "admin")
    yield client
    client.close()


def _post(client, path, **data):
    page = client.get(path)
    assert page.status_code == 200, page.text
    return client.post(path, data={"csrf_token": csrf_token(page.text), **data})


def test_projects_create_and_delete_and_a_duplicate_name_is_the_apis_409(cloud, admin_client):
    sdk = cloud.sdk()
    name = f"dash-proj-{uuid.uuid4().hex[:6]}"
    r = _post(admin_client, "/dashboard/admin/projects", action="create", name=name,
              description="made in the dashboard")
    assert r.status_code == 303
    project = sdk.identity.find_project(name)
    assert project.description == "made in the dashboard"
    page = admin_client.get("/dashboard/admin/projects").text
    assert f'<tr data-project="{project.id}">\n    <th scope="row">{name}</th>' in page
    bad = _post(admin_client, "/dashboard/admin/projects", action="create", name=name)
    api = cloud.session().post(cloud.url + "/identity/v3/projects",
                               json={"project": {"name": name}}, raise_exc=False)
    assert bad.status_code == api.status_code == 409
    assert alert_text(bad.text) == api.json()["error"]["message"]
    assert [p.id for p in sdk.identity.projects(name=name)] == [project.id]
    r = _post(admin_client, "/dashboard/admin/projects", action="delete",
              project_id=project.id)
    assert r.status_code == 303 and sdk.identity.find_project(name) is None


def test_users_create_assign_revoke_delete(cloud, admin_client):
    sdk = cloud.sdk()
    project = sdk.identity.create_project(name=f"dash-p-{uuid.uuid4().hex[:6]}",
                                          domain_id="default")
    name = f"dash-user-{uuid.uuid4().hex[:6]}"
    try:
        r = _post(admin_client, "/dashboard/admin/users", action="create", name=name,
                  password="s3cret-pass", email="someone@example.org")
        assert r.status_code == 303
        user = sdk.identity.find_user(name)
        assert user.email == "someone@example.org"
        member = sdk.identity.find_role("member")
        r = _post(admin_client, "/dashboard/admin/users", action="assign", user_id=user.id,
                  project_id=project.id, role_id=member.id)
        assert r.status_code == 303
        assignments = list(sdk.identity.role_assignments(user_id=user.id))
        assert [(a.scope["project"]["id"], a.role["id"]) for a in assignments] == [
            (project.id, member.id)]
        page = admin_client.get("/dashboard/admin/users").text
        assert f'data-assignment="{project.id}/{member.id}">member on {project.name}' in page
        # The new user logs in to that project with the password set here.
        login(cloud, name, "s3cret-pass", project.name).close()
        bad = _post(admin_client, "/dashboard/admin/users", action="assign",
                    user_id=user.id, project_id=project.id, role_id="no-such-role")
        assert bad.status_code == 404 and "no-such-role" in alert_text(bad.text)
        assert _post(admin_client, "/dashboard/admin/users", action="assign",
                     user_id=user.id, project_id="", role_id=member.id).status_code == 400
        r = _post(admin_client, "/dashboard/admin/users", action="revoke", user_id=user.id,
                  project_id=project.id, role_id=member.id)
        assert r.status_code == 303
        assert list(sdk.identity.role_assignments(user_id=user.id)) == []
        bad = _post(admin_client, "/dashboard/admin/users", action="create", name=name,
                    password="x")
        assert bad.status_code == 409 and alert_text(bad.text)
        assert len(list(sdk.identity.users(name=name))) == 1
        r = _post(admin_client, "/dashboard/admin/users", action="delete", user_id=user.id)
        assert r.status_code == 303 and sdk.identity.find_user(name) is None
    finally:
        if (left := sdk.identity.find_user(name)) is not None:
            sdk.identity.delete_user(left)
        sdk.identity.delete_project(project)


def test_quotas_edit_across_services_and_a_bad_value_changes_nothing(cloud, admin_client):
    user = cloud.make_user()
    project = user["project_id"]
    path = f"/dashboard/admin/quotas?project_id={project}"
    page = admin_client.get(path)
    assert page.status_code == 200
    compute = cloud.session().get(
        f"{cloud.url}/compute/v2.1/os-quota-sets/{project}").json()["quota_set"]
    assert (f'name="compute.instances" inputmode="numeric" value="{compute["instances"]}"'
            in page.text)
    r = admin_client.post("/dashboard/admin/quotas", data={
        "csrf_token": csrf_token(page.text), "project_id": project, "compute.instances": "7",
        "volume.volumes": "3", "network.floatingip": "2"})
    assert r.status_code == 200 and 'role="status">Quotas saved.' in r.text
    assert 'name="compute.instances" inputmode="numeric" value="7"' in r.text
    s = cloud.session()
    assert s.get(f"{cloud.url}/compute/v2.1/os-quota-sets/{project}").json()[
        "quota_set"]["instances"] == 7
    assert s.get(f"/os-quota-sets/{project}", endpoint_filter={
        "service_type": "block-storage"}).json()["quota_set"]["volumes"] == 3
    assert s.get(f"{cloud.url}/network/v2.0/quotas/{project}").json()[
        "quota"]["floatingip"] == 2
    # A good compute value with a bad network one: the API's message, and the compute
    # quota keeps its old value (nothing half-made).
    bad = admin_client.post("/dashboard/admin/quotas", data={
        "csrf_token": csrf_token(page.text), "project_id": project, "compute.instances": "9",
        "network.port": "many"})
    assert bad.status_code == 400 and alert_text(bad.text)
    assert 'value="many"' in bad.text
    assert s.get(f"{cloud.url}/compute/v2.1/os-quota-sets/{project}").json()[
        "quota_set"]["instances"] == 7


def test_a_member_gets_403_pages_and_no_admin_menu(cloud):
    user = cloud.make_user()
    client = login(cloud, user["name"], user["password"])
    try:
        assert 'aria-label="Admin"' not in client.get("/dashboard/servers").text
        for path in ADMIN_PAGES:
            page = client.get(path)
            assert page.status_code == 403 and "for admins only" in page.text
            csrf = csrf_token(client.get("/dashboard/servers").text)
            assert client.post(path, data={"csrf_token": csrf, "action": "create",
                                           "name": "sneaky"}).status_code in (403, 405)
        assert cloud.sdk().identity.find_project("sneaky") is None
    finally:
        client.close()


def test_resource_providers_show_placements_inventory_and_usage(cloud, admin_client):
    s = cloud.session()
    url = cloud.url + "/placement/resource_providers"
    headers = {"OpenStack-API-Version": "placement 1.20"}
    name = f"dash-rp-{uuid.uuid4().hex[:6]}"
    rp = s.post(url, json={"name": name}, headers=headers).json()
    try:
        s.put(f"{url}/{rp['uuid']}/inventories", headers=headers, json={
            "resource_provider_generation": rp["generation"], "inventories": {
                "VCPU": {"total": 8, "reserved": 2, "allocation_ratio": 4.0},
                "MEMORY_MB": {"total": 4096}}})
        consumer = str(uuid.uuid4())
        r = s.put(cloud.url + f"/placement/allocations/{consumer}", headers=headers, json={
            "allocations": {rp["uuid"]: {"resources": {"VCPU": 3}}},
            "project_id": uuid.uuid4().hex, "user_id": uuid.uuid4().hex})
        assert r.status_code == 204
        page = admin_client.get("/dashboard/admin/resource-providers")
        assert page.status_code == 200 and f'<th scope="row">{name}</th>' in page.text
        assert "VCPU</span>: 3 of 24" in page.text  # (8 - 2) x 4.0
        assert "MEMORY_MB</span>: 0 of 4096" in page.text
        assert 'aria-label="Admin"' in page.text and "Resource providers</a>" in page.text
    finally:
        s.delete(cloud.url + f"/placement/allocations/{consumer}", headers=headers,
                 raise_exc=False)
        s.delete(f"{url}/{rp['uuid']}", headers=headers)


def test_volume_backends_show_each_pools_capacity_and_free_space(cloud, admin_client):
    """The figures of cinder's get_pools (what `openstack volume backend pool list --long`
    shows), one row per backend pool, and they follow a new volume."""
    import re

    url = cloud.url + "/volume/v3/scheduler-stats/get_pools"
    pools = cloud.session().get(url, params={"detail": "true"}).json()["pools"]
    assert pools
    page = admin_client.get("/dashboard/admin/volume-backends")
    assert page.status_code == 200, page.text
    assert "Volume backends</a>" in page.text
    for pool in pools:
        name, caps = pool["name"], pool["capabilities"]
        assert f'<tr data-pool="{name}">' in page.text
        assert f'<td data-capacity="{name}"><span id="pool-' in page.text
        free = re.search(rf'<td data-free="{re.escape(name)}">([^<]*)</td>',
                         page.text).group(1)
        assert free == str(caps["free_capacity_gb"])
    # a volume takes its size from the pool's free space (cinder's allocated capacity)
    sdk = cloud.sdk()
    before = {p["name"]: p["capabilities"]["allocated_capacity_gb"] for p in pools}
    volume = sdk.block_storage.create_volume(size=2, name="dash-pool")
    try:
        volume = sdk.block_storage.wait_for_status(volume, "available", wait=60,
                                                   interval=0.1)
        host = sdk.block_storage.get_volume(volume).host
        page = admin_client.get("/dashboard/admin/volume-backends").text
        row = page[page.index(f'<tr data-pool="{host}">'):]
        row = row[:row.index("</tr>")]
        assert f"<td>{before[host] + 2}</td>" in row, row
    finally:
        sdk.block_storage.delete_volume(volume)


def _row(page: str, start: str) -> str:
    row = page[page.index(start):]
    return row[:row.index("</tr>")]


def test_the_service_project_and_users_offer_no_delete_and_a_forged_one_is_the_apis_403(
        cloud, admin_client):
    sdk = cloud.sdk()
    service = sdk.identity.find_project("service", domain_id="default")
    page = admin_client.get("/dashboard/admin/projects").text
    row = _row(page, f'<tr data-project="{service.id}">')
    assert 'value="delete"' not in row and "immutable" in row
    r = _post(admin_client, "/dashboard/admin/projects", action="delete",
              project_id=service.id)
    api = cloud.session().delete(f"{cloud.url}/identity/v3/projects/{service.id}",
                                 raise_exc=False)
    assert r.status_code == api.status_code == 403
    assert alert_text(r.text) == api.json()["error"]["message"]
    assert sdk.identity.find_project("service", domain_id="default") is not None

    nova = sdk.identity.find_user("nova", domain_id="default")
    page = admin_client.get("/dashboard/admin/users").text
    row = _row(page, f'<tr data-user="{nova.id}">')
    assert "service user" in row and 'value="delete"' not in row
    assert f'data-assignment="{service.id}/' in row and 'value="revoke"' not in row
    admin_role = sdk.identity.find_role("admin")
    r = _post(admin_client, "/dashboard/admin/users", action="revoke", user_id=nova.id,
              project_id=service.id, role_id=admin_role.id)
    assert r.status_code == 403 and "from a service user" in alert_text(r.text)
    r = _post(admin_client, "/dashboard/admin/users", action="delete", user_id=nova.id)
    assert r.status_code == 403 and alert_text(r.text).startswith("Cannot delete user nova")
    assert sdk.identity.find_user("nova", domain_id="default") is not None
