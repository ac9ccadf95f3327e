"""The object storage pages in headless Chromium: create a container through the menu,
open it, upload a file into a pseudo-folder with the progress bar, and make the container
public (then anyone reads the object without a token)."""
from __future__ import annotations

import os

import httpx
import pytest

pytest.importorskip("selenium.webdriver", reason="selenium is not installed")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from helpers.dashboard_browser import log_in, submit, wait_for_table  # noqa: E402


def test_upload_an_object_with_a_progress_bar_and_publish_it(cloud, browser, tmp_path):
    user = cloud.make_user()
    log_in(browser, cloud.url, user["name"], user["password"])
    browser.find_element(By.LINK_TEXT, "Containers").click()
    browser.find_element(By.ID, "container-name").send_keys("photos")
    submit(browser, "button[value=create]")
    browser.find_element(By.LINK_TEXT, "photos").click()
    data = os.urandom(4 << 20)
    path = tmp_path / "cat.bin"
    path.write_bytes(data)
    browser.find_element(By.ID, "object-file").send_keys(str(path))
    browser.find_element(By.ID, "object-name").send_keys("2026/cat.bin")
    browser.execute_script("""
        var seen = [];
        new MutationObserver(function () {
          seen.push(document.getElementById('upload-status').textContent);
          sessionStorage.setItem('seen', JSON.stringify(seen));
        }).observe(document.getElementById('upload-status'), {childList: true});""")
    browser.find_element(By.CSS_SELECTOR, "#object-upload-form button[type=submit]").click()
    wait_for_table(browser, "cat.bin")  # the folder's page, where it went
    assert browser.current_url.endswith("/dashboard/containers/photos?prefix=2026%2F")
    seen = browser.execute_script("return JSON.parse(sessionStorage.getItem('seen'));")
    assert "100% sent" in seen and "Uploaded." in seen, seen
    account = cloud.user_session(user).get_endpoint(service_type="object-store",
                                                     interface="public")
    assert httpx.get(f"{account}/photos/2026/cat.bin").status_code == 401
    submit(browser, "button[value=public]")
    WebDriverWait(browser, 30, poll_frequency=0.05).until(
        lambda b: b.find_element(By.CSS_SELECTOR, "[data-access]").text.startswith("public"))
    anonymous = httpx.get(f"{account}/photos/2026/cat.bin")
    assert anonymous.status_code == 200 and anonymous.content == data
