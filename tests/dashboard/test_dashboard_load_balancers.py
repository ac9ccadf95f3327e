"""The dashboard's load balancer pages over real HTTP, against the simulated data plane:
the create wizard makes the whole tree (listener, pool, members, health monitor) in one
call and leads to the load balancer's page, whose status tree shows each member's
operating status; bad input shows Octavia's own message on the wizard, keeps what was
typed and makes nothing; delete takes everything under it. What the dashboard made is
checked through openstacksdk."""
from __future__ import annotations

import re
import uuid

from helpers.cloud import wait_for
from helpers.dashboard import alert_text, csrf_token

WIZARD = "/dashboard/load-balancers/create"


def _subnet(conn, cidr: str):
    network = conn.network.create_network(name=f"dash-lbnet-{uuid.uuid4().hex[:6]}")
    return conn.network.create_subnet(network_id=network.id, ip_version=4, cidr=cidr,
                                      name=f"dash-lbsub-{uuid.uuid4().hex[:6]}")


def _wizard(client, **fields):
    page = client.get(WIZARD)
    assert page.status_code == 200, page.text
    form = {"csrf_token": csrf_token(page.text), "action": "create", "name": "",
            "vip_subnet_id": "", "protocol": "HTTP", "protocol_port": "80",
            "lb_algorithm": "ROUND_ROBIN", "monitor_type": "", "delay": "5",
            "timeout": "5", "max_retries": "3", "url_path": "", "member_rows": "3",
            **{f"member_{k}_{i}": "" for i in range(3) for k in ("address", "port")}}
    form.update(fields)
    return client.post(WIZARD, data=form)


def _active(conn, lb_id):
    def ready():
        lb = conn.load_balancer.get_load_balancer(lb_id)
        assert lb.provisioning_status != "ERROR", lb
        return lb if lb.provisioning_status == "ACTIVE" else None
    return wait_for(ready, 30, f"load balancer {lb_id} ACTIVE", interval=0.05)


def _tree_item(page: str, kind: str, obj_id: str) -> str:
    """The text of one status tree item (up to its nested list or its end)."""
    item = page[page.index(f'data-tree-{kind}="{obj_id}"'):]
    return re.split(r"<ul|</li>", item, maxsplit=1)[0]


def test_wizard_creates_the_tree_its_page_shows_member_health_and_delete(cloud, member):
    user, client = member
    conn = cloud.user_sdk(user)
    subnet = _subnet(conn, "10.71.0.0/24")
    page = client.get(WIZARD)
    assert page.status_code == 200
    assert f'<option value="{subnet.id}">' in page.text
    for legend in ("Load balancer", "Listener", "Pool", "Health monitor (optional)",
                   "Members (empty rows are left out)"):
        assert f"<legend>{legend}</legend>" in page.text
    assert page.text.count('name="member_address_') >= 2

    made = _wizard(client, name="web-lb", vip_subnet_id=subnet.id, protocol="HTTP",
                   protocol_port="8080", lb_algorithm="LEAST_CONNECTIONS",
                   monitor_type="HTTP", delay="3", timeout="2", max_retries="4",
                   url_path="/healthz", member_address_0="10.71.0.11", member_port_0="80",
                   member_address_2="10.71.0.12", member_port_2="8081")
    assert made.status_code == 303, made.text
    lb = conn.load_balancer.find_load_balancer("web-lb")
    assert made.headers["location"] == f"/dashboard/load-balancers/{lb.id}"
    lb = _active(conn, lb.id)

    # What was made is what the form said (the empty middle row left out).
    assert lb.vip_subnet_id == subnet.id and lb.vip_address.startswith("10.71.0.")
    [listener] = conn.load_balancer.listeners(loadbalancer_id=lb.id)
    assert (listener.protocol, listener.protocol_port) == ("HTTP", 8080)
    [pool] = conn.load_balancer.pools(loadbalancer_id=lb.id)
    assert listener.default_pool_id == pool.id
    assert (pool.protocol, pool.lb_algorithm) == ("HTTP", "LEAST_CONNECTIONS")
    members = {(m.address, m.protocol_port): m for m in conn.load_balancer.members(pool)}
    assert set(members) == {("10.71.0.11", 80), ("10.71.0.12", 8081)}
    monitor = conn.load_balancer.get_health_monitor(pool.health_monitor_id)
    assert (monitor.type, monitor.delay, monitor.timeout, monitor.max_retries,
            monitor.url_path) == ("HTTP", 3, 2, 4, "/healthz")

    # The list links to the page; the page shows the VIP and the tree with every member.
    listing = client.get("/dashboard/load-balancers")
    assert f'href="/dashboard/load-balancers/{lb.id}"' in listing.text
    shown = client.get(f"/dashboard/load-balancers/{lb.id}")
    assert shown.status_code == 200
    assert f'data-vip="{lb.id}">{lb.vip_address} on' in shown.text
    assert 'data-lb-provisioning="ACTIVE"' in shown.text
    assert "(HTTP 8080)" in _tree_item(shown.text, "listener", listener.id)
    assert "(HTTP, LEAST_CONNECTIONS)" in _tree_item(shown.text, "pool", pool.id)
    hm_item = _tree_item(shown.text, "monitor", monitor.id)
    assert "(HTTP)" in hm_item and 'data-operating-status="ONLINE"' in hm_item
    for (address, port), m in members.items():
        item = _tree_item(shown.text, "member", m.id)
        assert f"{address}:{port}" in item and 'data-operating-status="ONLINE"' in item
    assert 'value="delete"' in shown.text

    # A member taken out of service shows OFFLINE in the tree, the other still ONLINE.
    off = members[("10.71.0.12", 8081)]
    conn.load_balancer.update_member(off, pool, admin_state_up=False)
    _active(conn, lb.id)
    shown = client.get(f"/dashboard/load-balancers/{lb.id}")
    assert 'data-operating-status="OFFLINE"' in _tree_item(shown.text, "member", off.id)
    on = members[("10.71.0.11", 80)]
    assert 'data-operating-status="ONLINE"' in _tree_item(shown.text, "member", on.id)

    # Delete from its page: everything under it goes, back to the list.
    gone = client.post(f"/dashboard/load-balancers/{lb.id}", data={
        "csrf_token": csrf_token(shown.text), "action": "delete"})
    assert gone.status_code == 303 and gone.headers["location"] == "/dashboard/load-balancers"
    wait_for(lambda: conn.load_balancer.find_load_balancer(lb.id) is None, 30,
             "the load balancer deleted", interval=0.05)
    assert list(conn.load_balancer.pools(loadbalancer_id=lb.id)) == []
    missing = client.get(f"/dashboard/load-balancers/{lb.id}")
    assert missing.status_code == 404 and lb.id in missing.text


def test_wizard_without_monitor_shows_no_monitor_and_adds_rows(cloud, member):
    user, client = member
    conn = cloud.user_sdk(user)
    subnet = _subnet(conn, "10.72.0.0/24")
    more = _wizard(client, action="add_row", name="tcp-lb", member_address_0="10.72.0.5",
                   member_port_0="22")
    assert more.status_code == 200
    assert 'name="member_address_3"' in more.text and 'name="member_address_4"' not in more.text
    assert 'value="tcp-lb"' in more.text and 'value="10.72.0.5"' in more.text
    made = _wizard(client, name="tcp-lb", vip_subnet_id=subnet.id, protocol="TCP",
                   protocol_port="22", lb_algorithm="SOURCE_IP", member_rows="4",
                   member_address_0="10.72.0.5", member_port_0="22",
                   member_address_3="10.72.0.6", member_port_3="2222")
    assert made.status_code == 303, made.text
    lb = _active(conn, made.headers["location"].rsplit("/", 1)[1])
    [pool] = conn.load_balancer.pools(loadbalancer_id=lb.id)
    assert (pool.protocol, pool.lb_algorithm, pool.health_monitor_id) == ("TCP", "SOURCE_IP",
                                                                          None)
    members = list(conn.load_balancer.members(pool))
    assert {(m.address, m.protocol_port) for m in members} == {("10.72.0.5", 22),
                                                               ("10.72.0.6", 2222)}
    shown = client.get(made.headers["location"])
    assert "No health monitor" in shown.text
    for m in members:
        assert 'data-operating-status="NO_MONITOR"' in _tree_item(shown.text, "member", m.id)
    conn.load_balancer.delete_load_balancer(lb.id, cascade=True)


def test_wizard_bad_input_shows_the_api_message_keeps_the_form_and_makes_nothing(cloud,
                                                                                  member):
    user, client = member
    conn = cloud.user_sdk(user)
    subnet = _subnet(conn, "10.73.0.0/24")
    other = cloud.make_user()
    theirs = _subnet(cloud.user_sdk(other), "10.74.0.0/24")
    typed = {"name": "bad-lb", "member_address_0": "10.73.0.9", "member_port_0": "80"}
    cases = [
        ({"vip_subnet_id": subnet.id, "protocol_port": "0"},
         "Value should be greater or equal to 1"),
        ({"vip_subnet_id": subnet.id, "protocol_port": "70000"},
         "Value should be lower or equal to 65535"),
        ({"vip_subnet_id": subnet.id, "member_port_0": "70000"},
         "Value should be lower or equal to 65535"),
        # A half-filled member row goes to the API, which names what is missing.
        ({"vip_subnet_id": subnet.id, "member_port_0": ""}, "protocol_port"),
        ({"vip_subnet_id": ""}, "VIP must contain one of"),
        ({"vip_subnet_id": theirs.id}, f"Subnet {theirs.id} not found"),
        ({"vip_subnet_id": subnet.id, "monitor_type": "PING", "max_retries": "11"},
         "Value should be lower or equal to 10"),
    ]
    for fields, message in cases:
        bad = _wizard(client, **{**typed, **fields})
        assert bad.status_code == 400, (fields, bad.status_code)
        assert message in alert_text(bad.text), (fields, alert_text(bad.text))
        # The form keeps what was typed.
        assert 'value="bad-lb"' in bad.text and 'value="10.73.0.9"' in bad.text
        port = fields.get("protocol_port", "80")
        assert f'name="protocol_port" inputmode="numeric" value="{port}"' in bad.text
        if fields["vip_subnet_id"] == subnet.id:
            assert f'<option value="{subnet.id}" selected>' in bad.text
    assert list(conn.load_balancer.load_balancers()) == []
    assert list(cloud.user_sdk(other).load_balancer.load_balancers()) == []
    # A page of no load balancer: the API's 404, not a 500.
    missing = client.get(f"/dashboard/load-balancers/{uuid.uuid4()}")
    assert missing.status_code == 404


def test_page_marks_every_operating_status_and_offers_delete_only_when_octavia_would():
    """The statuses the simulated data plane never gives (a failed check's ERROR, a
    draining member) rendered from a status tree as Octavia returns it; a load balancer
    in a PENDING state has no delete button (Octavia answers 409) and the page reloads
    itself until the change is done."""
    from pocketstack.dashboard import web

    statuses = ("ONLINE", "ERROR", "OFFLINE", "NO_MONITOR", "DRAINING")
    members = [{"id": f"m-{s}", "name": "", "address": f"10.0.0.{i}", "protocol_port": 80,
                "provisioning_status": "ACTIVE", "operating_status": s}
               for i, s in enumerate(statuses, 1)]
    tree = {"id": "lb", "name": "x", "provisioning_status": "ACTIVE",
            "operating_status": "DEGRADED", "listeners": [{
                "id": "li", "name": "", "provisioning_status": "ACTIVE",
                "operating_status": "DEGRADED", "pools": [{
                    "id": "pl", "name": "", "provisioning_status": "ACTIVE",
                    "operating_status": "DEGRADED", "members": members,
                    "health_monitor": {"id": "hm", "name": "", "type": "TCP",
                                       "provisioning_status": "ACTIVE",
                                       "operating_status": "ONLINE"}}]}]}

    def page(provisioning, deletable):
        lb = {"id": "lb", "name": "x", "vip_address": "10.0.0.100",
              "provisioning_status": provisioning, "operating_status": "DEGRADED"}
        return web.render("load_balancer.html", session=None, lb=lb, tree=tree,
                          tree_error=None, message=None, subnet_label="s", listeners={},
                          pools={}, deletable=deletable).body.decode()

    shown = page("ACTIVE", True)
    for status in statuses:
        item = _tree_item(shown, "member", f"m-{status}")
        assert (f'<span class="op op-{status}" data-operating-status="{status}">{status}'
                f'</span>') in item
    assert 'data-operating-status="DEGRADED"' in _tree_item(shown, "pool", "pl")
    assert 'value="delete"' in shown and 'http-equiv="refresh"' not in shown
    pending = page("PENDING_UPDATE", False)
    assert 'value="delete"' not in pending and 'http-equiv="refresh"' in pending


def test_new_pages_want_a_login_and_their_forms_a_csrf_token(cloud, member):
    import httpx

    user, client = member
    conn = cloud.user_sdk(user)
    subnet = _subnet(conn, "10.75.0.0/24")
    lb_page = f"/dashboard/load-balancers/{uuid.uuid4()}"
    with httpx.Client(base_url=cloud.url) as anonymous:
        for path in (WIZARD, lb_page):
            r = anonymous.get(path)
            assert r.status_code == 303 and r.headers["location"] == "/dashboard/login"
    forged = client.post(WIZARD, data={"action": "create", "name": "forged",
                                       "vip_subnet_id": subnet.id, "protocol": "HTTP",
                                       "protocol_port": "80", "lb_algorithm": "ROUND_ROBIN"})
    assert forged.status_code == 403 and "form expired" in alert_text(forged.text)
    assert list(conn.load_balancer.load_balancers()) == []
    made = _wizard(client, name="kept", vip_subnet_id=subnet.id)  # no members: a bare pool
    assert made.status_code == 303, made.text
    lb = _active(conn, made.headers["location"].rsplit("/", 1)[1])
    path = made.headers["location"]
    r = client.post(path, data={"action": "delete"})
    assert r.status_code == 403
    r = client.post(path, data={"csrf_token": csrf_token(client.get(path).text),
                                "action": "explode"})
    assert r.status_code == 400 and alert_text(r.text) == "Unknown form action."
    assert conn.load_balancer.get_load_balancer(lb.id).provisioning_status == "ACTIVE"
    shown = client.get(path)
    assert "No members" in shown.text and "No health monitor" in shown.text
    conn.load_balancer.delete_load_balancer(lb.id, cascade=True)


def test_wizard_in_a_browser(cloud, member, browser, tmp_path):
    """The wizard used in headless Chromium: the fields filled, a member row added, Enter
    in a field creates (the first button is Create); the page reloads itself until the
    load balancer is ACTIVE and then shows the members in its tree."""
    import os

    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    from helpers.dashboard_browser import log_in, submit, wait_for_url

    def shoot(name):  # kept in $POCKETSTACK_SCREENSHOTS too when set, as the docs' are
        for folder in (tmp_path, os.environ.get("POCKETSTACK_SCREENSHOTS")):
            if folder:
                assert browser.save_screenshot(os.path.join(folder, f"dashboard-{name}.png"))

    user, _ = member
    conn = cloud.user_sdk(user)
    subnet = _subnet(conn, "10.76.0.0/24")
    log_in(browser, cloud.url, user["name"], user["password"])
    browser.get(cloud.url + WIZARD)
    browser.find_element(By.ID, "lb-name").send_keys("browser-lb")
    Select(browser.find_element(By.ID, "lb-subnet")).select_by_value(subnet.id)
    Select(browser.find_element(By.ID, "lb-monitor")).select_by_value("TCP")
    port = browser.find_element(By.ID, "lb-port")
    port.clear()
    port.send_keys("8000")
    browser.find_element(By.NAME, "member_address_0").send_keys("10.76.0.21")
    browser.find_element(By.NAME, "member_port_0").send_keys("8000")
    submit(browser, 'button[value="add_row"]')
    assert browser.find_element(By.NAME, "member_address_0").get_attribute("value") == \
        "10.76.0.21"
    browser.find_element(By.NAME, "member_address_3").send_keys("10.76.0.22")
    browser.find_element(By.NAME, "member_port_3").send_keys("8001")
    shoot("load-balancer-create")
    browser.find_element(By.NAME, "member_port_3").send_keys(Keys.ENTER)
    url = wait_for_url(browser, lambda u: "/load-balancers/" in u and not
                       u.endswith("/create"))
    lb_id = url.rsplit("/", 1)[1]
    WebDriverWait(browser, 60, poll_frequency=0.2).until(
        lambda b: 'data-lb-provisioning="ACTIVE"' in b.page_source)
    tree = browser.find_element(By.CSS_SELECTOR, "ul.tree.root").text
    assert "10.76.0.21:8000 ONLINE" in tree and "10.76.0.22:8001 ONLINE" in tree
    assert "Health monitor" in tree and "(TCP)" in tree
    shoot("load-balancer")
    conn.load_balancer.delete_load_balancer(lb_id, cascade=True)
