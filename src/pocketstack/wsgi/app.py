"""One ASGI app: every service mounted at its path prefix behind the middleware pipeline.

Each service package provides ``rest/__init__.py`` with ``ROUTES`` (see routing.py) and,
optionally, ``body_limit_exempt(scope) -> bool`` for routes that stream large bodies.
A service whose rest package does not exist yet is simply not mounted.
"""
from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from typing import Callable

from starlette.responses import Response

from pocketstack.common import config, exceptions, runtime
from pocketstack.wsgi import faults, inprocess, middleware
from pocketstack.wsgi.routing import TRAILING_SLASH_KEY, Router, json_response, public


@dataclasses.dataclass(frozen=True)
class Service:
    name: str          # package under pocketstack/
    prefix: str        # URL path prefix on the one port
    formatter: Callable  # the service's error body
    listed: bool = True  # in the root's map of what is mounted where (an API for clients)
    # its types in the catalog: what application credential access rules name it by
    types: tuple[str, ...] = ()


SERVICES = (
    Service("identity", "/identity", faults.keystone, types=("identity",)),
    Service("compute", "/compute", faults.nova, types=("compute",)),
    # nova-api-metadata: for the network agent's metadata proxy, not in the catalog
    Service("compute.metadata", "/metadata", faults.plain, listed=False),
    Service("image", "/image", faults.glance, types=("image",)),
    Service("network", "/network", faults.neutron, types=("network",)),
    # cinder uses nova's fault bodies; the catalog lists it under both types
    Service("volume", "/volume", faults.nova, types=("block-storage", "volumev3")),
    Service("placement", "/placement", faults.placement, types=("placement",)),
    Service("objectstore", "/object-store", faults.swift, types=("object-store",)),
    Service("keymanager", "/key-manager", faults.barbican, types=("key-manager",)),
    Service("loadbalancer", "/load-balancer", faults.octavia, types=("load-balancer",)),
    Service("dns", "/dns", faults.designate, types=("dns",)),
    Service("control", "/pocketstack", faults.plain),  # pocketstack's own API: traces, faults
)


def auth_uri() -> str:
    return config.public_url() + "/identity"


def _validate_token(token: str, service_token: str | None = None,
                    request: tuple | None = None):
    from pocketstack.identity import tokens

    return tokens.validate_to_context(token, service_token, request)


def token_body(token: str) -> dict | None:
    """The identity API's ``GET /v3/auth/tokens`` body for ``token`` (None: not valid),
    answered by this process, which serves that API, without the socket: for a role that
    runs beside the APIs (the conductor checking a compute host's token) and may ask
    before they listen. The same function answers the request over HTTP."""
    from pocketstack.identity import auth

    try:
        return auth.validate_for_display(token, nocatalog=True)["token"]
    except exceptions.NotFound:
        return None


def pipeline(service: Service, router, exempt, wrap: Callable | None = None,
             rest=None) -> Callable:
    """The middleware stack, innermost last; the order is explained in middleware.py.
    ``wrap``: a service's own layer around its faults (placement's microversion header,
    which its error responses carry too). ``rest`` (the service's REST package) may give
    its own request id shape (``new_request_id``) and more names for it
    (``REQUEST_ID_HEADERS``)."""
    app = middleware.TokenAuth(router, _validate_token, service.types)
    app = middleware.BodySizeLimit(app, exempt)
    app = middleware.FaultWrapper(app, service.formatter, auth_uri)
    if wrap is not None:
        app = wrap(app)
    app = middleware.AccessLog(app)
    # nova also names the request id x-compute-request-id (clients such as novaclient read it)
    also = ("x-compute-request-id",) if service.name == "compute" else ()
    also += tuple(getattr(rest, "REQUEST_ID_HEADERS", ()))
    new_id = getattr(rest, "new_request_id", None) or middleware.new_request_id
    return middleware.RequestId(app, also=also, new_id=new_id)


class PocketstackApp:
    """Dispatches on the path prefix; sets ``root_path`` so links and routes are relative.

    Identity is mounted at once. The other services' REST packages are imported on first
    use or by ``load_all()``, and requests to them wait until ``ready`` is set (the cloud
    sets it once its background workers run), so `pocketstack up` can answer identity —
    every client's first stop — while the rest of the cloud finishes starting. Reads
    (GET, HEAD, OPTIONS) need no worker: with ``reads_ready`` (set once the REST packages
    are loaded) they wait only for that. A request that waits READY_TIMEOUT in vain gets a
    503 with Retry-After, never a 500.
    """

    EAGER = ("identity",)
    READY_TIMEOUT = 30.0  # seconds a request waits for the cloud to finish starting
    RETRY_AFTER = 5  # seconds, in the 503 a request gets when that wait runs out
    READS = frozenset({"GET", "HEAD", "OPTIONS"})

    def __init__(self, ready: threading.Event | None = None, *,
                 reads_ready: threading.Event | None = None):
        self.ready = ready or threading.Event()
        self.reads_ready = reads_ready or self.ready
        self.runtime = runtime.current()  # the cloud this app serves (common/runtime.py)
        self._lock = threading.Lock()
        self._apps: dict[str, Callable | None] = {}  # prefix -> pipeline (None: not provided)
        self._routers: dict[str, Router] = {}  # prefix -> the service's route table
        self._unavailable: dict[str, Callable] = {}  # prefix -> pipeline answering 503
        self._dashboard_app = None
        for service in SERVICES:
            if service.name in self.EAGER:
                self._load(service)
        # "/" and unknown prefixes also go through the pipeline: request id, plain errors.
        self.root = pipeline(Service("root", "", faults.plain),
                             Router({"/": {"GET": self.index}}, lambda: 0),
                             lambda scope: False)
        inprocess.register(self)

    def can_run_inline(self, method: str, path: str) -> bool:
        """Whether a request would run to completion on the calling thread (wsgi/
        inprocess.py): its service is loaded and ready and its handler is a plain def."""
        for service in SERVICES:
            prefix = service.prefix
            if path.startswith(prefix + "/"):
                router = self._routers.get(prefix)
                if router is None or (service.name not in self.EAGER
                                      and not self.ready.is_set()):
                    return False
                route, _ = router.match(path[len(prefix):].rstrip("/") or "/")
                handler = route.methods.get(method.upper()) if route is not None else None
                return handler is not None and inprocess.inline_handler(handler)
        return False

    def _load(self, service: Service) -> Callable | None:
        with self._lock:
            if service.prefix not in self._apps:
                rest = config.optional_module(service.name, "rest")
                app = None
                if rest is not None and getattr(rest, "ROUTES", None) is not None:
                    router = Router(rest.ROUTES, lambda: config.CONF.max_request_body_size)
                    exempt = getattr(rest, "body_limit_exempt", lambda scope: False)
                    app = pipeline(service, router, exempt, getattr(rest, "wrap", None), rest)
                    self._routers[service.prefix] = router
                self._apps[service.prefix] = app
            return self._apps[service.prefix]

    def load_all(self) -> None:
        """Import every service's REST package now (start-up warm-up)."""
        for service in SERVICES:
            self._load(service)

    @property
    def mounts(self) -> list[tuple[str, Callable]]:
        """(prefix, app) of every service that is loaded and provides a REST API."""
        return [(p, app) for p, app in self._apps.items() if app is not None]

    async def _wait_ready(self, ready: threading.Event) -> bool:
        deadline = time.monotonic() + self.READY_TIMEOUT
        while not ready.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.005)  # a start takes well under a second: look often
        return ready.is_set()

    def _not_ready(self, service: Service) -> Callable:
        """The service's pipeline around a 503 (request id, access log, its error body)."""
        app = self._unavailable.get(service.prefix)
        if app is None:
            retry_after = self.RETRY_AFTER

            async def unavailable(scope, receive, send):
                raise exceptions.ServiceUnavailable(
                    f"The {service.name} service is still starting; retry in a few seconds.",
                    headers={"Retry-After": str(retry_after)})

            app = self._unavailable[service.prefix] = pipeline(service, unavailable,
                                                               lambda scope: False)
        return app

    async def __call__(self, scope, receive, send):
        # Every request runs in this app's cloud, whichever thread serves it: handlers
        # off the event loop inherit the context.
        with self.runtime.activated():
            return await self._dispatch(scope, receive, send)

    async def _dispatch(self, scope, receive, send):
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        if scope["type"] != "http":
            return
        path = scope["path"]
        if path == "/dashboard" or path.startswith("/dashboard/"):
            return await self._dashboard()(scope, receive, send)
        for service in SERVICES:
            prefix = service.prefix
            if path == prefix or path.startswith(prefix + "/"):
                ready = self.reads_ready if scope["method"] in self.READS else self.ready
                if service.name not in self.EAGER and not ready.is_set():
                    if not await self._wait_ready(ready):  # bounded: then 503 + Retry-After
                        return await self._not_ready(service)(scope, receive, send)
                if prefix in self._apps:
                    app = self._apps[prefix]
                else:
                    app = await asyncio.to_thread(self._load, service)
                if app is None:
                    break  # the service has no REST API (yet): a 404 from the root
                rest = path[len(prefix):].rstrip("/") or "/"
                scope = dict(scope, root_path=scope.get("root_path", "") + prefix,
                             path=prefix + rest)
                scope[TRAILING_SLASH_KEY] = rest != "/" and path.endswith("/")
                return await app(scope, receive, send)
        return await self.root(scope, receive, send)

    def _dashboard(self):
        """The web dashboard (pocketstack/dashboard), built on first use."""
        if self._dashboard_app is None:
            from pocketstack.dashboard.app import Dashboard

            self._dashboard_app = Dashboard()
        return self._dashboard_app

    @public
    async def index(self, req):
        """What is mounted where (not an OpenStack API: a pointer for people); a browser
        asking for HTML is sent to the dashboard instead."""
        accept = req.headers.get("accept", "")
        if "text/html" in accept and "application/json" not in accept:
            return Response(status_code=302, headers={"Location": "/dashboard/"})
        await asyncio.to_thread(self.load_all)
        listed = {service.prefix for service in SERVICES if service.listed}
        return json_response({"services": {p.strip("/"): p for p, _ in self.mounts
                                           if p in listed}})

    async def _lifespan(self, receive, send):
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return


def build_app(ready: threading.Event | None = None) -> PocketstackApp:
    """The app; without ``ready``, every service is loaded and usable at once."""
    if ready is None:
        ready = threading.Event()
        ready.set()
        app = PocketstackApp(ready)
        app.load_all()
        return app
    return PocketstackApp(ready)

