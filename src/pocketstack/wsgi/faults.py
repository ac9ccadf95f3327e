"""Each service's error body, chosen at one place.

A fault formatter turns a PocketstackError into (body dict). Services are mounted with
their formatter (see app.py), so middleware errors (401, 413, 500) come out in the same
shape as the service's own.
"""
from __future__ import annotations

import html
import json

from pocketstack.common.exceptions import PocketstackError


def keystone(error: PocketstackError) -> dict:
    return {"error": {"code": error.code, "message": error.message, "title": error.title}}


# nova (and cinder) name the body's key after the status.
NOVA_FAULT_NAMES = {
    400: "badRequest", 401: "unauthorized", 403: "forbidden", 404: "itemNotFound",
    405: "badMethod", 406: "notAcceptable", 409: "conflictingRequest", 413: "overLimit",
    415: "badMediaType", 429: "overLimit", 501: "notImplemented", 503: "serviceUnavailable",
}


def nova(error: PocketstackError) -> dict:
    name = NOVA_FAULT_NAMES.get(error.code, "computeFault")
    return {name: {"code": error.code, "message": error.message}}


def neutron(error: PocketstackError) -> dict:
    return {"NeutronError": {"type": error.type_name, "message": error.message,
                             "detail": error.detail}}


def glance(error: PocketstackError) -> dict:
    # The JSON rendering of glance's webob faults.
    return {"message": error.message, "code": f"{error.code} {error.title}",
            "title": error.title}


def _accepts(accept: str, offer: str) -> float:
    """The quality ``accept`` gives ``offer``: the most specific matching range wins."""
    best, specificity = 0.0, -1
    kind = offer.split("/")[0]
    for item in accept.split(","):
        media, *parameters = (part.strip() for part in item.split(";"))
        q = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        media = media.lower()
        rank = {offer: 2, f"{kind}/*": 1, "*/*": 0}.get(media, -1)
        if rank > specificity:
            best, specificity = q, rank
    return best


def glance_negotiated(error: PocketstackError, accept: str | None) -> tuple[str, bytes]:
    """Glance's faults are webob's: HTML when the client accepts anything (no Accept
    header, or ``*/*`` as glanceclient sends, which then reads the HTML's text), JSON
    when JSON is preferred, plain text otherwise; ties go to HTML, as in webob."""
    offers = ["text/html", "application/json"]
    scored = [(_accepts(accept, o) if accept else 1.0, -i, o) for i, o in enumerate(offers)]
    q, _, match = max(scored)
    status = f"{error.code} {error.title}"
    if q <= 0:
        return "text/plain", f"{status}\n\n{error.message}\n\n".encode()
    if match == "application/json":
        return "application/json", json.dumps(glance(error)).encode()
    text = html.escape(error.message, quote=False)
    page = (f"<html>\n <head>\n  <title>{status}</title>\n </head>\n <body>\n"
            f"  <h1>{status}</h1>\n  {text}<br /><br />\n\n\n\n </body>\n</html>")
    return "text/html", page.encode()


glance.negotiate = glance_negotiated


def plain(error: PocketstackError) -> dict:
    return {"error": {"code": error.code, "message": error.message, "title": error.title}}
