"""/v2.0/{collection}/{id}/tags[/{tag}]"""
from pocketstack.network import tags
from pocketstack.network.rest import common
from pocketstack.wsgi import routing


def _ids(req):
    # /v2.0/qos/policies/{id}/tags has no {collection}: QoS policies' tags
    return req.params.get("collection", "policies"), req.params["resource_id"]


def list_tags(req):
    return common.ok(tags.get_tags(req.context, *_ids(req)))


def replace_tags(req):
    return common.ok(tags.replace_tags(req.context, *_ids(req), common.body(req)))


def add_tags(req):
    return common.created(tags.add_tags(req.context, *_ids(req), common.body(req)))


def delete_tags(req):
    tags.delete_tags(req.context, *_ids(req))
    return common.deleted()


def check_tag(req):
    tags.has_tag(req.context, *_ids(req), req.params["tag"])
    return common.deleted()


def add_tag(req):
    tags.add_tag(req.context, *_ids(req), req.params["tag"])
    return routing.empty(201)


def delete_tag(req):
    tags.delete_tag(req.context, *_ids(req), req.params["tag"])
    return common.deleted()
