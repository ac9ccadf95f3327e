"""`openstack server show` names the server's security groups by name — the
openstack CLI sends the groups' ids on create (it resolves names itself), and nova shows
names."""
import uuid

import pytest

pytestmark = pytest.mark.cli


def test_server_show_names_security_groups_by_name(cloud):
    user = cloud.make_user(roles=("member",))
    conn = cloud.user_sdk(user)
    net = conn.network.create_network(name="sg-net")
    conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.7.0.0/24")
    web = conn.network.create_security_group(name="web")
    image = conn.image.create_image(name="sg-img", disk_format="raw", container_format="bare",
                                    data=b"\0" * 512)
    name = f"sg-{uuid.uuid4().hex[:6]}"
    cloud.cli("server", "create", "--flavor", "m1.nano", "--image", image.id, "--network",
              net.id, "--security-group", "default", "--security-group", web.id, "--wait",
              name, "-f", "json", user=user)
    shown = cloud.cli("server", "show", name, "-f", "json", user=user)
    names = sorted(g["name"] for g in shown["security_groups"])
    assert names == ["default", "web"], shown["security_groups"]
    # The API says the same (nova's shape: [{"name": …}]).
    server = conn.compute.find_server(name)
    assert sorted(g["name"] for g in conn.compute.get_server(server.id).security_groups) == \
        ["default", "web"]
