"""Glance v2 route table: one line per URL, handlers in one module per noun."""
from pocketstack.image.rest import (actions, cache, image_data, images, info, members,
                                    metadefs, schemas, tags, tasks, versions)

NS = "/v2/metadefs/namespaces/{namespace}"
M = metadefs

ROUTES = {
    "/": {"GET": versions.versions},
    "/versions": {"GET": versions.versions_explicit},
    "/v2": {"GET": versions.versions},
    "/v2/schemas/image": {"GET": schemas.image},
    "/v2/schemas/images": {"GET": schemas.images},
    "/v2/schemas/member": {"GET": schemas.member},
    "/v2/schemas/members": {"GET": schemas.members},
    "/v2/images": {"GET": images.list_images, "POST": images.create_image,
                   "DELETE": images.delete_without_id},
    "/v2/images/{image_id}": {"GET": images.show_image, "PATCH": images.update_image,
                              "DELETE": images.delete_image},
    "/v2/images/{image_id}/file": {"PUT": image_data.upload, "GET": image_data.download},
    "/v2/images/{image_id}/stage": {"PUT": image_data.stage},
    "/v2/images/{image_id}/import": {"POST": image_data.import_image},
    "/v2/images/{image_id}/actions/deactivate": {"POST": actions.deactivate},
    "/v2/images/{image_id}/actions/reactivate": {"POST": actions.reactivate},
    "/v2/images/{image_id}/tags/{tag}": {"PUT": tags.add_tag, "DELETE": tags.delete_tag},
    "/v2/images/{image_id}/members": {"GET": members.list_members,
                                      "POST": members.add_member},
    "/v2/images/{image_id}/members/{member_id}": {"GET": members.show_member,
                                                  "PUT": members.update_member,
                                                  "DELETE": members.delete_member},
    "/v2/info/import": {"GET": info.import_methods},
    "/v2/info/stores": {"GET": info.stores_info},
    "/v2/info/stores/detail": {"GET": info.stores_detail},
    "/v2/info/usage": {"GET": info.usage},
    # import tasks, data in one store (2.10)
    "/v2/tasks": {"GET": tasks.list_tasks, "POST": tasks.create_task},
    "/v2/tasks/{task_id}": {"GET": tasks.show_task, "DELETE": tasks.delete_task},
    "/v2/images/{image_id}/tasks": {"GET": tasks.image_tasks},
    "/v2/stores/{store_id}/{image_id}": {"DELETE": tasks.delete_from_store},
    # the image cache (2.14, 2.18)
    "/v2/cache": {"GET": cache.state, "DELETE": cache.clear},
    "/v2/cache/clean": {"POST": cache.clean},
    "/v2/cache/prune": {"POST": cache.prune},
    "/v2/cache/nodes/{image_id}": {"GET": cache.nodes},
    "/v2/cache/{image_id}": {"PUT": cache.queue, "DELETE": cache.delete},
    # metadata definitions
    "/v2/metadefs/resource_types": {"GET": M.list_resource_types},
    "/v2/metadefs/namespaces": {"GET": M.list_namespaces, "POST": M.create_namespace},
    NS: {"GET": M.show_namespace, "PUT": M.update_namespace, "DELETE": M.delete_namespace},
    NS + "/objects": {"GET": M.list_objects, "POST": M.create_object,
                      "DELETE": M.delete_objects},
    NS + "/objects/{object_name}": {"GET": M.show_object, "PUT": M.update_object,
                                    "DELETE": M.delete_object},
    NS + "/properties": {"GET": M.list_properties, "POST": M.create_property,
                         "DELETE": M.delete_properties},
    NS + "/properties/{property_name}": {"GET": M.show_property, "PUT": M.update_property,
                                         "DELETE": M.delete_property},
    NS + "/tags": {"GET": M.list_tags, "POST": M.create_tags, "DELETE": M.delete_tags},
    NS + "/tags/{tag_name}": {"GET": M.show_tag, "POST": M.create_tag, "PUT": M.update_tag,
                              "DELETE": M.delete_tag},
    NS + "/resource_types": {"GET": M.list_associations, "POST": M.create_association},
    NS + "/resource_types/{resource_type}": {"DELETE": M.delete_association},
    **{f"/v2/schemas/{name}": {"GET": M.schema_handler(name)} for name in (
        "task", "tasks", "metadefs/namespace", "metadefs/namespaces", "metadefs/object",
        "metadefs/objects", "metadefs/property", "metadefs/properties",
        "metadefs/resource_type", "metadefs/resource_types", "metadefs/tag",
        "metadefs/tags")},
}


def body_limit_exempt(scope) -> bool:
    """Image data is streamed and capped by [image] image_size_cap, not the JSON limit."""
    return scope["method"] == "PUT" and scope["path"].endswith(("/file", "/stage"))
