"""What every dashboard page shares: the URL prefix, templates rendered with the headers
every page carries, the message inside an API's error, posted forms."""
from __future__ import annotations

import hmac
import html
import importlib.resources
import re
import urllib.parse

import httpx
import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse

PREFIX = "/dashboard"
API_TIMEOUT = 30.0  # seconds; a stuck API call ends as an error page, not a hang

TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("pocketstack.dashboard", "templates"),
    autoescape=jinja2.select_autoescape(["html"]), trim_blocks=True, lstrip_blocks=True)


# The services' catalog types and URL paths the pages call.
COMPUTE = ("compute", "/compute/v2.1")
NETWORK = ("network", "/network")
LOADBALANCER = ("load-balancer", "/load-balancer")
KEYMANAGER = ("key-manager", "/key-manager")
DNS = ("dns", "/dns")
IMAGE = ("image", "/image")
CONTROL = ("pocketstack", "/pocketstack")
PAGE = 50  # rows a page; a long list goes on with ?marker=<last id>
SERVER_CHOICES = 200  # servers offered in a menu (attach a volume to ...)


def q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def item(collection_url: str, item_id: str) -> str | None:
    """The URL of one item; None for an empty id, whose URL would be the collection's
    (DELETE /v1/faults/ must not reset every rule)."""
    return f"{collection_url}/{q(item_id)}" if item_id.strip() else None


def number(text: str):
    """A whole number as a number; anything else as typed, for the API to judge and name.
    (ASCII only: "²" and "１" are digits to str.isdigit but not to int.)"""
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() else text


# The dashboard's own scripts, read once: name -> bytes (no other file is served).
STATIC = {name: (importlib.resources.files("pocketstack.dashboard") / "static" / name)
           .read_bytes() for name in ("live.js", "upload.js")}


def render(name: str, status: int = 200, **context) -> HTMLResponse:
    body = TEMPLATES.get_template(name).render(prefix=PREFIX, **context)
    return HTMLResponse(body, status, headers={
        "Cache-Control": "no-store",
        # Everything is served from here: no CDN, no inline script, no framing.
        "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; "
                                   "frame-ancestors 'none'; form-action 'self'",
        "X-Content-Type-Options": "nosniff"})


def api_error(r: httpx.Response) -> str:
    """The message inside any service's OpenStack error body, else the status line."""
    try:
        body = r.json()
    except ValueError:
        return _text_error(r)
    if isinstance(body, dict):
        for value in body.values():
            if isinstance(value, dict) and value.get("message"):
                return str(value["message"])
        if body.get("message"):
            return str(body["message"])
        if body.get("faultstring"):  # Octavia's (WSME's) fault body
            return str(body["faultstring"])
        if body.get("description"):  # Barbican's (code, title, description)
            return str(body["description"])
    return f"{r.status_code} {r.reason_phrase}"


def _text_error(r: httpx.Response) -> str:
    """Swift's refusal: its reason as plain text, or swob's HTML page (its <p>)."""
    text = r.text.strip()
    if r.headers.get("content-type", "").startswith("text/plain") and text:
        return text[:500]
    found = re.search(r"<p>(.*?)</p>", text, re.DOTALL)
    if found and found.group(1).strip():
        return html.unescape(found.group(1).strip())[:500]
    return f"{r.status_code} {r.reason_phrase}"


async def form(request: Request) -> dict[str, str]:
    """An urlencoded form (what our forms post); anything else reads as an empty form."""
    if not request.headers.get("content-type", "").startswith(
            "application/x-www-form-urlencoded"):
        return {}
    body = await request.body()
    if len(body) > 64 * 1024:
        return {}
    pairs = urllib.parse.parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
    return dict(pairs)


async def form_values(request: Request, name: str) -> list[str]:
    """Every value of a repeated field (a multiple select) of the posted form."""
    if not request.headers.get("content-type", "").startswith(
            "application/x-www-form-urlencoded"):
        return []
    body = await request.body()  # read once by form; Starlette keeps it
    if len(body) > 64 * 1024:
        return []
    return [v for k, v in urllib.parse.parse_qsl(body.decode("utf-8", "replace"))
            if k == name and v]


def same(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(a, b)
