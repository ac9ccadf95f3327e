"""What the key manager's handlers share: barbican's JSON body checks and the base URL."""
from __future__ import annotations

from pocketstack.common import exceptions


def base(req) -> str:
    return req.service_url


def json_body(req):
    """barbican's enforce_content_types(['application/json']) and load_body."""
    media = (req.headers.get("content-type") or "").split(";")[0].strip().lower()
    if media != "application/json":
        raise exceptions.UnsupportedMediaType(
            "Unexpected content type. Expected content types are: ['application/json']")
    try:
        return req.json()
    except exceptions.BadRequest:
        raise exceptions.BadRequest("Malformed JSON") from None
