"""Volume policy defaults, after cinder's secure-RBAC defaults (cinder/policies/): project
members manage their volumes, readers read them, admins manage types, quotas, services
and the admin actions. The target carries the volume's ``project_id``."""
from oslo_policy import policy

ADMIN = "rule:admin_required"
MEMBER = "rule:admin_or_member"
READER = "rule:admin_or_reader"
ANY_READER = f"{ADMIN} or role:reader"


def _rule(name: str, check: str, description: str) -> policy.RuleDefault:
    return policy.RuleDefault(name, check, description)


def list_rules():
    member = [
        ("volume:create", "Create a volume."),
        ("volume:update", "Update a volume's name and description."),
        ("volume:delete", "Delete a volume."),
        ("volume:extend", "Extend a volume."),
        ("volume:retype", "Change a volume's type."),
        ("volume:reimage", "Write an image over a volume (os-reimage)."),
        ("volume:update_volume_metadata", "Set a volume's metadata."),
        ("volume:delete_volume_metadata", "Delete a volume's metadata key."),
        ("volume:attachment_create", "Create (reserve) an attachment."),
        ("volume:attachment_update", "Connect an attachment."),
        ("volume:attachment_complete", "Mark an attachment complete."),
        ("volume:attachment_delete", "Delete an attachment."),
        ("volume:create_snapshot", "Create a snapshot."),
        ("volume:update_snapshot", "Update a snapshot."),
        ("volume:delete_snapshot", "Delete a snapshot."),
        ("volume:update_snapshot_metadata", "Set a snapshot's metadata."),
        ("volume:create_transfer", "Offer a volume for transfer to another project."),
        ("volume:delete_transfer", "Withdraw a volume transfer."),
        ("volume:accept_transfer", "Accept a volume transfer into one's project."),
        ("backup:create", "Back up a volume."),
        ("backup:update", "Update a backup."),
        ("backup:delete", "Delete a backup."),
        ("backup:restore", "Restore a backup into a volume."),
        ("volume_extension:volume_actions:upload_image", "Upload a volume to an image."),
        ("volume_extension:volume_actions:update_bootable", "Set a volume's bootable flag."),
        ("volume_extension:volume_actions:update_readonly", "Set a volume's read-only flag."),
        ("volume_extension:volume_image_metadata:set", "Set a volume's image metadata."),
        ("volume_extension:volume_image_metadata:remove",
         "Remove a key from a volume's image metadata."),
        ("snapshot_extension:snapshot_actions:update_snapshot_status",
         "Report a snapshot's status and progress (used by services)."),
    ] + [(f"volume_extension:volume_actions:{a}", f"The legacy {a} volume action.")
         for a in ("reserve", "unreserve", "begin_detaching", "roll_detaching", "initialize",
                   "terminate", "attach", "detach")]
    reader = [
        ("volume:get", "Show a volume."),
        ("volume:get_all", "List volumes."),
        ("volume_extension:volume_encryption_metadata",
         "Show a volume's encryption metadata (its key id, its type's encryption)."),
        ("volume:get_snapshot", "Show a snapshot."),
        ("volume:get_volume_metadata", "Show a volume's (image) metadata."),
        ("volume_extension:volume_image_metadata:show", "Show a volume's image metadata."),
        ("volume:get_all_snapshots", "List snapshots."),
        ("volume:get_transfer", "Show a volume transfer."),
        ("volume:get_all_transfers", "List volume transfers."),
        ("backup:get", "Show a backup."),
        ("backup:get_all", "List backups."),
        ("volume_extension:quotas:show", "Show a project's quotas."),
        ("volume_extension:volume_type_access", "List who may use a private type."),
    ]
    admin = [
        ("volume_extension:types_manage", "Create, update and delete volume types."),
        ("volume_extension:quotas:update", "Change a project's quotas."),
        ("volume_extension:quotas:delete", "Reset a project's quotas to the defaults."),
        ("volume_extension:quota_classes", "Show and update quota classes (the default "
         "class sets every project's defaults)."),
        ("volume_extension:services:index", "List the volume services."),
        ("volume_extension:services:update", "Enable or disable a volume service."),
        ("volume_extension:capabilities", "Show a volume backend's capabilities."),
        ("volume_extension:volume_manage", "Manage existing storage as a volume."),
        ("volume_extension:volume_unmanage", "Unmanage a volume (its data is kept)."),
        ("volume_extension:list_manageable", "List what a backend holds that can be "
         "managed."),
        ("snapshot_extension:snapshot_manage", "Manage existing storage as a snapshot."),
        ("snapshot_extension:snapshot_unmanage", "Unmanage a snapshot (its data is kept)."),
        ("snapshot_extension:list_manageable", "List the snapshots a backend can manage."),
        ("scheduler_extension:scheduler_stats:get_pools",
         "List the backends' pools with their capacity."),
        ("volume_extension:volume_admin_actions:reset_status", "Reset a volume's status."),
        ("volume_extension:volume_admin_actions:force_delete", "Force-delete a volume."),
        ("volume_extension:volume_admin_actions:force_detach", "Force-detach a volume."),
        ("volume_extension:volume_admin_actions:extend_volume_completion",
         "Complete an extend of an in-use volume (nova, os-extend_volume_completion)."),
        ("volume_extension:snapshot_admin_actions:reset_status", "Reset a snapshot's status."),
        ("volume_extension:snapshot_admin_actions:force_delete", "Force-delete a snapshot."),
        ("volume_extension:backup_admin_actions:reset_status", "Reset a backup's status."),
        ("volume_extension:backup_admin_actions:force_delete", "Force-delete a backup."),
        ("volume_extension:qos_specs_manage:create", "Create qos specs."),
        ("volume_extension:default_set_or_update", "Set a project's default volume type."),
        ("volume_extension:default_get", "Show a project's default volume type."),
        ("volume_extension:default_get_all", "List the projects' default volume types."),
        ("volume_extension:default_unset", "Unset a project's default volume type."),
        ("volume_extension:volume_type_encryption:create", "Create a type's encryption."),
        ("volume_extension:volume_type_encryption:get", "Show a type's encryption."),
        ("volume_extension:volume_type_encryption:update", "Update a type's encryption."),
        ("volume_extension:volume_type_encryption:delete", "Delete a type's encryption."),
        ("volume_extension:qos_specs_manage:get", "Show qos specs."),
        ("volume_extension:qos_specs_manage:get_all", "List qos specs and associations."),
        ("volume_extension:qos_specs_manage:update",
         "Update qos specs and (dis)associate them with volume types."),
        ("volume_extension:qos_specs_manage:delete", "Delete qos specs or their keys."),
    ]
    member += [
        ("group:create", "Create a group."), ("group:update", "Update a group."),
        ("group:delete", "Delete a group."),
        ("group:create_group_snapshot", "Snapshot a group."),
        ("group:delete_group_snapshot", "Delete a group snapshot."),
        ("group:update_group_snapshot", "Update a group snapshot."),
    ] + [(f"group:{a}", f"The group action {a}.") for a in (
        "enable_replication", "disable_replication", "failover_replication",
        "list_replication_targets")]
    reader += [
        ("group:get", "Show a group."), ("group:get_all", "List groups."),
        ("group:get_group_snapshot", "Show a group snapshot."),
        ("group:get_all_group_snapshots", "List group snapshots."),
    ]
    admin += [(name, description) for name, description in (
        ("group:group_types:create", "Create a group type."),
        ("group:group_types:update", "Update a group type."),
        ("group:group_types:delete", "Delete a group type."),
        ("group:access_group_types_specs", "See group types' group_specs."),
        ("group:group_types_specs:get", "Show a group type's spec."),
        ("group:group_types_specs:get_all", "List a group type's specs."),
        ("group:group_types_specs:create", "Set group type specs."),
        ("group:group_types_specs:update", "Update a group type spec."),
        ("group:group_types_specs:delete", "Delete a group type spec."),
        ("group:group_project_attribute", "See a group's project (3.58)."),
        ("group:group_snapshot_project_attribute", "See a group snapshot's project."),
        ("group:reset_status", "Reset a group's status."),
        ("group:reset_group_snapshot_status", "Reset a group snapshot's status."),
    )]
    return ([_rule(n, MEMBER, d) for n, d in member]
            + [_rule(n, READER, d) for n, d in reader]
            + [_rule(n, ADMIN, d) for n, d in admin])
