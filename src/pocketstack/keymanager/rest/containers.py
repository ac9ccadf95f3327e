"""/v1/containers: thin handlers over keymanager.containers and keymanager.acls."""
from __future__ import annotations

from pocketstack.keymanager import access, acls, containers
from pocketstack.keymanager.rest.util import base, json_body
from pocketstack.wsgi import routing


def create(req):
    access.enforce_plain(req.context, "containers:post", "Container creation")
    container_id = containers.create(req.context, json_body(req), base(req))
    ref = f"{base(req)}/v1/containers/{container_id}"
    return routing.json_response({"container_ref": ref}, 201, headers={"Location": ref})


def list_containers(req):
    access.enforce_plain(req.context, "containers:get", "Containers(s) retrieval")
    return routing.json_response(containers.list_containers(req.context, req.query,
                                                            base(req)))


def show(req):
    return routing.json_response(containers.show(req.context, req.params["container_id"],
                                                 base(req)))


def delete(req):
    containers.delete(req.context, req.params["container_id"])
    return routing.empty(204)


def list_consumers(req):
    return routing.json_response(containers.list_consumers(
        req.context, req.params["container_id"], req.query, base(req)))


def add_consumer(req):
    body = containers.add_consumer(req.context, req.params["container_id"], json_body(req),
                                   base(req))
    return routing.json_response(body, 200, headers={
        "Location": f"{body['container_ref']}/consumers"})


def remove_consumer(req):
    return routing.json_response(containers.remove_consumer(
        req.context, req.params["container_id"], json_body(req), base(req)))


def _acl_ref(req) -> dict:
    return {"acl_ref": f"{base(req)}/v1/containers/{req.params['container_id']}/acl"}


def get_acl(req):
    return routing.json_response(acls.get(req.context, "container", containers.lookup,
                                          req.params["container_id"]))


def put_acl(req):
    acls.update(req.context, "container", containers.lookup, req.params["container_id"],
                json_body(req), replace=True)
    return routing.json_response(_acl_ref(req))


def patch_acl(req):
    acls.update(req.context, "container", containers.lookup, req.params["container_id"],
                json_body(req), replace=False)
    return routing.json_response(_acl_ref(req))


def delete_acl(req):
    acls.delete(req.context, "container", containers.lookup, req.params["container_id"])
    return routing.empty(200)


def add_secret(req):
    containers.add_secret(req.context, req.params["container_id"], json_body(req))
    ref = f"{base(req)}/v1/containers/{req.params['container_id']}"
    return routing.json_response({"container_ref": ref}, 201, headers={"Location": ref})


def remove_secret(req):
    containers.remove_secret(req.context, req.params["container_id"], json_body(req))
    return routing.empty(204)
