"""The dashboard's load balancers page over real HTTP: create one on a subnet, add a
listener, see its VIP and statuses, delete it; bad input shows Octavia's own message and
makes nothing."""
from __future__ import annotations

from helpers.dashboard import alert_text, csrf_token, login

from helpers.cloud import wait_for
from lb_helpers import make_subnet


def _post(client, path, **data):
    page = client.get(path)
    assert page.status_code == 200, page.text
    return client.post(path, data={"csrf_token": csrf_token(page.text), **data})


def test_load_balancers_page_create_listener_and_delete(cloud, member, conn):
    client = login(cloud, member["name"], member["password"])
    try:
        subnet = make_subnet(conn, cidr="10.70.0.0/24")
        page = client.get("/dashboard/load-balancers")
        assert page.status_code == 200 and "No load balancers in this project." in page.text
        made = _post(client, "/dashboard/load-balancers", action="create", name="dash-lb",
                     vip_subnet_id=subnet.id)
        assert made.status_code == 303, made.text
        lb = conn.load_balancer.find_load_balancer("dash-lb")
        wait_for(lambda: conn.load_balancer.get_load_balancer(lb.id).provisioning_status ==
                 "ACTIVE", 30, "the load balancer ACTIVE", interval=0.05)
        page = client.get("/dashboard/load-balancers")
        assert f'data-vip="{lb.id}">{lb.vip_address} on' in page.text
        assert "ACTIVE / ONLINE" in page.text
        added = _post(client, "/dashboard/load-balancers", action="add_listener",
                      loadbalancer_id=lb.id, protocol="HTTP", protocol_port="8080")
        assert added.status_code == 303, added.text
        [listener] = conn.load_balancer.listeners(loadbalancer_id=lb.id)
        assert (listener.protocol, listener.protocol_port) == ("HTTP", 8080)
        wait_for(lambda: conn.load_balancer.get_load_balancer(lb.id).provisioning_status ==
                 "ACTIVE", 30, "the listener applied", interval=0.05)
        bad = _post(client, "/dashboard/load-balancers", action="add_listener",
                    loadbalancer_id=lb.id, protocol="HTTP", protocol_port="70000")
        assert bad.status_code == 400
        assert "Value should be lower or equal to 65535" in alert_text(bad.text)
        dup = _post(client, "/dashboard/load-balancers", action="add_listener",
                    loadbalancer_id=lb.id, protocol="TCP", protocol_port="8080")
        assert dup.status_code == 409 and "already using protocol TCP" in alert_text(dup.text)
        assert len(list(conn.load_balancer.listeners(loadbalancer_id=lb.id))) == 1
        nothing = _post(client, "/dashboard/load-balancers", action="create", name="x",
                        vip_subnet_id="")
        assert nothing.status_code == 400 and alert_text(nothing.text)
        gone = _post(client, "/dashboard/load-balancers", action="delete",
                     loadbalancer_id=lb.id)
        assert gone.status_code == 303
        wait_for(lambda: conn.load_balancer.find_load_balancer(lb.id) is None, 30,
                 "the load balancer deleted", interval=0.05)
    finally:
        client.close()
