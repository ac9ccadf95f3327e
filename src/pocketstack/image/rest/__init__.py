"""Glance v2 route table: one line per URL, handlers in one module per noun."""
from pocketstack.image.rest import (actions, image_data, images, info, members, schemas, tags,
                                    versions)

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
}


def body_limit_exempt(scope) -> bool:
    """Image data is streamed and capped by [image] image_size_cap, not the JSON limit."""
    return scope["method"] == "PUT" and scope["path"].endswith(("/file", "/stage"))
