"""`openstack host list` lists the hosts that run a compute service, so showing
its first row works (the all-in-one's conductor/scheduler host runs none)."""


def test_host_list_then_show_first_row(cloud):
    rows = cloud.cli("host", "list", "-f", "json")
    assert rows and all(r["Service"] == "compute" for r in rows)
    assert "localhost" not in {r["Host Name"] for r in rows}
    shown = cloud.cli("host", "show", rows[0]["Host Name"], "-f", "json")
    assert {r["Project"] for r in shown} >= {"(total)", "(used_now)", "(used_max)"}


def test_host_errors(cloud, api, admin_api):
    h = {"OpenStack-API-Version": "compute 2.42"}
    assert admin_api.get("/os-hosts/localhost", headers=h).status_code == 404
    assert api.get("/os-hosts", headers=h).status_code == 403  # admin only, as nova
    assert admin_api.get("/os-hosts", headers={
        "OpenStack-API-Version": "compute 2.43"}).status_code == 404
