"""What the dashboard's browser tests share: headless Chromium (Debian's chromium and
chromium-driver, through Selenium) and the steps of using the pages in it. Import it after
``pytest.importorskip("selenium.webdriver")``: it needs selenium."""
from __future__ import annotations

import contextlib
import os
import shutil

import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait


def find_program(name: str) -> str | None:
    path = shutil.which(name) or f"/usr/bin/{name}"
    return path if os.path.exists(path) else None


@contextlib.contextmanager
def chromium(tmp_path):
    """Headless Chromium with a profile in ``tmp_path`` (the test is skipped where there
    is none); it quits afterwards."""
    # Looked for when a test runs, not at collection: a chromium installed while a long
    # run is under way is used, and a skip's reason says what is missing now.
    chromium, chromedriver = find_program("chromium"), find_program("chromedriver")
    if chromium is None or chromedriver is None:
        missing = " and ".join(n for n, p in (("chromium", chromium),
                                             ("chromedriver", chromedriver)) if p is None)
        pytest.skip(f"{missing} not found (Debian: apt-get install chromium "
                    "chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,900"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=webdriver.ChromeService(chromedriver), options=options)
    driver.set_page_load_timeout(60)
    driver.implicitly_wait(10)  # a click's navigation may still be loading when find runs
    try:
        yield driver
    finally:
        driver.quit()


def log_in(browser, url, name, password, project=None):
    browser.get(url + "/dashboard/login")
    browser.find_element(By.ID, "username").send_keys(name)
    browser.find_element(By.ID, "password").send_keys(password)
    if project:
        browser.find_element(By.ID, "project").send_keys(project)
    browser.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    wait_for_url(browser, lambda u: u.endswith("/dashboard/servers"))


def wait_for_table(browser, text: str) -> None:
    """Until the (reloaded) page's table shows ``text``; the old page's table may go stale
    under our feet while the new one loads (as a stale reference, or as chromedriver's
    "Node with given id does not belong to the document" when the swap is mid-read)."""
    def shows(b) -> bool:
        try:
            return text in b.find_element(By.TAG_NAME, "table").text
        except WebDriverException as error:
            if "does not belong to the document" in str(error):
                return False
            raise
    WebDriverWait(browser, 60, poll_frequency=0.1,
                  ignored_exceptions=(StaleElementReferenceException,)).until(shows)


def submit(browser, css: str) -> None:
    """Click a form's button and wait for the page it leads to: until then the old page's
    elements (the same ids) would still be found."""
    old = browser.find_element(By.TAG_NAME, "html")
    browser.find_element(By.CSS_SELECTOR, css).click()
    WebDriverWait(browser, 60, poll_frequency=0.05).until(expected_conditions.staleness_of(old))


def wait_for_url(browser, test) -> str:
    """A click returns before its navigation ends: wait for the URL it leads to."""
    WebDriverWait(browser, 30, poll_frequency=0.05).until(lambda b: test(b.current_url))
    return browser.current_url
