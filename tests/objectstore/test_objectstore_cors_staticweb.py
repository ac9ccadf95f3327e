"""CORS (swift's proxy: OPTIONS preflight and Access-Control-* headers on container and
object answers) and static web sites (swift's staticweb) through the real HTTP API, the
container set up with python-swiftclient as a user would."""
from __future__ import annotations

import http.client
import urllib.parse

import requests

ORIGIN = "https://app.example"


def test_cors_preflight_and_actual_requests(owner, container):
    swift = owner.swift
    url = f"{owner.url}/{container}/obj"
    swift.put_object(container, "obj", b"hello", headers={"X-Object-Meta-Color": "blue"})

    # OPTIONS needs no token; without an Origin it lists the methods
    r = requests.options(url)
    assert r.status_code == 200 and "GET" in r.headers["allow"] and "COPY" in r.headers["allow"]
    # a preflight for a container without CORS settings: 401
    r = requests.options(url, headers={"Origin": ORIGIN,
                                       "Access-Control-Request-Method": "GET"})
    assert r.status_code == 401 and "access-control-allow-origin" not in r.headers

    swift.post_container(container, {
        "X-Container-Meta-Access-Control-Allow-Origin": f"https://other.example {ORIGIN}",
        "X-Container-Meta-Access-Control-Max-Age": "600",
        "X-Container-Meta-Access-Control-Expose-Headers": "X-Custom"})
    r = requests.options(url, headers={"Origin": ORIGIN,
                                       "Access-Control-Request-Method": "PUT",
                                       "Access-Control-Request-Headers": "x-auth-token, "
                                                                         "content-type"})
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == ORIGIN
    assert r.headers["access-control-max-age"] == "600"
    assert "PUT" in r.headers["access-control-allow-methods"]
    assert r.headers["access-control-allow-headers"] == "x-auth-token, content-type"
    assert r.headers["vary"] == "Origin, Access-Control-Request-Headers"
    # a method the resource has not, or an origin not listed: 401
    assert requests.options(url, headers={"Origin": ORIGIN, "Access-Control-Request-Method":
                                          "PATCH"}).status_code == 401
    assert requests.options(url, headers={"Origin": "https://evil.example",
                                          "Access-Control-Request-Method":
                                          "GET"}).status_code == 401

    # the actual request: the origin allowed, the metadata headers exposed
    r = requests.get(url, headers={**owner.headers, "Origin": ORIGIN})
    assert r.status_code == 200 and r.content == b"hello"
    assert r.headers["access-control-allow-origin"] == ORIGIN
    exposed = r.headers["access-control-expose-headers"].split(", ")
    assert {"etag", "x-object-meta-color", "x-custom", "x-trans-id"} <= set(exposed)
    assert r.headers["vary"] == "Origin"
    # errors carry them too; an origin not allowed gets none (strict mode)
    r = requests.get(url + "-missing", headers={**owner.headers, "Origin": ORIGIN})
    assert r.status_code == 404 and r.headers["access-control-allow-origin"] == ORIGIN
    r = requests.get(url, headers={**owner.headers, "Origin": "https://evil.example"})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers

    swift.post_container(container, {"X-Container-Meta-Access-Control-Allow-Origin": "*"})
    r = requests.head(f"{owner.url}/{container}", headers={**owner.headers, "Origin": ORIGIN})
    assert r.headers["access-control-allow-origin"] == "*" and "vary" not in r.headers


def _site(owner, container, listings=True):
    swift = owner.swift
    swift.post_container(container, {
        "X-Container-Read": ".r:*,.rlistings" if listings else ".r:*",
        "X-Container-Meta-Web-Index": "index.html",
        "X-Container-Meta-Web-Error": "error.html",
        **({"X-Container-Meta-Web-Listings": "true",
            "X-Container-Meta-Web-Listings-CSS": "style.css"} if listings else {})})
    swift.put_object(container, "index.html", b"<h1>home</h1>", content_type="text/html")
    swift.put_object(container, "404error.html", b"custom 404", content_type="text/html")
    swift.put_object(container, "docs/index.html", b"docs home", content_type="text/html")
    swift.put_object(container, "files/a.txt", b"a" * 2048, content_type="text/plain")
    swift.put_object(container, "files/sub/b.txt", b"b", content_type="text/plain")
    swift.put_object(container, "marker", b"", content_type="application/directory")
    swift.put_object(container, "marker/inner.txt", b"x", content_type="text/plain")


def test_static_web_index_redirects_listings_and_error_pages(owner, container):
    _site(owner, container)
    base = f"{owner.url}/{container}"
    assert "staticweb" in owner.swift.get_capabilities()

    r = requests.get(base, allow_redirects=False)  # anonymous
    assert r.status_code == 301 and r.headers["location"].endswith(f"/{container}/")
    r = requests.get(base + "/")
    assert r.status_code == 200 and r.content == b"<h1>home</h1>"
    r = requests.get(base + "/docs", allow_redirects=False)
    assert r.status_code == 301 and r.headers["location"].endswith("/docs/")
    assert requests.get(base + "/docs/").content == b"docs home"
    # a path without an index: the HTML listing
    r = requests.get(base + "/files/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "<title>Listing of /v1/" in r.text and f"/{container}/files/</title>" in r.text
    assert '<a href="./a%2Etxt">a.txt</a>' in r.text and '<td class="colsize">2Ki</td>' in r.text
    assert '<a href="./sub/">sub/</a>' in r.text and '<a href="../">../</a>' in r.text
    assert 'href="../style.css"' in r.text
    assert requests.head(base + "/files/").status_code == 200
    # a directory marker object is the directory
    r = requests.get(base + "/marker/")
    assert r.status_code == 200 and "inner.txt" in r.text
    # a missing path: the container's 404 page, status kept
    r = requests.get(base + "/nowhere")
    assert r.status_code == 404 and r.content == b"custom 404"
    r = requests.get(base + "/files/a.txt")
    assert r.status_code == 200 and r.content == b"a" * 2048
    # a token holder gets the plain API, unless it asks for web mode
    r = requests.get(base + "/", headers=owner.headers)
    assert r.status_code == 200 and "index.html" in r.text.splitlines()
    r = requests.get(base + "/", headers={**owner.headers, "X-Web-Mode": "true"})
    assert r.content == b"<h1>home</h1>"


def test_static_web_listing_disabled_and_listing_acl(owner, container):
    _site(owner, container, listings=False)
    base = f"{owner.url}/{container}"
    # objects still served; the container's index needs the listing ACL (.rlistings)
    assert requests.get(base + "/files/a.txt").status_code == 200
    r = requests.get(base + "/")
    assert r.status_code == 401
    r = requests.get(base + "/files/")
    assert r.status_code == 404 and r.content == b"custom 404"
    owner.swift.post_container(container, {"X-Container-Meta-Web-Error": ""})
    r = requests.get(base + "/files/")
    assert r.status_code == 404 and "Web Listing Disabled" in r.text


def test_odd_cors_and_static_web_requests_get_4xx_not_500(owner, container):
    base = owner.url.split("/v1/")[0]
    parsed = urllib.parse.urlparse(owner.url)
    # OPTIONS of /info, the account, a container name over the limit, a missing container
    assert requests.options(base + "/info").headers["allow"] == "HEAD, GET, OPTIONS"
    assert requests.options(owner.url).status_code == 200
    preflight = {"Origin": ORIGIN, "Access-Control-Request-Method": "GET"}
    assert requests.options(f"{owner.url}/{'c' * 300}/o", headers=preflight).status_code == 401
    assert requests.options(f"{owner.url}/nope-{container}", headers=preflight
                            ).status_code == 401
    # a path that is not UTF-8 or holds a NUL: swift's 412, whatever the method
    for raw in ("/%FF", "/%00"):
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
        conn.request("OPTIONS", f"{parsed.path}/{container}{raw}", headers=preflight)
        assert conn.getresponse().status == 412
        conn.close()
    # a static site with names that need quoting
    _site(owner, container)
    owner.swift.put_object(container, "dir é/a&b <c>.txt", b"odd", content_type="text/plain")
    r = requests.get(f"{owner.url}/{container}/dir%20%C3%A9/")
    assert r.status_code == 200 and "a&amp;b &lt;c&gt;.txt" in r.text
    assert './a%26b%20%3Cc%3E%2Etxt' in r.text
    assert requests.get(f"{owner.url}/{container}/dir%20%C3%A9/a%26b%20%3Cc%3E.txt"
                        ).content == b"odd"
    r = requests.head(f"{owner.url}/{container}/nowhere/")
    assert r.status_code == 404 and r.content == b""
