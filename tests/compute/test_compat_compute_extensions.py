"""GET /extensions and /extensions/{alias}, nova's fixed list of aliases, through
openstacksdk (and the openstack CLI's `extension list --compute`)."""
import pytest


def test_extensions_through_the_sdk(cloud, member):
    conn = cloud.user_sdk(member)
    exts = {e.alias: e for e in conn.compute.extensions()}
    assert len(exts) == 99
    assert {"os-floating-ip-pools", "os-security-groups", "os-keypairs", "OS-EXT-AZ",
            "os-volumes"} <= set(exts)
    kp = conn.compute.find_extension("os-keypairs")
    assert (kp.name, kp.description) == ("Keypairs", "Keypair Support.")
    assert kp.namespace == "http://docs.openstack.org/compute/ext/fake_xml"
    assert kp.updated_at == "2014-12-03T00:00:00Z"


@pytest.mark.parametrize("version", ["2.1", "2.79"])
def test_extension_show_and_unknown_alias(api, version):
    h = {"OpenStack-API-Version": f"compute {version}"}
    r = api.get("/extensions/os-agents", headers=h)
    assert r.status_code == 200
    assert r.json() == {"extension": {
        "alias": "os-agents", "description": "Agents support.", "links": [], "name": "Agents",
        "namespace": "http://docs.openstack.org/compute/ext/fake_xml",
        "updated": "2014-12-03T00:00:00Z"}}
    r = api.get("/extensions/no-such-alias", headers=h)
    assert r.status_code == 404 and "itemNotFound" in r.json()
    listed = api.get("/extensions", headers=h).json()["extensions"]
    assert [e["alias"] for e in listed][:3] == ["NMN", "OS-DCF", "OS-EXT-AZ"]


def test_extension_list_cli(cloud):
    rows = cloud.cli("extension", "list", "--compute", "-f", "json")
    assert "os-floating-ip-pools" in {r["Alias"] for r in rows}
