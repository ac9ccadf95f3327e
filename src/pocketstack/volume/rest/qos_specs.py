"""/qos-specs: CRUD, keys, and the associations with volume types (cinder's
qos_specs_manage: associate/disassociate are GETs with ``?vol_type_id=``)."""
from __future__ import annotations

from pocketstack.volume import qos_specs, validation
from pocketstack.volume.rest.common import body, check_project, collection_links, respond


def _detail(row) -> dict:
    return {"id": row.id, "name": row.name, "consumer": row.consumer,
            "specs": dict(row.specs or {})}


def _links(req, row) -> list[dict]:
    project = req.context.project_id
    return [{"href": f"{req.service_url}/v3/{project}/qos-specs/{row.id}", "rel": "self"},
            {"href": f"{req.service_url}/{project}/qos-specs/{row.id}", "rel": "bookmark"}]


def list_specs(req):
    check_project(req)
    from pocketstack.volume import api

    found = qos_specs.list_specs(req.context, req.query)
    out = {"qos_specs": [_detail(q) for q in found]}
    links = collection_links(req, "qos-specs", found, api.limit_marker(req.query)[0],
                             len(found))
    if links:
        out["qos_specs_links"] = links
    return respond(req, out)


def create(req):
    row = qos_specs.create(req.context, body(req))
    return respond(req, {"qos_specs": _detail(row), "links": _links(req, row)})


def show(req):
    check_project(req)
    row = qos_specs.get(req.context, req.params["qos_id"])
    return respond(req, {"qos_specs": _detail(row), "links": _links(req, row)})


def update(req):
    return respond(req, qos_specs.update(req.context, req.params["qos_id"], body(req)))


def delete(req):
    check_project(req)
    force = validation.boolean(req.query.get("force", "false"), "force")
    qos_specs.delete(req.context, req.params["qos_id"], force)
    return respond(req, None, 202)


def delete_keys(req):
    qos_specs.delete_keys(req.context, req.params["qos_id"], body(req))
    return respond(req, None, 202)


def associations(req):
    check_project(req)
    return respond(req, {"qos_associations": qos_specs.associations(
        req.context, req.params["qos_id"])})


def associate(req):
    check_project(req)
    qos_specs.associate(req.context, req.params["qos_id"], req.query)
    return respond(req, None, 202)


def disassociate(req):
    check_project(req)
    qos_specs.disassociate(req.context, req.params["qos_id"], req.query)
    return respond(req, None, 202)


def disassociate_all(req):
    check_project(req)
    qos_specs.disassociate_all(req.context, req.params["qos_id"])
    return respond(req, None, 202)
