"""Domain exceptions. api.py code raises these; each service's fault formatter turns them
into its own OpenStack error body at one place (``wsgi/faults.py``).

``code`` is the HTTP status; ``title`` the reason phrase keystone and glance show; the
class name is neutron's ``NeutronError.type`` unless ``type_name`` says otherwise.
"""
from __future__ import annotations

from http import HTTPStatus


class PocketstackError(Exception):
    code = 500
    message = "An unexpected error occurred."

    def __init__(self, message: str | None = None, *, type_name: str | None = None,
                 headers: dict | None = None, detail: str = ""):
        self.message = message or self.message
        self.type_name = type_name or type(self).__name__
        self.headers = headers or {}
        self.detail = detail
        super().__init__(self.message)

    @property
    def title(self) -> str:
        return HTTPStatus(self.code).phrase


class BadRequest(PocketstackError):
    code = 400
    message = "The request is invalid."


class ValidationError(BadRequest):
    message = "The request body is invalid."


class Unauthorized(PocketstackError):
    code = 401
    message = "The request you have made requires authentication."


class Forbidden(PocketstackError):
    code = 403
    message = "You are not authorized to perform the requested action."


class PolicyNotAuthorized(Forbidden):
    def __init__(self, action: str):
        super().__init__(f"Policy doesn't allow {action} to be performed.")


class NotFound(PocketstackError):
    code = 404
    message = "The resource could not be found."


class MethodNotAllowed(PocketstackError):
    code = 405
    message = "The method is not allowed for the requested URL."


class NotAcceptable(PocketstackError):
    code = 406
    message = "The requested version or representation is not available."


class Conflict(PocketstackError):
    code = 409
    message = "The request conflicts with the current state of the resource."


class Gone(PocketstackError):
    code = 410


class PayloadTooLarge(PocketstackError):
    code = 413
    message = "The request body is too large."


class UnsupportedMediaType(PocketstackError):
    code = 415
    message = "The media type of the request body is not supported."


class RangeNotSatisfiable(PocketstackError):
    code = 416
    message = "The requested range is not satisfiable."


class OverQuota(PocketstackError):
    """Quota exceeded. Status differs per service (nova 403, neutron 409): subclasses set it."""
    code = 403
    message = "Quota exceeded."


class ServiceUnavailable(PocketstackError):
    code = 503
    message = "The service is temporarily unavailable."
