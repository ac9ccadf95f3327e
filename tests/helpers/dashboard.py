"""What the dashboard's tests over HTTP share: logging in through the form (with its CSRF
token) and reading a page's table rows and alert."""
from __future__ import annotations

import html
import re

import httpx


def csrf_token(page: str) -> str:
    """The CSRF token of a page's form."""
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


def login(cloud, name, password, project=None) -> httpx.Client:
    """A client logged in to the dashboard as ``name`` (in ``project``: scoped to it)."""
    client = httpx.Client(base_url=cloud.url, timeout=60)
    page = client.get("/dashboard/login")
    r = client.post("/dashboard/login", data={
        "csrf_token": csrf_token(page.text), "domain": "Default", "username": name,
        "password": password, **({"project": project} if project else {})})
    assert r.status_code == 303, r.text
    return client


def table_row(page: str, start: str) -> str:
    """The table row of ``page`` from ``start`` to its end."""
    row = page[page.index(start):]
    return row[:row.index("</tr>")]


def alert_text(page: str) -> str:
    """The text of the page's alert (what the dashboard shows of an API's refusal)."""
    return html.unescape(page.split('role="alert">')[1].split("</p>")[0])
