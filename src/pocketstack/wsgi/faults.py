"""Each service's error body, chosen at one place.

A fault formatter turns a PocketstackError into (body dict). Services are mounted with
their formatter (see app.py), so middleware errors (401, 413, 500) come out in the same
shape as the service's own.
"""
from __future__ import annotations

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


def plain(error: PocketstackError) -> dict:
    return {"error": {"code": error.code, "message": error.message, "title": error.title}}
