"""One ASGI app: every service mounted at its path prefix behind the middleware pipeline.

Each service package provides ``rest/__init__.py`` with ``ROUTES`` (see routing.py) and,
optionally, ``body_limit_exempt(scope) -> bool`` for routes that stream large bodies.
A service whose rest package does not exist yet is simply not mounted.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from pocketstack.common import config
from pocketstack.wsgi import faults, middleware
from pocketstack.wsgi.routing import Router, json_response, public


@dataclasses.dataclass(frozen=True)
class Service:
    name: str          # package under pocketstack/
    prefix: str        # URL path prefix on the one port
    formatter: Callable  # the service's error body


SERVICES = (
    Service("identity", "/identity", faults.keystone),
    Service("compute", "/compute", faults.nova),
    Service("image", "/image", faults.glance),
    Service("network", "/network", faults.neutron),
    Service("volume", "/volume", faults.nova),  # cinder uses nova's fault bodies
    Service("control", "/pocketstack", faults.plain),  # pocketstack's own API: traces, faults
)


def auth_uri() -> str:
    return config.public_url() + "/identity"


def _validate_token(token: str):
    from pocketstack.identity import tokens

    return tokens.validate_to_context(token)


def pipeline(service: Service, router, exempt) -> Callable:
    """The middleware stack, innermost last; the order is explained in middleware.py."""
    app = middleware.TokenAuth(router, _validate_token)
    app = middleware.BodySizeLimit(app, exempt)
    app = middleware.FaultWrapper(app, service.formatter, auth_uri)
    app = middleware.AccessLog(app)
    return middleware.RequestId(app)


class PocketstackApp:
    """Dispatches on the path prefix; sets ``root_path`` so links and routes are relative."""

    def __init__(self):
        self.mounts: list[tuple[str, Callable]] = []
        for service in SERVICES:
            rest = config.optional_module(service.name, "rest")
            if rest is None:
                continue
            router = Router(rest.ROUTES, lambda: config.CONF.max_request_body_size)
            exempt = getattr(rest, "body_limit_exempt", lambda scope: False)
            self.mounts.append((service.prefix, pipeline(service, router, exempt)))
        # "/" and unknown prefixes also go through the pipeline: request id, plain errors.
        self.root = pipeline(Service("root", "", faults.plain),
                             Router({"/": {"GET": self.index}}, lambda: 0),
                             lambda scope: False)

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        if scope["type"] != "http":
            return
        path = scope["path"]
        for prefix, app in self.mounts:
            if path == prefix or path.startswith(prefix + "/"):
                rest = path[len(prefix):].rstrip("/") or "/"
                scope = dict(scope, root_path=scope.get("root_path", "") + prefix,
                             path=prefix + rest)
                return await app(scope, receive, send)
        return await self.root(scope, receive, send)

    @public
    async def index(self, req):
        """What is mounted where (not an OpenStack API: a pointer for people)."""
        return json_response({"services": {p.strip("/"): p for p, _ in self.mounts}})

    async def _lifespan(self, receive, send):
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return


def build_app() -> PocketstackApp:
    return PocketstackApp()

