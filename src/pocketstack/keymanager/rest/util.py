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


MIN_VERSION, MAX_VERSION = (1, 0), (1, 2)


def version(req) -> tuple[int, int]:
    """The request's key-manager microversion (barbican's MicroversionMiddleware): 1.0
    without the header, "latest" the newest; one outside 1.0-1.2 is a 406."""
    header = req.headers.get("openstack-api-version") or ""
    for part in header.split(","):
        service, _, value = part.strip().partition(" ")
        if service.lower() != "key-manager":
            continue
        value = value.strip()
        if value == "latest":
            return MAX_VERSION
        major, dot, minor = value.partition(".")
        if not (dot and major.isascii() and major.isdigit() and minor.isascii()
                and minor.isdigit() and len(value) < 16):
            raise exceptions.BadRequest(f"invalid version string: {value}")
        wanted = (int(major), int(minor))
        if not MIN_VERSION <= wanted <= MAX_VERSION:
            raise exceptions.NotAcceptable(f"Unacceptable version header: {value}")
        return wanted
    return MIN_VERSION
