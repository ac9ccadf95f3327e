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


def barbican(error: PocketstackError) -> dict:
    # barbican's JSONErrorHook: webob's status title and the abort's detail.
    return {"code": error.code, "title": error.title, "description": error.message}


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


def octavia(error: PocketstackError) -> dict:
    """WSME's fault body, as Octavia's pecan API renders every error."""
    return {"faultcode": "Client" if error.code < 500 else "Server",
            "faultstring": error.message, "debuginfo": None}


def plain(error: PocketstackError) -> dict:
    return {"error": {"code": error.code, "message": error.message, "title": error.title}}


# webob's explanation of each status, which placement's ``detail`` starts with.
_WEBOB_EXPLANATIONS = {
    400: "The server could not comply with the request since it is either malformed or "
         "otherwise incorrect.",
    401: "This server could not verify that you are authorized to access the document you "
         "requested. Either you supplied the wrong credentials (e.g., bad password), or your "
         "browser does not understand how to supply the credentials required.",
    403: "Access was denied to this resource.",
    404: "The resource could not be found.",
    405: "The method is not allowed for this resource.",
    406: "The resource could not be generated that was acceptable to your request.",
    409: "There was a conflict when trying to complete your request.",
    413: "The request is larger than the server is willing or able to process.",
    415: "The request media type is not supported by this server.",
}
PLACEMENT_VERSION_KEY = "pocketstack.placement.version"  # (major, minor) of the request
PLACEMENT_MAX_VERSION_KEY = "pocketstack.placement.versions"  # (min, max) strings for 406


def placement(error: PocketstackError) -> dict:
    return placement_scoped(error, {})


def placement_scoped(error: PocketstackError, scope: dict) -> dict:
    """Placement's API-WG error body; ``code`` from microversion 1.23."""
    explanation = _WEBOB_EXPLANATIONS.get(error.code, error.title)
    detail = explanation if error.message == explanation else (
        f"{explanation}\n\n {error.message}  ")
    body = {"status": error.code, "title": error.title, "detail": detail}
    version = scope.get(PLACEMENT_VERSION_KEY)
    if version is not None and version >= (1, 23):
        body["code"] = getattr(error, "placement_code", None) or "placement.undefined_code"
    request_id = scope.get("pocketstack.request_id")
    if request_id:
        body["request_id"] = request_id
    if error.code == 406 and version is None and PLACEMENT_MAX_VERSION_KEY in scope:
        body["min_version"], body["max_version"] = scope[PLACEMENT_MAX_VERSION_KEY]
    return {"errors": [body]}


placement.scoped = placement_scoped


# swob's reason phrase and explanation of each status (swift/common/swob.py).
SWIFT_REASONS = {
    400: ("Bad Request", "The server could not comply with the request since it is either "
          "malformed or otherwise incorrect."),
    401: ("Unauthorized", "This server could not verify that you are authorized to access "
          "the document you requested."),
    403: ("Forbidden", "Access was denied to this resource."),
    404: ("Not Found", "The resource could not be found."),
    405: ("Method Not Allowed", "The method is not allowed for this resource."),
    406: ("Not Acceptable", "The resource is not available in a format acceptable to your "
          "browser."),
    408: ("Request Timeout", "The server has waited too long for the request to be sent by "
          "the client."),
    409: ("Conflict", "There was a conflict when trying to complete your request."),
    411: ("Length Required", "Content-Length header required."),
    412: ("Precondition Failed", "A precondition for this request was not met."),
    413: ("Request Entity Too Large", "The body of your request was too large for this "
          "server."),
    415: ("Unsupported Media Type", "The request media type is not supported by this "
          "server."),
    416: ("Requested Range Not Satisfiable", "The Range requested is not available."),
    422: ("Unprocessable Entity", "Unable to process the contained instructions"),
    499: ("Client Disconnect", "The client was disconnected during request."),
    500: ("Internal Error", "The server has either erred or is incapable of performing the "
          "requested operation."),
    501: ("Not Implemented", "The requested method is not implemented by this server."),
    503: ("Service Unavailable", "The server is currently unavailable. Please try again at a "
          "later time."),
}


def swift_negotiated(error: PocketstackError, accept: str | None) -> tuple[str, bytes]:
    """Swift's error bodies: the text it was given as plain text (``error.plain``, set by
    the object store's own errors), otherwise swob's one-line HTML page of the status."""
    if getattr(error, "plain", False):
        return "text/plain", error.message.encode()
    title, explanation = SWIFT_REASONS.get(error.code, (error.title, error.message))
    return ("text/html; charset=UTF-8",
            f"<html><h1>{title}</h1><p>{explanation}</p></html>".encode())


def swift(error: PocketstackError) -> dict:
    return {"error": {"code": error.code, "message": error.message}}


swift.negotiate = swift_negotiated


# Designate's error_type of an error that names none, by status.
DESIGNATE_TYPES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
                   405: "method_not_allowed", 406: "not_acceptable", 409: "conflict",
                   413: "over_quota", 415: "unsupported_content_type",
                   503: "service_unavailable"}


def designate(error: PocketstackError) -> dict:
    return designate_scoped(error, {})


def designate_scoped(error: PocketstackError, scope: dict) -> dict:
    """Designate's error body: the error's type from its exception (``type_name`` when it
    names one, lower-case like designate's ``error_type``), else one per status."""
    kind = error.type_name
    if not kind or not kind.islower():
        kind = DESIGNATE_TYPES.get(error.code, "internal_server_error")
    body = {"code": error.code, "type": kind, "message": error.message}
    request_id = scope.get("pocketstack.request_id")
    if request_id:
        body["request_id"] = request_id
    return body


designate.scoped = designate_scoped
