"""Placement's error codes (placement/errors.py upstream) on pocketstack's exceptions: the
fault formatter (wsgi/faults.placement) shows ``placement_code`` from microversion 1.23."""
from __future__ import annotations

from pocketstack.common import exceptions

DEFAULT = "placement.undefined_code"
INVENTORY_INUSE = "placement.inventory.inuse"
CONCURRENT_UPDATE = "placement.concurrent_update"
DUPLICATE_NAME = "placement.duplicate_name"
PROVIDER_IN_USE = "placement.resource_provider.inuse"
PROVIDER_CANNOT_DELETE_PARENT = "placement.resource_provider.cannot_delete_parent"
RESOURCE_PROVIDER_NOT_FOUND = "placement.resource_provider.not_found"
ILLEGAL_DUPLICATE_QUERYPARAM = "placement.query.duplicate_key"
QUERYPARAM_BAD_VALUE = "placement.query.bad_value"
QUERYPARAM_MISSING_VALUE = "placement.query.missing_value"


def _coded(cls, message: str, code: str | None):
    error = cls(message)
    error.placement_code = code or DEFAULT
    return error


def bad_request(message: str, code: str | None = None):
    return _coded(exceptions.BadRequest, message, code)


def not_found(message: str, code: str | None = None):
    return _coded(exceptions.NotFound, message, code)


def conflict(message: str, code: str | None = None):
    return _coded(exceptions.Conflict, message, code)


def concurrent_update(what: str = "resource provider"):
    return conflict(f"{what} generation conflict: another thread updated the same "
                    "resource provider or consumer; retry the request.", CONCURRENT_UPDATE)
