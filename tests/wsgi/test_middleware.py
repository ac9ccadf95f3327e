"""The middleware pipeline every service sits behind: request ids, fault bodies, body size
limit, 404/405, HEAD.

Over real HTTP against the running cloud where a real request can cause the case. The
per-service cases use the real pipeline (``app.pipeline``) of each service with a test-only
route table (a failing handler: a real bug cannot be caused on demand), driven through
httpx's ASGI transport.
"""
from __future__ import annotations

import logging
import re
import uuid

import httpx
import pytest

from pocketstack.common import config, exceptions
from pocketstack.wsgi import app as wsgi_app
from pocketstack.wsgi import routing

REQUEST_ID = re.compile(r"^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _assert_request_id(response: httpx.Response) -> str:
    request_id = response.headers.get("x-openstack-request-id", "")
    assert REQUEST_ID.match(request_id), (response.status_code, request_id)
    return request_id


def _keystone_error(response: httpx.Response, code: int) -> dict:
    assert response.status_code == code, response.text
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == code
    assert error["title"] and error["message"]
    return error


# --- over HTTP, against the real cloud -----------------------------------------------------

@pytest.fixture(scope="module")
def http(cloud):
    with httpx.Client(base_url=cloud.url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def token(cloud):
    return cloud.session().get_token()


def test_every_kind_of_response_carries_a_fresh_request_id(http, token):
    responses = [
        http.get("/identity/v3"),                                         # 200
        http.get("/identity"),                                            # 300
        http.get("/identity/v3/auth/projects"),                           # 401, no token
        http.get("/identity/v3/auth/projects", headers={"X-Auth-Token": "x"}),  # 401
        http.get("/identity/v3/no-such-thing", headers={"X-Auth-Token": token}),  # 404
        http.get("/no-such-service"),                                     # 404 outside
        http.get("/"),                                                    # index
        http.put("/identity/v3/auth/tokens", json={}),                    # 405
        http.post("/identity/v3/auth/tokens", content=b"{" * 2_000_000,
                  headers={"Content-Type": "application/json"}),          # 413
        http.post("/identity/v3/auth/tokens", content=b"{not json",
                  headers={"Content-Type": "application/json"}),          # 400
    ]
    assert [r.status_code for r in responses] == [200, 300, 401, 401, 404, 404, 200, 405,
                                                   413, 400]
    ids = [_assert_request_id(r) for r in responses]
    assert len(set(ids)) == len(ids)


def test_401_names_the_identity_service(http, cloud):
    r = http.get("/identity/v3/auth/projects", headers={"X-Auth-Token": "garbage"})
    _keystone_error(r, 401)
    assert r.headers["www-authenticate"] == f'Keystone uri="{cloud.auth_url}"'


def test_405_in_keystone_format_lists_the_allowed_methods(http):
    r = http.put("/identity/v3/auth/tokens", json={})
    _keystone_error(r, 405)
    assert set(r.headers["allow"].split(", ")) == {"DELETE", "GET", "HEAD", "POST"}
    for method in ("PATCH", "OPTIONS", "DELETE"):
        _keystone_error(http.request(method, "/identity/v3"), 405)


def test_404_for_unknown_paths(http, token):
    _keystone_error(http.get("/identity/v3/nothing/here", headers={"X-Auth-Token": token}), 404)
    r = http.get("/nothing")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == 404


def test_declared_body_over_the_limit_is_413(http):
    limit = config.CONF.max_request_body_size
    r = http.post("/identity/v3/auth/tokens", content=b"x" * (limit + 1),
                  headers={"Content-Type": "application/json"})
    error = _keystone_error(r, 413)
    assert str(limit) in error["message"]


def test_chunked_body_over_the_limit_is_413(http):
    limit = config.CONF.max_request_body_size

    def chunks():  # no Content-Length: httpx sends Transfer-Encoding: chunked
        for _ in range(limit // 65536 + 2):
            yield b"x" * 65536

    r = http.post("/identity/v3/auth/tokens", content=chunks(),
                  headers={"Content-Type": "application/json"})
    assert r.request.headers.get("transfer-encoding") == "chunked"
    _keystone_error(r, 413)


def test_body_at_the_limit_is_read(http):
    """Exactly the limit is allowed: the 400 comes from the handler, not the limiter."""
    limit = config.CONF.max_request_body_size
    body = b'{"auth": "' + b"x" * (limit - 12) + b'"}'
    assert len(body) == limit
    r = http.post("/identity/v3/auth/tokens", content=body,
                  headers={"Content-Type": "application/json"})
    _keystone_error(r, 400)


def test_head_answers_like_get_without_a_body(http, token):
    for path, headers in (("/identity/v3", {}),
                          ("/identity/v3/auth/tokens", {"X-Auth-Token": token,
                                                        "X-Subject-Token": token})):
        get = http.get(path, headers=headers)
        head = http.head(path, headers=headers)
        assert head.status_code == get.status_code == 200
        assert head.content == b""
        _assert_request_id(head)
    r = http.head("/identity/v3/auth/projects", headers={"X-Auth-Token": "garbage"})
    assert r.status_code == 401 and r.content == b""
    _assert_request_id(r)


# --- unexpected exceptions: the real pipeline with a failing route -----------------------

class Boom(Exception):
    pass


def _routes():
    @routing.public
    def fails(req):
        raise Boom("secret internals: /etc/shadow line 3")

    @routing.public
    async def fails_async(req):
        raise Boom("secret internals in async code")

    @routing.public
    def not_found(req):
        raise exceptions.NotFound("No widget abc.")

    return {"/fails": {"GET": fails, "POST": fails}, "/fails-async": {"GET": fails_async},
            "/widgets/{widget_id}": {"GET": not_found}}


SERVICES = {s.name: s for s in wsgi_app.SERVICES}

# Per service: the key that holds the error, and how the status appears inside it.
SHAPES = {
    "identity": lambda body, code: body["error"]["code"] == code,
    "compute": lambda body, code: next(iter(body.values()))["code"] == code,
    "volume": lambda body, code: next(iter(body.values()))["code"] == code,
    "image": lambda body, code: body["code"].startswith(str(code)),
    "network": lambda body, code: body["NeutronError"]["message"] != "",
    "control": lambda body, code: body["error"]["code"] == code,
    "compute.metadata": lambda body, code: body["error"]["code"] == code,
    "placement": lambda body, code: body["errors"][0]["status"] == code,
    "keymanager": lambda body, code: body["code"] == code and "description" in body,
    "loadbalancer": lambda body, code: body["faultcode"] == ("Client" if code < 500
                                                             else "Server"),
    "dns": lambda body, code: body["code"] == code and "type" in body,
}


def _in_format(service, r: httpx.Response, code: int) -> bool:
    if service.name == "objectstore":  # swift: swob's one-line HTML page of the status
        return r.headers["content-type"] == "text/html; charset=UTF-8" and \
            r.text.startswith("<html><h1>")
    return SHAPES[service.name](r.json(), code)


@pytest.fixture(params=sorted(SERVICES))
def service(request):
    return SERVICES[request.param]


async def _call(service, method, path, **kwargs):
    router = routing.Router(_routes(), lambda: config.CONF.max_request_body_size)
    app = wsgi_app.pipeline(service, router, lambda scope: False)

    async def prefixed(scope, receive, send):
        scope = dict(scope, root_path=service.prefix, path=service.prefix + scope["path"])
        await app(scope, receive, send)

    # Asking for JSON as the SDK does: glance answers httpx's default */* with HTML.
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=prefixed),
                                 base_url="http://test",
                                 headers={"Accept": "application/json"}) as client:
        return await client.request(method, path, **kwargs)


@pytest.fixture
def call(service, cloud):
    import anyio

    def do(method, path, **kwargs):
        return anyio.run(lambda: _call(service, method, path, **kwargs))

    return do


@pytest.mark.parametrize("path", ["/fails", "/fails-async"])
def test_unexpected_exception_is_a_500_in_the_service_format(service, call, path, caplog):
    with caplog.at_level(logging.ERROR, logger="pocketstack.api"):
        r = call("GET", path)
    assert r.status_code == 500
    request_id = _assert_request_id(r)
    assert "secret internals" not in r.text
    assert "Traceback" not in r.text and "Boom" not in r.text
    assert _in_format(service, r, 500)
    logged = [rec for rec in caplog.records if request_id in rec.getMessage()]
    assert logged and logged[0].exc_info[0] is Boom  # the traceback goes to the log


def test_domain_errors_and_405_use_the_service_format(service, call):
    r = call("GET", "/widgets/abc")
    assert r.status_code == 404
    assert _in_format(service, r, 404)
    # swift's 404 page is the same for every missing thing
    assert "No widget abc." in r.text or service.name == "objectstore"
    r = call("DELETE", "/widgets/abc")
    assert r.status_code == 405
    assert _in_format(service, r, 405)
    _assert_request_id(r)


def test_post_body_is_size_checked_before_the_handler_runs(service, call):
    r = call("POST", "/fails", content=b"x" * (config.CONF.max_request_body_size + 1))
    assert r.status_code == 413
    assert _in_format(service, r, 413)


def test_request_id_is_minted_by_the_server(call, service):
    """As oslo.middleware: a client-sent id is not echoed back as the request id."""
    mine = f"req-{uuid.uuid4()}"
    r = call("GET", "/widgets/abc", headers={"x-openstack-request-id": mine})
    assert _assert_request_id(r) != mine


def test_a_client_that_disconnects_before_its_body_is_not_an_error(service, cloud, caplog):
    """A client that gives up (a timeout while the cloud warms up, Ctrl-C) gets no answer
    and leaves no ERROR with a traceback in the log: nothing went wrong on our side."""
    import anyio

    router = routing.Router(_routes(), lambda: config.CONF.max_request_body_size)
    app = wsgi_app.pipeline(service, router, lambda scope: False)
    sent = []

    async def receive():
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": service.prefix + "/widgets/abc",
             "root_path": service.prefix, "headers": [], "query_string": b"",
             "http_version": "1.1", "scheme": "http", "server": ("test", 80),
             "client": ("127.0.0.1", 1)}
    with caplog.at_level(logging.INFO, logger="pocketstack"):
        anyio.run(app, scope, receive, send)
    assert sent == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
