"""The dashboard in headless Chromium (Debian's chromium + chromium-driver, via Selenium):
log in through the form and open a server's boot waterfall."""
from __future__ import annotations

import os
import shutil
import time
import uuid

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
    pytest.skip("Debian's chromium and chromium-driver are not installed",
                allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.select import Select  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture
def browser(tmp_path):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,900"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=webdriver.ChromeService(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    driver.implicitly_wait(10)  # a click's navigation may still be loading when find runs
    try:
        yield driver
    finally:
        driver.quit()


def _wait_for_url(browser, test) -> str:
    """A click returns before its navigation ends: wait for the URL it leads to."""
    WebDriverWait(browser, 30, poll_frequency=0.05).until(lambda b: test(b.current_url))
    return browser.current_url


def test_log_in_and_open_the_boot_waterfall(cloud, browser, tmp_path):
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
        _wait_for_url(browser, lambda url: url.endswith("/dashboard/servers"))
        browser.find_element(By.LINK_TEXT, "browser-vm").click()
        assert browser.find_element(By.ID, "waterfall").text == "Boot waterfall"
        browser.find_element(By.LINK_TEXT, "Servers").click()

        # Launch through the form; the list shows it go ACTIVE without a reload.
        browser.find_element(By.LINK_TEXT, "Launch").click()
        browser.find_element(By.ID, "name").send_keys("form-vm")
        Select(browser.find_element(By.ID, "image")).select_by_value(image["id"])
        Select(browser.find_element(By.ID, "flavor")).select_by_value("42")
        browser.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
        form_vm = _wait_for_url(browser, lambda url: "/launch" not in url).rsplit("/", 1)[1]
        browser.get(cloud.url + "/dashboard/servers")
        browser.execute_script("window.stillTheSamePage = true;")
        cell = browser.find_element(By.CSS_SELECTOR, f'[data-server-status="{form_vm}"]')
        WebDriverWait(browser, 60, poll_frequency=0.1).until(
            lambda _: cell.text in ("ACTIVE", "ERROR"))
        assert cell.text == "ACTIVE"
        conn.compute.stop_server(form_vm)  # a change the page can only learn by polling
        WebDriverWait(browser, 60, poll_frequency=0.1).until(lambda _: cell.text == "SHUTOFF")
        assert browser.execute_script("return window.stillTheSamePage === true;")
        browser.find_element(By.LINK_TEXT, "form-vm").click()
        assert browser.find_element(By.ID, "waterfall").text == "Boot waterfall"
        bars = browser.find_elements(By.CSS_SELECTOR, ".lane .bar")
        assert bars and all(b.size["width"] >= 1 for b in bars)  # rendered, positioned bars
        lanes = [h.text for h in browser.find_elements(By.CSS_SELECTOR, ".lane h3")]
        assert "api" in lanes and "scheduler" in lanes
        browser.save_screenshot(str(tmp_path / "waterfall.png"))
        shots = os.environ.get("POCKETSTACK_SCREENSHOTS")
        if shots:  # keep one for docs when asked
            os.makedirs(shots, exist_ok=True)
            browser.save_screenshot(os.path.join(shots, "dashboard-waterfall.png"))
        browser.find_element(By.CSS_SELECTOR, 'button[value="delete"]').click()
        _wait_for_url(browser, lambda url: url.endswith("/dashboard/servers"))
    finally:
        for s in conn.compute.servers():
            conn.compute.delete_server(s.id)
