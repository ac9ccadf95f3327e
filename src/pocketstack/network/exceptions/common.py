"""The generic ones: bad input, revision, authorization, quota, tags, extensions; the
bases the other modules build on (``InUse``, ``NotFoundById``)."""
from __future__ import annotations

from pocketstack.common import exceptions as base


class HTTPBadRequest(base.BadRequest):
    """Attribute validation failed (neutron raises webob's HTTPBadRequest for these)."""


class InvalidInput(base.BadRequest):
    def __init__(self, error_message: str):
        super().__init__(f"Invalid input for operation: {error_message}.")


class BadRequest(base.BadRequest):
    def __init__(self, resource: str, msg: str):
        super().__init__(f"Bad {resource} request: {msg}.")


class RevisionNumberConstraintFailed(base.PocketstackError):
    """An ``If-Match: revision_number=N`` update of an object at another revision
    (neutron's revision-if-match extension; a webob HTTPPreconditionFailed there)."""
    code = 412

    def __init__(self, expected: int, current: int):
        super().__init__(f"Constrained to {expected}, but current revision is {current}")


class NotAuthorized(base.Forbidden):
    pass


class ResourceNotFound(base.NotFound):
    """The URL names no resource (HTTPNotFound in neutron)."""


class NotFoundById(base.NotFound):
    """``<what> <id> could not be found.``: neutron-lib's wording for a lookup by id; a
    subclass names ``what`` (its class name stays the ``type`` clients see)."""
    what = "Resource"
    full_stop = "."  # neutron-lib's router and floating IP messages end without one

    def __init__(self, id: str):
        super().__init__(f"{self.what} {id} could not be found{self.full_stop}")


class ExtensionNotFound(base.NotFound):
    def __init__(self, alias: str):
        super().__init__(f"Extension with alias {alias} does not exist")


class TagNotFound(base.NotFound):
    def __init__(self, resource_id: str, tag: str):
        super().__init__(f"Tag {tag} could not be found for resource {resource_id}.")


class Conflict(base.Conflict):
    pass


class InUse(base.Conflict):
    message = "The resource is in use."


class OverQuota(base.Conflict):
    def __init__(self, overs: list[str]):
        super().__init__(f"Quota exceeded for resources: {sorted(overs)}.")


class InvalidQuotaValue(base.Conflict):
    def __init__(self, unders: list[str]):
        super().__init__("Change would make usage less than 0 for the following resources: "
                         f"{sorted(unders)}.")


class QuotaResourceUnknown(base.NotFound):
    def __init__(self, unknown: list[str]):
        super().__init__(f"Unknown quota resources {unknown}.")


class AdminRequired(base.Forbidden):
    def __init__(self, reason: str):
        super().__init__(f"User does not have admin privileges: {reason}.")
