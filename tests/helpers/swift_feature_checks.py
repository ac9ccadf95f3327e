"""The Swift middleware features newer than the basic API, checked as a user of
python-swiftclient or of plain HTTP sees them, on each object-store backend (run with the
checks of swift_client_checks.py): object versioning (``X-Versions-Enabled``,
``?versions``, ``?version-id``), CORS (preflight OPTIONS and ``Access-Control-*`` on a
container whose metadata allows an origin) and static web sites (``Web-Index``,
``Web-Listings``, ``Web-Error``)."""
from __future__ import annotations

import httpx

from helpers.swift_client_checks import Account, _name

DELETE_MARKER_TYPE = "application/x-deleted;swift_versions_deleted=1"
ORIGIN = "https://app.example"


# --- object versioning ------------------------------------------------------------------


def _versioned(a: Account) -> str:
    c = _name("vers")
    a.swift.put_container(c)
    a.swift.post_container(c, headers={"X-Versions-Enabled": "true"})
    return c


def _put(a: Account, c: str, name: str, body: bytes) -> str | None:
    answer: dict = {}
    a.swift.put_object(c, name, body, response_dict=answer)
    return answer["headers"].get("x-object-version-id")


def _versions(a: Account, c: str, **params) -> list[dict]:
    r = httpx.get(f"{a.url}/{c}", headers=a.headers,
                  params={"versions": "", "format": "json", **params})
    assert r.status_code == 200, (r.status_code, r.text)
    return r.json()


def _get(a: Account, c: str, name: str, **params) -> httpx.Response:
    return httpx.get(f"{a.url}/{c}/{name}", headers=a.headers, params=params)


def check_object_versioning_keeps_overwritten_versions(cloud):
    a = Account(cloud)
    c = _versioned(a)
    enabled = a.swift.head_container(c).get("x-versions-enabled")
    assert enabled == "True", f"HEAD of the container: X-Versions-Enabled {enabled!r}"
    v1 = _put(a, c, "doc", b"one")
    v2 = _put(a, c, "doc", b"two!")
    assert v1 and v2 and v1 != v2, f"PUTs answered X-Object-Version-Id {v1!r}, {v2!r}"
    r = _get(a, c, "doc")
    assert r.content == b"two!" and r.headers["x-object-version-id"] == v2
    r = _get(a, c, "doc", **{"version-id": v1})
    assert r.status_code == 200 and r.content == b"one", (r.status_code, r.content)
    assert r.headers["x-object-version-id"] == v1
    assert [(e["name"], e["version_id"], e["is_latest"]) for e in _versions(a, c)] == [
        ("doc", v2, True), ("doc", v1, False)]
    assert [o["name"] for o in a.swift.get_container(c)[1]] == ["doc"]  # current only


def check_object_versioning_delete_marker_and_restore(cloud):
    a = Account(cloud)
    c = _versioned(a)
    v1 = _put(a, c, "doc", b"one")
    v2 = _put(a, c, "doc", b"two!")
    assert v1 and v2, f"PUTs answered X-Object-Version-Id {v1!r}, {v2!r}"
    answer: dict = {}
    a.swift.delete_object(c, "doc", response_dict=answer)
    marker = answer["headers"].get("x-object-version-id")
    assert marker, "the DELETE answered no X-Object-Version-Id (no delete marker)"
    assert _get(a, c, "doc").status_code == 404
    assert a.swift.get_container(c)[1] == []
    listed = _versions(a, c)
    assert [(e["version_id"], e["is_latest"], e["content_type"] == DELETE_MARKER_TYPE)
            for e in listed] == [(marker, True, True), (v2, False, False), (v1, False, False)]
    assert _get(a, c, "doc", **{"version-id": v1}).content == b"one"
    # a zero-byte PUT ?version-id makes that version current again
    r = httpx.put(f"{a.url}/{c}/doc", params={"version-id": v1}, content=b"",
                  headers=a.headers)
    assert r.status_code == 201 and r.headers["x-object-version-id"] == v1
    assert _get(a, c, "doc").content == b"one"
    # DELETE ?version-id removes that version alone
    r = httpx.delete(f"{a.url}/{c}/doc", params={"version-id": v2}, headers=a.headers)
    assert r.status_code == 204 and r.headers["x-object-current-version-id"] == v1
    assert _get(a, c, "doc", **{"version-id": v2}).status_code == 404
    assert _get(a, c, "doc").content == b"one"


def check_object_versioning_suspended_writes_the_null_version(cloud):
    a = Account(cloud)
    c = _versioned(a)
    v1 = _put(a, c, "doc", b"versioned")
    assert v1, "the PUT answered no X-Object-Version-Id"
    a.swift.post_container(c, headers={"X-Versions-Enabled": "false"})
    assert a.swift.head_container(c)["x-versions-enabled"] == "False"
    assert _put(a, c, "doc", b"suspended") is None
    r = _get(a, c, "doc", **{"version-id": "null"})
    assert r.content == b"suspended" and r.headers["x-object-version-id"] == "null"
    assert _get(a, c, "doc", **{"version-id": v1}).content == b"versioned"
    assert [e["version_id"] for e in _versions(a, c)] == ["null", v1]


def check_version_id_on_a_container_never_versioned_is_400(cloud):
    """A request for one version where there are none is refused, and changes nothing."""
    a = Account(cloud)
    c = _name("plain")
    a.swift.put_container(c)
    a.swift.put_object(c, "doc", b"current")
    url = f"{a.url}/{c}/doc"
    r = httpx.delete(url, params={"version-id": "1234.5"}, headers=a.headers)
    assert r.status_code == 400, (r.status_code, r.text)
    r = httpx.put(url, params={"version-id": "1234.5"}, content=b"", headers=a.headers)
    assert r.status_code == 400, (r.status_code, r.text)
    assert a.swift.get_object(c, "doc")[1] == b"current"


# --- CORS -------------------------------------------------------------------------------


def _cors_container(a: Account, allow: str) -> str:
    c = _name("cors")
    a.swift.put_container(c, headers={
        "X-Container-Meta-Access-Control-Allow-Origin": allow,
        "X-Container-Meta-Access-Control-Max-Age": "600",
        "X-Container-Meta-Access-Control-Expose-Headers": "X-Custom"})
    a.swift.put_object(c, "obj", b"hello", headers={"X-Object-Meta-Color": "blue"})
    return c


def _preflight(url: str, origin: str, method: str = "GET", **headers) -> httpx.Response:
    return httpx.options(url, headers={"Origin": origin,
                                       "Access-Control-Request-Method": method, **headers})


def check_cors_preflight_allows_a_listed_origin(cloud):
    a = Account(cloud)
    c = _cors_container(a, f"https://other.example {ORIGIN}")
    r = _preflight(f"{a.url}/{c}/obj", ORIGIN, "PUT")
    assert r.status_code == 200, (r.status_code, dict(r.headers))
    assert r.headers.get("access-control-allow-origin") == ORIGIN, dict(r.headers)
    assert "PUT" in r.headers["access-control-allow-methods"]
    assert r.headers.get("access-control-max-age") == "600", dict(r.headers)


def check_cors_preflight_allows_the_requested_headers(cloud):
    """A browser's preflight for an API call names X-Auth-Token: swift allows whatever
    headers a preflight for an allowed origin asks for."""
    a = Account(cloud)
    c = _cors_container(a, ORIGIN)
    r = _preflight(f"{a.url}/{c}/obj", ORIGIN, "PUT",
                   **{"Access-Control-Request-Headers": "x-auth-token, content-type"})
    assert r.status_code == 200, (r.status_code, r.text)
    allowed = {h.strip().lower() for h in r.headers["access-control-allow-headers"].split(",")}
    assert {"x-auth-token", "content-type"} <= allowed


def check_cors_options_without_origin_lists_the_methods(cloud):
    a = Account(cloud)
    c = _cors_container(a, ORIGIN)
    r = httpx.options(f"{a.url}/{c}/obj")
    assert r.status_code == 200, (r.status_code, r.text)
    assert {"GET", "PUT", "DELETE"} <= {m.strip() for m in r.headers["allow"].split(",")}


def check_cors_preflight_refuses_an_origin_not_listed(cloud):
    a = Account(cloud)
    c = _cors_container(a, ORIGIN)
    r = _preflight(f"{a.url}/{c}/obj", "https://evil.example")
    assert r.status_code == 401, (r.status_code, dict(r.headers))
    assert "access-control-allow-origin" not in r.headers
    plain = _name("plain")
    a.swift.put_container(plain)
    r = _preflight(f"{a.url}/{plain}/obj", ORIGIN)  # no CORS settings: no origin allowed
    assert r.status_code == 401, (r.status_code, dict(r.headers))


def check_cors_headers_on_answers_to_an_allowed_origin(cloud):
    a = Account(cloud)
    c = _cors_container(a, ORIGIN)
    r = httpx.get(f"{a.url}/{c}/obj", headers={**a.headers, "Origin": ORIGIN})
    assert r.status_code == 200 and r.content == b"hello"
    assert r.headers.get("access-control-allow-origin") == ORIGIN, dict(r.headers)
    exposed = {h.strip().lower() for h in
               r.headers.get("access-control-expose-headers", "").split(",")}
    assert {"etag", "x-object-meta-color", "x-custom"} <= exposed, exposed
    r = httpx.get(f"{a.url}/{c}/obj", headers={**a.headers, "Origin": "https://evil.example"})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers


def check_cors_any_origin(cloud):
    a = Account(cloud)
    c = _cors_container(a, "*")
    r = _preflight(f"{a.url}/{c}/obj", ORIGIN)
    assert r.status_code == 200, (r.status_code, dict(r.headers))
    assert r.headers.get("access-control-allow-origin") in ("*", ORIGIN), dict(r.headers)
    r = httpx.head(f"{a.url}/{c}/obj", headers={**a.headers, "Origin": ORIGIN})
    assert r.headers.get("access-control-allow-origin") == "*", dict(r.headers)


# --- static web sites -------------------------------------------------------------------


def _site(a: Account) -> str:
    c = _name("web")
    a.swift.put_container(c, headers={
        "X-Container-Read": ".r:*,.rlistings",
        "X-Container-Meta-Web-Index": "index.html",
        "X-Container-Meta-Web-Error": "error.html",
        "X-Container-Meta-Web-Listings": "true"})
    for name, body, kind in (("index.html", b"<h1>home</h1>", "text/html"),
                             ("404error.html", b"custom 404", "text/html"),
                             ("docs/index.html", b"docs home", "text/html"),
                             ("files/a.txt", b"a" * 2048, "text/plain"),
                             ("files/sub/b.txt", b"b", "text/plain")):
        a.swift.put_object(c, name, body, content_type=kind)
    return c


def check_static_web_index_of_the_container(cloud):
    a = Account(cloud)
    base = f"{a.url}/{_site(a)}"
    r = httpx.get(base)
    assert r.status_code == 301 and r.headers["location"].endswith("/"), r.status_code
    r = httpx.get(base + "/")
    assert r.status_code == 200 and r.content == b"<h1>home</h1>", (r.status_code, r.text)
    assert httpx.get(base + "/files/a.txt").content == b"a" * 2048


def check_static_web_index_of_a_subdirectory(cloud):
    a = Account(cloud)
    base = f"{a.url}/{_site(a)}"
    r = httpx.get(base + "/docs/")
    assert r.status_code == 200 and r.content == b"docs home", (r.status_code, r.text)
    r = httpx.get(base + "/docs")
    assert r.status_code == 301 and r.headers["location"].endswith("/docs/"), \
        (r.status_code, r.text)


def check_static_web_listing_of_the_container(cloud):
    a = Account(cloud)
    c = _site(a)
    a.swift.delete_object(c, "index.html")
    r = httpx.get(f"{a.url}/{c}/")
    assert r.status_code == 200, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("text/html"), r.headers["content-type"]
    assert "docs/</a>" in r.text and "files/</a>" in r.text, r.text  # subdirectories


def check_static_web_listing_of_a_subdirectory(cloud):
    a = Account(cloud)
    base = f"{a.url}/{_site(a)}"
    r = httpx.get(base + "/files/")
    assert r.status_code == 200, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("text/html"), r.headers["content-type"]
    assert "a.txt" in r.text and "sub/" in r.text, r.text


def check_static_web_error_page(cloud):
    a = Account(cloud)
    base = f"{a.url}/{_site(a)}"
    r = httpx.get(base + "/nowhere")
    assert r.status_code == 404 and r.content == b"custom 404", (r.status_code, r.text)


def check_static_web_token_holder_gets_the_api_unless_web_mode(cloud):
    a = Account(cloud)
    base = f"{a.url}/{_site(a)}"
    r = httpx.get(base + "/", headers=a.headers)
    assert r.status_code == 200 and "index.html" in r.text.splitlines(), r.text
    r = httpx.get(base + "/", headers={**a.headers, "X-Web-Mode": "true"})
    assert r.content == b"<h1>home</h1>", (r.status_code, r.text)


CHECKS = {name.removeprefix("check_"): fn for name, fn in dict(globals()).items()
          if name.startswith("check_")}
