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
        _rule("stores_info_detail", f"{ADMIN} or role:service",
              "List the stores with their type and properties (/v2/info/stores/detail)."),
        _rule("get_member", f"{ADMIN} or (role:reader and (project_id:%(project_id)s or "
                            "project_id:%(member_id)s))", "Show an image membership."),
        _rule("get_members", f"{ADMIN} or (role:reader and (project_id:%(project_id)s or "
                             "project_id:%(member_id)s))", "List an image's members."),
        _rule("modify_member", f"{ADMIN} or (role:member and project_id:%(member_id)s)",
              "Accept or reject an image shared with the caller's project."),
    ]
