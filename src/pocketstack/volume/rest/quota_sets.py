"""/os-quota-sets/{project}[/defaults] (show with ?usage=true, update, delete) and
/os-quota-class-sets/{class} (show, update: the ``default`` class sets every project's
defaults), as cinder's quota extensions."""
from __future__ import annotations

from pocketstack.common import exceptions, numbers, policy
from pocketstack.volume import quotas, validation
from pocketstack.volume.rest.common import body, check_project, respond


def show(req):
    check_project(req)
    project_id = req.params["target_project"]
    policy.authorize(req.context, "volume_extension:quotas:show", {"project_id": project_id})
    limits = quotas.limits(project_id)
    out: dict = dict(limits)
    if validation.boolean(req.query.get("usage", "false"), "usage"):
        used = quotas.usage(project_id)
        out = {r: {"limit": v, "in_use": used.get(r, 0), "reserved": 0, "allocated": 0}
               for r, v in limits.items()}
        out["per_volume_gigabytes"]["in_use"] = 0
    return respond(req, {"quota_set": dict(out, id=project_id)})


def defaults(req):
    check_project(req)
    return respond(req, {"quota_set": dict(quotas.defaults(), id=req.params["target_project"])})


def _values(req, key: str = "quota_set") -> dict[str, int]:
    data = validation.obj(body(req), key)
    values = {}
    for resource, value in data.items():
        if resource in ("tenant_id", "id"):
            continue
        if not quotas.known(resource):
            raise exceptions.BadRequest(f"Bad key(s) in quota set: {resource}")
        if isinstance(value, bool) or not isinstance(value, (int, str)) or \
                not numbers.is_int_text(str(value).strip(), signed=True):
            raise exceptions.BadRequest(f"Quota limit {value!r} for {resource} must be an "
                                        "integer.")
        value = int(str(value).strip())
        if value < -1 or value > validation.MAX_INT:
            raise exceptions.BadRequest(f"Quota limit {value} for {resource} must be -1 or "
                                        f"between 0 and {validation.MAX_INT}.")
        values[resource] = value
    return values


def update(req):
    project_id = req.params["target_project"]
    policy.authorize(req.context, "volume_extension:quotas:update", {"project_id": project_id})
    quotas.update(project_id, _values(req))
    return respond(req, {"quota_set": quotas.limits(project_id)})


def delete(req):
    check_project(req)
    project_id = req.params["target_project"]
    policy.authorize(req.context, "volume_extension:quotas:delete", {"project_id": project_id})
    quotas.delete(project_id)
    return respond(req, None, 200)


def _class_name(req) -> str:
    name = req.params["class_name"]
    if not 1 <= len(name) <= 255:
        raise exceptions.BadRequest("quota_class_name has a minimum character requirement of "
                                    "1 and a maximum of 255.")
    return name


def show_class(req):
    check_project(req)
    policy.authorize(req.context, "volume_extension:quota_classes")
    name = _class_name(req)
    return respond(req, {"quota_class_set": dict(quotas.class_limits(name), id=name)})


def update_class(req):
    """cinder answers the class's limits without its id."""
    policy.authorize(req.context, "volume_extension:quota_classes")
    name = _class_name(req)
    quotas.update_class(name, _values(req, "quota_class_set"))
    return respond(req, {"quota_class_set": quotas.class_limits(name)})
