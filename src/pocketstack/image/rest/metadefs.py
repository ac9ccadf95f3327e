"""/v2/metadefs/* and /v2/schemas/metadefs/*: thin handlers over image/metadefs."""
from __future__ import annotations

from pocketstack.image.metadefs import common, contents, namespaces, resource_types
from pocketstack.wsgi import routing


def _ns(req) -> str:
    return req.params["namespace"]


def list_namespaces(req):
    return routing.json_response(namespaces.list_namespaces(req.context,
                                                            dict(req.query.items())))


def create_namespace(req):
    body = namespaces.create(req.context, req.json())
    return routing.json_response(body, status=201)


def show_namespace(req):
    return routing.json_response(namespaces.show(req.context, _ns(req),
                                                 req.query.get("resource_type")))


def update_namespace(req):
    return routing.json_response(namespaces.update(req.context, _ns(req), req.json()))


def delete_namespace(req):
    namespaces.delete(req.context, _ns(req))
    return routing.empty()


def _delete_all(kind):
    def handler(req):
        contents.delete_all(req.context, _ns(req), kind)
        return routing.empty()
    return handler


def _delete_one(kind, param):
    def handler(req):
        contents.delete_one(req.context, _ns(req), kind, req.params[param])
        return routing.empty()
    return handler


delete_objects, delete_properties, delete_tags = (_delete_all(k) for k in
                                                  ("objects", "properties", "tags"))
delete_object = _delete_one("objects", "object_name")
delete_property = _delete_one("properties", "property_name")
delete_tag = _delete_one("tags", "tag_name")


def list_objects(req):
    return routing.json_response(contents.list_objects(req.context, _ns(req)))


def create_object(req):
    return routing.json_response(contents.create_object(req.context, _ns(req), req.json()),
                                 status=201)


def show_object(req):
    return routing.json_response(contents.show_object(req.context, _ns(req),
                                                      req.params["object_name"]))


def update_object(req):
    return routing.json_response(contents.update_object(
        req.context, _ns(req), req.params["object_name"], req.json()))


def list_properties(req):
    return routing.json_response(contents.list_properties(req.context, _ns(req)))


def create_property(req):
    return routing.json_response(contents.create_property(req.context, _ns(req), req.json()),
                                 status=201)


def show_property(req):
    return routing.json_response(contents.show_property(
        req.context, _ns(req), req.params["property_name"], req.query.get("resource_type")))


def update_property(req):
    return routing.json_response(contents.update_property(
        req.context, _ns(req), req.params["property_name"], req.json()))


def list_tags(req):
    return routing.json_response(contents.list_tags(req.context, _ns(req)))


def create_tags(req):
    append = req.headers.get("x-openstack-append", "").lower() in ("true", "1", "yes")
    return routing.json_response(contents.create_tags(req.context, _ns(req), req.json(),
                                                      append), status=201)


def create_tag(req):
    return routing.json_response(contents.create_tag(req.context, _ns(req),
                                                     req.params["tag_name"]), status=201)


def show_tag(req):
    return routing.json_response(contents.show_tag(req.context, _ns(req),
                                                   req.params["tag_name"]))


def update_tag(req):
    return routing.json_response(contents.update_tag(req.context, _ns(req),
                                                     req.params["tag_name"], req.json()))


def list_resource_types(req):
    return routing.json_response(resource_types.list_resource_types(req.context))


def list_associations(req):
    return routing.json_response(resource_types.list_associations(req.context, _ns(req)))


def create_association(req):
    return routing.json_response(resource_types.create_association(req.context, _ns(req),
                                                                   req.json()), status=201)


def delete_association(req):
    resource_types.delete_association(req.context, _ns(req), req.params["resource_type"])
    return routing.empty()


def schema_handler(name: str):
    async def handler(req):
        return routing.json_response(common.schema(name))
    return handler
