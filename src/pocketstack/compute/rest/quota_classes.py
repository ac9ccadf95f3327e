"""/os-quota-class-sets/{id}: the default limits of every project (nova uses only the
class "default"; any other name shows the defaults and stores nothing, as nova)."""
from __future__ import annotations

from pocketstack.common import db, exceptions
from pocketstack.compute import quotas
from pocketstack.compute.models import Quota
from pocketstack.compute.rest.common import authorize, body, respond
from pocketstack.compute.rest.quota_sets import _NETWORK, MAX_LIMIT, _shown, _values


def show(req):
    authorize(req, "os_compute_api:os-quota-class-sets:show")
    name = req.params["class_name"]
    return respond(req, {"quota_class_set": dict(_values(req, quotas.class_defaults()), id=name)})


def update(req):
    authorize(req, "os_compute_api:os-quota-class-sets:update")
    name = req.params["class_name"]
    props = {r: {"type": ["integer", "string"], "pattern": r"^-?[0-9]{1,19}$",
                 "minimum": -1}  # 19 digits: int() stays cheap (it refuses 4,300)
             for r in _shown(req)}
    data = body(req, {"type": "object", "properties": {"quota_class_set": {
        "type": "object", "properties": props, "additionalProperties": False}},
        "required": ["quota_class_set"], "additionalProperties": False})["quota_class_set"]
    for resource, value in data.items():
        if int(value) < -1:
            raise exceptions.BadRequest(f"Quota limit {value} for {resource} must be -1 or "
                                        "greater.")
        if int(value) > MAX_LIMIT:
            raise exceptions.BadRequest(f"Quota limit {value} for {resource} must be less "
                                        f"than or equal to {MAX_LIMIT}.")
    if name == "default":
        with db.transaction() as s:
            for resource, value in data.items():
                if resource in _NETWORK:
                    continue
                row = s.get(Quota, (quotas.DEFAULT_CLASS, resource))
                if row is None:
                    s.add(Quota(project_id=quotas.DEFAULT_CLASS, resource=resource,
                                hard_limit=int(value)))
                else:
                    row.hard_limit = int(value)
    # nova answers the class's values without an id
    return respond(req, {"quota_class_set": _values(req, quotas.class_defaults())})
