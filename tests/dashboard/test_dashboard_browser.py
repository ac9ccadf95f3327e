"""The dashboard in headless Chromium (Debian's chromium + chromium-driver, via Selenium):
log in through the form and open a server's boot waterfall."""
from __future__ import annotations

import os
import time
import uuid

import pytest

pytest.importorskip("selenium.webdriver", reason="selenium is not installed")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.select import Select  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from helpers.dashboard_browser import log_in, submit, wait_for_table, wait_for_url  # noqa: E402


@pytest.fixture
def shot(tmp_path):
    """shot(browser, name): a screenshot into the test's tmp dir, and into
    $POCKETSTACK_SCREENSHOTS too when set (the docs' pictures come from there)."""
    keep = os.environ.get("POCKETSTACK_SCREENSHOTS")

    def take(browser, name: str) -> None:
        for folder in (tmp_path / "screenshots", keep):
            if folder:
                os.makedirs(folder, exist_ok=True)
                assert browser.save_screenshot(os.path.join(folder, f"dashboard-{name}.png"))
    return take


def test_log_in_and_open_the_boot_waterfall(cloud, browser, shot):
    user = cloud.make_user()
    s = cloud.session()
    image = s.post(cloud.url + "/image/v2/images",
                   json={"name": f"dash-browser-{uuid.uuid4().hex[:6]}", "disk_format": "raw",
                         "container_format": "bare", "visibility": "public"}).json()
    s.put(cloud.url + f"/image/v2/images/{image['id']}/file", data=b"\0" * 4096,
          headers={"Content-Type": "application/octet-stream"})
    conn = cloud.user_sdk(user)
    server = conn.compute.create_server(name="browser-vm", image_id=image["id"],
                                        flavor_id="42", networks="none")
    net = conn.network.create_network(name="lab-net")
    subnet = conn.network.create_subnet(network_id=net.id, cidr="10.66.0.0/24", ip_version=4)
    admin = cloud.sdk()
    external = admin.network.create_network(name=f"lab-ext-{uuid.uuid4().hex[:4]}",
                                            is_router_external=True)
    admin.network.create_subnet(network_id=external.id, cidr="198.18.0.0/24", ip_version=4)
    router = conn.network.create_router(name="lab-router",
                                        external_gateway_info={"network_id": external.id})
    conn.network.add_interface_to_router(router, subnet=subnet.id)
    conn.compute.create_keypair(name="lab-key")
    try:
        deadline = time.monotonic() + 60
        while conn.compute.get_server(server.id).status not in ("ACTIVE", "ERROR"):
            assert time.monotonic() < deadline, "the server never finished building"
            time.sleep(0.05)

        browser.get(cloud.url + "/")  # a browser asking for HTML lands on the login form
        assert browser.current_url.endswith("/dashboard/login")
        browser.find_element(By.ID, "username").send_keys(user["name"])
        browser.find_element(By.ID, "password").send_keys(user["password"])
        browser.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
        wait_for_url(browser, lambda url: url.endswith("/dashboard/servers"))
        browser.find_element(By.LINK_TEXT, "browser-vm").click()
        assert browser.find_element(By.ID, "waterfall").text == "Waterfalls, one per request"
        browser.execute_script("document.getElementById('boot-path-title').scrollIntoView();")
        shot(browser, "waterfall")  # a fresh boot: only the create request's steps
        browser.find_element(By.LINK_TEXT, "Overview").click()
        assert browser.find_elements(By.CSS_SELECTOR, "main meter, main progress")
        shot(browser, "overview")
        browser.find_element(By.LINK_TEXT, "Servers").click()

        # Launch through the form; the list shows it go ACTIVE without a reload.
        browser.find_element(By.LINK_TEXT, "Launch").click()
        browser.find_element(By.ID, "name").send_keys("form-vm")
        Select(browser.find_element(By.ID, "image")).select_by_value(image["id"])
        Select(browser.find_element(By.ID, "flavor")).select_by_value("42")
        Select(browser.find_element(By.ID, "network")).select_by_value(net.id)
        Select(browser.find_element(By.ID, "key_name")).select_by_value("lab-key")
        Select(browser.find_element(By.ID, "security_groups")).select_by_value("default")
        shot(browser, "launch")
        browser.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
        form_vm = wait_for_url(browser, lambda url: "/launch" not in url).rsplit("/", 1)[1]
        browser.get(cloud.url + "/dashboard/servers")
        browser.execute_script("window.stillTheSamePage = true;")
        cell = browser.find_element(By.CSS_SELECTOR, f'[data-server-status="{form_vm}"]')
        WebDriverWait(browser, 60, poll_frequency=0.1).until(
            lambda _: cell.text in ("ACTIVE", "ERROR"))
        assert cell.text == "ACTIVE"
        conn.compute.stop_server(form_vm)  # a change the page can only learn by polling
        WebDriverWait(browser, 60, poll_frequency=0.1).until(lambda _: cell.text == "SHUTOFF")
        assert browser.execute_script("return window.stillTheSamePage === true;")
        shot(browser, "servers")
        browser.find_element(By.LINK_TEXT, "form-vm").click()
        # Start and stop again with the page's own buttons. The start hangs 2 s on the host
        # (a fault rule), and the page follows it to its result without a reload.
        rule = s.post(cloud.url + "/pocketstack/v1/faults", json={"fault": {
            "operation": "power_on", "action": "hang", "hang_seconds": 2, "times": 1}})
        submit(browser, 'button[value="start"]')
        progress = browser.find_element(By.ID, "server-progress")
        assert progress.text == "powering-on"  # the page the start led to
        browser.execute_script("window.stillTheSamePage = true;")
        WebDriverWait(browser, 60, poll_frequency=0.1).until(
            lambda b: progress.text.startswith("Done: ACTIVE"))
        assert browser.find_element(By.ID, "server-status").text == "ACTIVE"
        assert browser.execute_script("return window.stillTheSamePage === true;")
        s.delete(cloud.url + f"/pocketstack/v1/faults/{rule.json()['fault']['id']}",
                 raise_exc=False)
        browser.refresh()
        browser.find_element(By.CSS_SELECTOR, 'button[value="stop"]').click()
        WebDriverWait(browser, 60, poll_frequency=0.1).until(
            lambda _: conn.compute.get_server(form_vm).status == "SHUTOFF")
        browser.refresh()
        assert browser.find_element(By.CSS_SELECTOR, "td.status-SHUTOFF").text == "SHUTOFF"
        assert "lab-key" in browser.find_element(By.TAG_NAME, "main").text
        events = browser.find_elements(By.CSS_SELECTOR, "ul.events li")
        assert any("start" in e.text or "stop" in e.text or "build" in e.text
                   for e in events), [e.text for e in events]
        assert browser.find_element(By.ID, "console-log").text
        assert browser.find_element(By.ID, "waterfall").text == "Waterfalls, one per request"
        bars = browser.find_elements(By.CSS_SELECTOR, ".lane[open] .bar")
        assert bars and all(b.size["width"] >= 1 for b in bars)  # rendered, positioned bars
        # One waterfall per request, the boot first; each step in the CLI's words.
        titles = [h.text for h in browser.find_elements(By.CSS_SELECTOR, ".lane h3")]
        assert titles[0].startswith("server create: ")
        assert any(t.startswith("server stop: ") for t in titles)
        steps = [s.text for s in browser.find_elements(By.CSS_SELECTOR, ".lane strong")]
        # The later requests are one line each, which opens on a click.
        later = browser.find_elements(By.CSS_SELECTOR, "details.lane:not([open])")
        assert later and not later[-1].find_element(By.CSS_SELECTOR, ".step").is_displayed()
        later[-1].find_element(By.TAG_NAME, "summary").click()
        assert later[-1].find_element(By.CSS_SELECTOR, ".step").is_displayed()
        assert "pick a host: filter and weigh the hosts" in steps, steps
        assert not any("compute__" in s for s in steps)
        shot(browser, "server")
        browser.execute_script("document.getElementById('actions-title').scrollIntoView();")
        shot(browser, "server-events")
        # A floating IP for form-vm, allocated and associated on the Floating IPs page.
        browser.get(cloud.url + "/dashboard/floating-ips")
        Select(browser.find_element(By.ID, "fip-network")).select_by_value(external.id)
        submit(browser, 'button[value="allocate"]')
        submit(browser, 'button[value="associate"]')
        assert "form-vm" in browser.find_element(By.CSS_SELECTOR, "[data-associated]").text
        shot(browser, "floating-ips")
        # A static route through the Routers page's form.
        browser.get(cloud.url + "/dashboard/routers")
        browser.find_element(By.ID, f"dst-{router.id}").send_keys("10.200.0.0/24")
        browser.find_element(By.ID, f"hop-{router.id}").send_keys("10.66.0.9")
        submit(browser, 'button[value="add_route"]')
        route = browser.find_element(By.CSS_SELECTOR, '[data-route="10.200.0.0/24"]')
        assert "via 10.66.0.9" in route.text
        shot(browser, "routers")
        # Three more networks make the picture wider than the page: it still shows every
        # network inside its frame, scaled down, with nothing to scroll.
        more = [conn.network.create_network(name=f"lab-wide-{i}") for i in range(3)]
        try:
            browser.get(cloud.url + "/dashboard/networks/topology")
            outside = browser.execute_script("""
                const frame = document.querySelector('figure.topology');
                const box = frame.getBoundingClientRect();
                const bars = [...frame.querySelectorAll('g.network rect')];
                return [bars.length, frame.scrollWidth - frame.clientWidth,
                        bars.filter(r => { const b = r.getBoundingClientRect();
                                           return b.left < box.left || b.right > box.right; })
                            .length];""")
            # five networks of this test's, and whatever other tests of the session cloud
            # left visible to the admin: every one inside the frame
            assert outside[0] >= 5 and outside[1:] == [0, 0], outside
        finally:
            for network in more:
                conn.network.delete_network(network)
        browser.get(cloud.url + "/dashboard/networks/topology")
        svg = browser.find_element(By.CSS_SELECTOR, "svg[role=img]")
        labels = [t.text for t in svg.find_elements(By.TAG_NAME, "text")]
        assert "lab-net" in labels and any("form-vm" in t for t in labels) and \
            any("lab-router" in t for t in labels), labels
        assert any("floating" in t for t in labels), labels
        # No text overlaps a network bar or leaves the picture, as Chromium lays them out.
        overlaps = browser.execute_script("""
            const bars = [...document.querySelectorAll('g.network rect')].map(
                r => r.getBBox());
            const hits = [];
            const svg = document.querySelector('svg[role=img]');
            for (const t of svg.querySelectorAll('text')) {
              const b = t.getBBox();
              if (b.x < 0 || b.x + b.width > svg.width.baseVal.value) hits.push(t.textContent);
              for (const r of bars) {
                if (b.x < r.x + r.width && r.x < b.x + b.width &&
                    b.y < r.y + r.height && r.y < b.y + b.height) hits.push(t.textContent);
              }
            }
            return hits;""")
        assert overlaps == [], overlaps
        shot(browser, "topology")
        browser.get(cloud.url + f"/dashboard/servers/{form_vm}")
        browser.find_element(By.CSS_SELECTOR, 'button[value="delete"]').click()
        wait_for_url(browser, lambda url: url.endswith("/dashboard/servers"))
        WebDriverWait(browser, 60, poll_frequency=0.1).until(
            lambda _: conn.compute.find_server(form_vm) is None)
    finally:
        for s in conn.compute.servers():
            conn.compute.delete_server(s.id)
        deadline = time.monotonic() + 60
        while list(conn.compute.servers()) and time.monotonic() < deadline:
            time.sleep(0.1)
        for fip in conn.network.ips():
            conn.network.delete_ip(fip)
        conn.network.update_router(router.id, routes=[])  # (the local object has none)
        conn.network.remove_interface_from_router(router, subnet=subnet.id)
        conn.network.update_router(router, external_gateway_info={})
        conn.network.delete_router(router)
        conn.network.delete_network(net)
        admin.network.delete_network(external)


def test_upload_an_image_with_a_progress_bar(cloud, browser, shot, tmp_path):
    user = cloud.make_user()
    log_in(browser, cloud.url, user["name"], user["password"])
    browser.find_element(By.LINK_TEXT, "Images").click()
    path = tmp_path / "disk.raw"
    path.write_bytes(os.urandom(8 << 20))
    browser.find_element(By.ID, "image-name").send_keys("uploaded-in-browser")
    browser.find_element(By.ID, "image-file").send_keys(str(path))
    # What the status line says as the bytes go, kept across the page's reload.
    browser.execute_script("""
        var seen = [];
        new MutationObserver(function () {
          seen.push(document.getElementById('upload-status').textContent);
          sessionStorage.setItem('seen', JSON.stringify(seen));
        }).observe(document.getElementById('upload-status'), {childList: true});""")
    browser.find_element(By.CSS_SELECTOR, "#upload-form button[type=submit]").click()
    wait_for_table(browser, "uploaded-in-browser")
    seen = browser.execute_script("return JSON.parse(sessionStorage.getItem('seen'));")
    assert "100% sent" in seen and "Uploaded." in seen, seen
    [image] = [i for i in cloud.user_sdk(user).image.images()
               if i.name == "uploaded-in-browser"]
    assert (image.status, image.size) == ("active", 8 << 20)
    # The bar mid-way, for the docs: a throttled network (1 MB/s) makes it visible.
    browser.set_network_conditions(offline=False, latency=5, download_throughput=1 << 20,
                                   upload_throughput=1 << 20)
    browser.find_element(By.ID, "image-name").send_keys("second")
    browser.find_element(By.ID, "image-file").send_keys(str(path))
    browser.find_element(By.CSS_SELECTOR, "#upload-form button[type=submit]").click()
    bar = browser.find_element(By.ID, "upload-progress")
    WebDriverWait(browser, 30, poll_frequency=0.05).until(
        lambda _: 0.3 < float(bar.get_attribute("value")) / float(bar.get_attribute("max"))
        < 0.95)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", bar)
    shot(browser, "image-upload")
    wait_for_table(browser, "second")


def test_isolation_in_the_browser_and_the_admin_pages(cloud, browser, shot):
    a, b = cloud.make_user(), cloud.make_user()
    conn = cloud.user_sdk(a)
    s = cloud.session()
    image = s.post(cloud.url + "/image/v2/images", json={
        "name": f"dash-iso-{uuid.uuid4().hex[:6]}", "disk_format": "raw",
        "container_format": "bare", "visibility": "public"}).json()
    s.put(cloud.url + f"/image/v2/images/{image['id']}/file", data=b"\0" * 4096,
          headers={"Content-Type": "application/octet-stream"})
    secret = conn.compute.create_server(name="project-a-only", image_id=image["id"],
                                        flavor_id="42", networks="none")
    try:
        log_in(browser, cloud.url, b["name"], b["password"])
        assert "project-a-only" not in browser.find_element(By.TAG_NAME, "main").text
        browser.get(cloud.url + f"/dashboard/servers/{secret.id}")
        assert "project-a-only" not in browser.page_source
        assert browser.find_element(By.CSS_SELECTOR, "[role=alert]").text
        assert not browser.find_elements(By.LINK_TEXT, "Hypervisors")  # no admin menu
        browser.find_element(By.CSS_SELECTOR, "form[action$='/logout'] button").click()
        wait_for_url(browser, lambda u: u.endswith("/dashboard/login"))

        log_in(browser, cloud.url, "admin", cloud.admin_password, "admin")
        browser.find_element(By.LINK_TEXT, "Hypervisors").click()
        hosts = [h["hypervisor_hostname"] for h in s.get(
            cloud.url + "/compute/v2.1/os-hypervisors").json()["hypervisors"]]
        rows = browser.find_elements(By.CSS_SELECTOR, "main tbody th[scope=row]")
        assert {r.text for r in rows} >= set(hosts) and hosts
        shot(browser, "hypervisors")
        browser.find_element(By.LINK_TEXT, "All servers").click()
        main = browser.find_element(By.TAG_NAME, "main").text
        assert "project-a-only" in main and a["project_name"] in main  # names, not ids
        shot(browser, "admin-servers")
        # Project a's quotas, edited through the admin's Quotas page.
        browser.find_element(By.LINK_TEXT, "Quotas").click()
        Select(browser.find_element(By.ID, "quota-project-pick")).select_by_value(
            a["project_id"])
        submit(browser, "form[method=get] button")
        field = browser.find_element(By.ID, "quota-compute.instances")
        field.clear()
        field.send_keys("4")
        submit(browser, "form[aria-label='Edit quotas'] button")
        assert browser.find_element(By.CSS_SELECTOR, "[role=status]").text == "Quotas saved."
        assert s.get(cloud.url + f"/compute/v2.1/os-quota-sets/{a['project_id']}").json()[
            "quota_set"]["instances"] == 4
        shot(browser, "quotas")
        browser.find_element(By.LINK_TEXT, "Flavors").click()
        browser.find_element(By.ID, "flavor-name").send_keys("browser-flavor")
        browser.find_element(By.ID, "flavor-vcpus").clear()
        browser.find_element(By.ID, "flavor-vcpus").send_keys("lots")
        browser.find_element(By.CSS_SELECTOR, 'button[value="create"]').click()
        assert "vcpus" in browser.find_element(By.CSS_SELECTOR, "[role=alert]").text.lower()
        shot(browser, "flavors")
        browser.find_element(By.LINK_TEXT, "Services").click()
        shot(browser, "services")
    finally:
        conn.compute.delete_server(secret.id)
