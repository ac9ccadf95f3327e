"""Image policy defaults, after glance's secure-RBAC defaults (glance/policies/).

The target of every image rule carries ``project_id`` (the image's owner), ``owner``,
``visibility`` and ``member_id`` (the caller's project when it is a member of the image).
Who may *see* an image (public, community, shared with an accepted membership, own) is
decided by the database query in api.py, as glance's visibility layer does; these rules
decide what a caller who can see an image may do with it.
"""
from oslo_policy import policy

ADMIN = "rule:admin_required"
MEMBER = "rule:admin_or_member"
READER = "rule:admin_or_reader"
ANY_READER = f"{ADMIN} or role:reader"
ANY_MEMBER = f"{ADMIN} or role:member"


def _rule(name: str, check: str, description: str) -> policy.RuleDefault:
    return policy.RuleDefault(f"image:{name}", check, description)


# glance's metadef defaults: reads by the namespace's project readers or anyone for a
# public namespace (which namespaces one sees is decided in metadefs/common.py, as
# glance's database layer); every write is admin-only (rule metadef_admin).
METADEF_READ = f"{ADMIN} or role:reader"
METADEF_READS = ("get_metadef_namespace", "get_metadef_namespaces", "get_metadef_object",
                 "get_metadef_objects", "list_metadef_resource_types",
                 "get_metadef_resource_type", "get_metadef_property",
                 "get_metadef_properties", "get_metadef_tag", "get_metadef_tags")
METADEF_WRITES = ("modify_metadef_namespace", "add_metadef_namespace",
                  "delete_metadef_namespace", "modify_metadef_object", "add_metadef_object",
                  "delete_metadef_object", "add_metadef_resource_type_association",
                  "remove_metadef_resource_type_association", "modify_metadef_property",
                  "add_metadef_property", "remove_metadef_property", "modify_metadef_tag",
                  "add_metadef_tag", "add_metadef_tags", "delete_metadef_tag",
                  "delete_metadef_tags")


def metadef_rules():
    return [_rule(name, METADEF_READ, "Read metadata definitions.") for name in METADEF_READS] \
        + [_rule(name, ADMIN, "Change metadata definitions.") for name in METADEF_WRITES]


def list_rules():
    return [
        _rule("add_image", f"{ADMIN} or (role:member and project_id:%(owner)s)",
              "Create an image owned by the caller's project."),
        _rule("get_image", ANY_READER, "Show an image the caller can see."),
        _rule("get_images", READER, "List images."),
        _rule("modify_image", MEMBER, "Update an image's attributes, properties and tags."),
        _rule("delete_image", MEMBER, "Delete an image."),
        _rule("upload_image", MEMBER, "Upload or stage image data, or import it."),
        _rule("download_image", ANY_MEMBER, "Download the data of an image the caller can see."),
        _rule("publicize_image", ADMIN, "Make an image public."),
        _rule("communitize_image", MEMBER, "Make an image community-visible."),
        # glance's 2024 defaults: the owning project's members too.
        _rule("deactivate", MEMBER, "Deactivate an image (its data can no longer be downloaded)."),
        _rule("reactivate", MEMBER, "Reactivate a deactivated image."),
        _rule("add_member", MEMBER, "Share an image with a project."),
        _rule("delete_member", MEMBER, "Stop sharing an image with a project."),
        _rule("copy_image", ADMIN, "Copy an active image's data into another store "
                                   "(import method copy-image)."),
        _rule("delete_image_location", ADMIN,
              "Remove an image's data from one store (DELETE /v2/stores/{store}/{image})."),
        _rule("tasks_api_access", ADMIN, "List and show tasks (/v2/tasks)."),
        *(_rule(name, ADMIN, what) for name, what in (
            ("cache_list", "List the image cache and its queue (GET /v2/cache)."),
            ("cache_image", "Queue an image for caching (PUT /v2/cache/{image_id})."),
            ("cache_delete", "Remove images from the cache or its queue."),
            ("cache_clean", "Clean invalid cache entries (POST /v2/cache/clean)."),
            ("cache_prune", "Prune the cache to its size limit (POST /v2/cache/prune)."),
            ("list_cached_nodes", "Where an image is cached (GET /v2/cache/nodes/{id})."))),
        *metadef_rules(),
        _rule("stores_info_detail", f"{ADMIN} or role:service",
              "List the stores with their type and properties (/v2/info/stores/detail)."),
        _rule("get_member", f"{ADMIN} or (role:reader and (project_id:%(project_id)s or "
                            "project_id:%(member_id)s))", "Show an image membership."),
        _rule("get_members", f"{ADMIN} or (role:reader and (project_id:%(project_id)s or "
                             "project_id:%(member_id)s))", "List an image's members."),
        _rule("modify_member", f"{ADMIN} or (role:member and project_id:%(member_id)s)",
              "Accept or reject an image shared with the caller's project."),
    ]
