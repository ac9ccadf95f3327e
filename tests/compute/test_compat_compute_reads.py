"""Compute read routes real clients call (they were bare 404s) — hypervisor uptime
(`openstack hypervisor show` below 2.88), diagnostics, simple tenant usage (`openstack usage
list/show`), migrations, server password, remote consoles, os-hosts, quota class sets —
and flavor create with an integer id."""
import datetime as dt
import uuid

import httpx
import pytest


@pytest.fixture(scope="module")
def admin_conn(cloud):
    return cloud.sdk()


@pytest.fixture(scope="module")
def server(api, image_id):
    sid = api.boot(image_id)
    api.wait(sid)
    yield sid
    api.delete(f"/servers/{sid}")
    api.wait_gone(sid)


def test_hypervisor_show_cli_and_uptime(cloud, admin_conn):
    hyp = next(admin_conn.compute.hypervisors())
    # from 2.88 (the SDK negotiates it) the uptime is in the show, its own route is gone
    up = admin_conn.compute.get_hypervisor(hyp.id)
    assert " up " in up.uptime and "load average" in up.uptime
    shown = cloud.cli("hypervisor", "show", hyp.name, "-f", "json")
    assert shown["hypervisor_hostname"] == hyp.name and "uptime" in shown
    r = cloud.session().get(cloud.url + "/compute/v2.1/os-hypervisors/999999/uptime",
                            raise_exc=False)
    assert r.status_code == 404 and "itemNotFound" in r.json()


def test_usage_list_and_show(cloud, member, server, admin_conn):
    end = dt.datetime.utcnow() + dt.timedelta(hours=1)
    start = end - dt.timedelta(days=1)
    usage = admin_conn.compute.get_usage(member["project_id"], start=start, end=end)
    assert usage.project_id == member["project_id"]
    assert server in [s["instance_id"] for s in usage.server_usages]
    assert usage.total_vcpus_usage > 0
    listed = cloud.cli("usage", "list", "-f", "json")
    assert any(row["Project"] in (member["project_id"], member["project_name"])
               for row in listed)
    shown = cloud.cli("usage", "show", "--project", member["project_id"], "-f", "json")
    assert server in [s["instance_id"] for s in shown["Servers"]]
    r = cloud.session().get(cloud.url + "/compute/v2.1/os-simple-tenant-usage",
                            params={"start": "2020-01-02T00:00:00", "end": "2020-01-01T00:00:00"},
                            raise_exc=False)
    assert r.status_code == 400 and "badRequest" in r.json()


def test_diagnostics_password_and_console(cloud, api, admin_conn, member, server):
    diag = admin_conn.compute.get_server_diagnostics(server)
    assert diag.state == "running" and diag.num_cpus >= 1
    r = api.get(f"/servers/{server}/diagnostics")
    assert r.status_code == 403  # admin only, as nova

    conn = cloud.user_sdk(member)
    assert conn.compute.get_server_password(server) == ""
    conn.compute.clear_server_password(server)

    console = conn.compute.create_server_remote_console(server, protocol="vnc", type="novnc")
    page = httpx.get(console.url)
    assert page.status_code == 200 and page.text == conn.compute.get_server_console_output(
        server)["output"]
    assert httpx.get(console.url.split("?")[0] + "?token=wrong").status_code == 404
    legacy = conn.compute.get_server_console_url(server, "serial")
    assert httpx.get(legacy["url"]).status_code == 200
    r = api.post(f"/servers/{server}/remote-consoles",
                 json={"remote_console": {"protocol": "spice", "type": "spice-html5"}})
    assert r.status_code == 400 and "badRequest" in r.json()
    r = api.post(f"/servers/{server}/remote-consoles",
                 json={"remote_console": {"protocol": "vnc", "type": "serial"}})
    assert r.status_code == 400


def test_migrations_lists(api, admin_conn, server):
    assert isinstance(list(admin_conn.compute.migrations()), list)
    assert list(admin_conn.compute.server_migrations(server)) == []
    assert api.get("/os-migrations").status_code == 403


def test_os_hosts_before_2_43(cloud, admin_api):
    admin_api.headers = {"OpenStack-API-Version": "compute 2.42"}
    hosts = admin_api.get("/os-hosts").json()["hosts"]
    compute = [h for h in hosts if h["service"] == "compute"]
    assert compute and compute[0]["zone"] == "nova"
    shown = admin_api.get(f"/os-hosts/{compute[0]['host_name']}").json()["host"]
    assert shown[0]["resource"]["project"] == "(total)"
    assert admin_api.get("/os-hosts/no-such-host").status_code == 404
    admin_api.headers = {"OpenStack-API-Version": "compute 2.43"}
    assert admin_api.get("/os-hosts").status_code == 404
    admin_api.headers = {"OpenStack-API-Version": "compute 2.79"}


def test_quota_class_default_changes_every_projects_limit(cloud, admin_conn, member):
    before = admin_conn.compute.get_quota_class_set("default")
    assert before.instances == 10
    try:
        admin_conn.compute.update_quota_class_set("default", key_pairs=77)
        assert admin_conn.compute.get_quota_class_set("default").key_pairs == 77
        limits = cloud.user_sdk(member).compute.get_limits()
        assert limits.absolute.keypairs == 77
    finally:
        admin_conn.compute.update_quota_class_set("default", key_pairs=before.key_pairs)


def test_flavor_create_with_integer_id(admin_api):
    ident = int(uuid.uuid4().int % 10**9) + 10**9
    r = admin_api.post("/flavors", json={"flavor": {"name": f"cc-int-{ident}", "id": ident,
                                                    "ram": 64, "vcpus": 1, "disk": 1}})
    assert r.status_code == 200, r.text
    assert r.json()["flavor"]["id"] == str(ident)
    assert admin_api.delete(f"/flavors/{ident}").status_code == 202


@pytest.mark.parametrize("method,path,body", [
    ("GET", "/os-migrations?limit=x", None),
    ("GET", "/os-migrations?marker=nope", None),
    ("GET", "/os-migrations?changes-since=yesterday", None),
    ("GET", "/os-simple-tenant-usage?start=soon", None),
    ("GET", "/os-simple-tenant-usage?limit=-1", None),
    ("GET", "/os-hypervisors/abc/uptime", None),
    ("PUT", "/os-quota-class-sets/default", {"quota_class_set": {"cores": "-5"}}),
    ("PUT", "/os-quota-class-sets/default", {"quota_class_set": {"nope": 1}}),
    ("PUT", "/os-quota-class-sets/default", [1]),
    # more digits than int() converts (4,300)
    ("PUT", "/os-quota-class-sets/default", {"quota_class_set": {"cores": "9" * 5000}}),
    ("PUT", "/os-quota-sets/{project}", {"quota_set": {"cores": "-" + "9" * 5000}}),
    ("POST", "/servers/{sid}/remote-consoles", {"remote_console": {"protocol": "vnc"}}),
    ("POST", "/servers/{sid}/remote-consoles", "x"),
    ("POST", "/servers/{sid}/action", {"addSecurityGroup": None}),
    ("POST", "/servers/{sid}/action", {"os-migrateLive": {"host": None}}),
    ("POST", "/servers/{sid}/action", {"evacuate": {"host": 5}}),
    ("POST", "/servers/{sid}/action", {"createBackup": {"name": "b", "backup_type": "d",
                                                        "rotation": -1}}),
    ("POST", "/servers/{sid}/action", {"changePassword": {}}),
    ("POST", "/servers/{sid}/action", {"rescue": {"rescue_image_ref": "not-a-uuid"}}),
    ("POST", "/servers/{sid}/action", {"shelve": {"x": 1}}),
    ("GET", "/servers/{sid}/migrations/abc", None),
])
def test_bad_input_is_a_clean_4xx(admin_api, server, method, path, body):
    r = admin_api.req(method, path.format(sid=server, project=admin_api.s.get_project_id()),
                      json=body,
                      headers={"OpenStack-API-Version": "compute 2.79"})
    assert 400 <= r.status_code < 500, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/json")


def test_deprecated_network_quotas_round_trip_below_2_36(cloud, member):
    """Below 2.36 nova stores fixed_ips, floating_ips, security_groups and their rules
    like any limit (a client that sets one reads it back); from 2.36 they are not shown."""
    sess = cloud.session()
    url = f"{cloud.url}/compute/v2.1/os-quota-sets/{member['project_id']}"
    old = {"OpenStack-API-Version": "compute 2.35"}
    values = {"fixed_ips": 25, "floating_ips": 7, "security_groups": 12,
              "security_group_rules": 33}
    r = sess.put(url, json={"quota_set": values}, headers=old, raise_exc=False)
    assert r.status_code == 200, r.text
    assert {k: r.json()["quota_set"][k] for k in values} == values
    shown = sess.get(url, headers=old).json()["quota_set"]
    assert {k: shown[k] for k in values} == values
    absolute = sess.get(f"{cloud.url}/compute/v2.1/limits",
                        params={"tenant_id": member["project_id"]},
                        headers=old).json()["limits"]["absolute"]
    assert (absolute["maxTotalFloatingIps"], absolute["maxSecurityGroups"],
            absolute["maxSecurityGroupRules"]) == (7, 12, 33)
    new = sess.get(url, headers={"OpenStack-API-Version": "compute 2.36"}).json()["quota_set"]
    assert not set(values) & set(new)
    r = sess.put(url, json={"quota_set": {"fixed_ips": 1}},
                 headers={"OpenStack-API-Version": "compute 2.36"}, raise_exc=False)
    assert r.status_code == 400


def test_a_quota_limit_past_max_int_is_a_400_not_a_500(cloud, member):
    """nova's schema caps a limit at its db MAX_INT; a bigger one was a 500 from SQLite."""
    s = cloud.session()
    big = str(2**31)  # one past 2147483647, as a string and as a number
    for value in (big, int(big)):
        for url, key in ((f"/os-quota-sets/{member['project_id']}", "quota_set"),
                         ("/os-quota-class-sets/default", "quota_class_set")):
            r = s.put(cloud.url + "/compute/v2.1" + url, json={key: {"cores": value}},
                      raise_exc=False)
            assert r.status_code == 400, r.text
            assert "less than or equal to 2147483647" in r.json()["badRequest"]["message"]
    r = s.put(cloud.url + f"/compute/v2.1/os-quota-sets/{member['project_id']}",
              json={"quota_set": {"cores": 2**31 - 1}})
    assert r.json()["quota_set"]["cores"] == 2**31 - 1
