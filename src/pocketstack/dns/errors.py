"""Designate's error types: each error body names one (``type``), as designate's
exceptions carry ``error_type``; the status codes are designate's."""
from __future__ import annotations

from pocketstack.common import exceptions


def bad_request(message: str, kind: str = "invalid_object") -> exceptions.BadRequest:
    return exceptions.BadRequest(message, type_name=kind)


def not_found(what: str, kind: str) -> exceptions.NotFound:
    return exceptions.NotFound(f"Could not find {what}", type_name=kind)


def duplicate(what: str, kind: str) -> exceptions.Conflict:
    return exceptions.Conflict(f"Duplicate {what}", type_name=kind)


def forbidden(message: str = "Forbidden") -> exceptions.Forbidden:
    return exceptions.Forbidden(message, type_name="forbidden")


def over_quota(resource: str) -> exceptions.PocketstackError:
    error = exceptions.PayloadTooLarge(f"Quota exceeded for {resource}.", type_name="over_quota")
    return error

