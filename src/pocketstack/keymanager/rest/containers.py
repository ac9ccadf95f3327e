"""/v1/containers: thin handlers over keymanager.containers and keymanager.acls."""
from __future__ import annotations

from pocketstack.keymanager import access, containers
from pocketstack.keymanager.rest.util import acl_handlers, base, created, json_body
from pocketstack.wsgi import routing


def create(req):
    access.enforce_plain(req.context, "containers:post", "Container creation")
    return created(req, "container", containers.create(req.context, json_body(req), base(req)))


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


get_acl, put_acl, patch_acl, delete_acl = acl_handlers(
    "container", containers.lookup, "container_id")


def add_secret(req):
    containers.add_secret(req.context, req.params["container_id"], json_body(req))
    return created(req, "container", req.params["container_id"])


def remove_secret(req):
    containers.remove_secret(req.context, req.params["container_id"], json_body(req))
    return routing.empty(204)
