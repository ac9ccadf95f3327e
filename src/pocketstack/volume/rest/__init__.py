"""Cinder v3 route table. Every v3 path exists in both catalog forms cinder accepts since
Yoga: ``/v3/{project_id}/volumes`` and ``/v3/volumes`` (the project id from the token);
the project-less form comes first so a literal collection name is never read as a project
id."""
import functools

from pocketstack.common import exceptions
from pocketstack.volume.rest import (attachments, backups, info, quota_sets, snapshots, types,
                                     microversion, versions, volume_actions, volumes)
from pocketstack.volume.rest import (capabilities, consistency_groups, default_types, groups,
                                     manage, qos_specs, transfers, type_encryption)

V3 = {
    "/volumes": {"GET": volumes.list_volumes, "POST": volumes.create,
                 "PUT": volumes.empty_id, "DELETE": volumes.empty_id},
    "/volumes/detail": {"GET": volumes.list_detail},
    "/volumes/summary": {"GET": volumes.summary},
    "/volumes/{volume_id}": {"GET": volumes.show, "PUT": volumes.update,
                             "DELETE": volumes.delete},
    "/volumes/{volume_id}/action": {"POST": volume_actions.action},
    "/volumes/{volume_id}/metadata": {"GET": volumes.show_metadata,
                                      "POST": volumes.create_metadata,
                                      "PUT": volumes.replace_metadata},
    "/volumes/{volume_id}/metadata/{key}": {"GET": volumes.show_metadata_key,
                                            "PUT": volumes.update_metadata_key,
                                            "DELETE": volumes.delete_metadata_key},
    "/volumes/{volume_id}/encryption": {"GET": type_encryption.volume_index},
    "/volumes/{volume_id}/encryption/{key}": {"GET": type_encryption.volume_show},
    "/attachments": {"GET": attachments.list_attachments, "POST": attachments.create},
    "/attachments/detail": {"GET": attachments.list_detail},
    "/attachments/{attachment_id}": {"GET": attachments.show, "PUT": attachments.update,
                                     "DELETE": attachments.delete},
    "/attachments/{attachment_id}/action": {"POST": attachments.action},
    "/snapshots": {"GET": snapshots.list_snapshots, "POST": snapshots.create},
    "/snapshots/detail": {"GET": snapshots.list_detail},
    "/snapshots/{snapshot_id}": {"GET": snapshots.show, "PUT": snapshots.update,
                                 "DELETE": snapshots.delete},
    "/snapshots/{snapshot_id}/action": {"POST": snapshots.action},
    "/snapshots/{snapshot_id}/metadata": {"GET": snapshots.show_metadata,
                                          "POST": snapshots.create_metadata,
                                          "PUT": snapshots.replace_metadata},
    "/snapshots/{snapshot_id}/metadata/{key}": {"GET": snapshots.show_metadata_key,
                                                "PUT": snapshots.update_metadata_key,
                                                "DELETE": snapshots.delete_metadata_key},
    "/backups": {"GET": backups.list_backups, "POST": backups.create},
    "/backups/detail": {"GET": backups.list_detail},
    "/backups/{backup_id}": {"GET": backups.show, "PUT": backups.update,
                             "DELETE": backups.delete},
    "/backups/{backup_id}/restore": {"POST": backups.restore},
    "/backups/{backup_id}/action": {"POST": backups.action},
    "/types": {"GET": types.list_types, "POST": types.create},
    "/types/{type_id}": {"GET": types.show, "PUT": types.update, "DELETE": types.delete},
    "/types/{type_id}/extra_specs": {"GET": types.list_specs, "POST": types.create_specs},
    "/types/{type_id}/extra_specs/{key}": {"GET": types.show_spec, "PUT": types.update_spec,
                                           "DELETE": types.delete_spec},
    "/types/{type_id}/os-volume-type-access": {"GET": types.list_access},
    "/types/{type_id}/action": {"POST": types.action},
    "/types/{type_id}/encryption": {"GET": type_encryption.index,
                                    "POST": type_encryption.create},
    "/types/{type_id}/encryption/{encryption_id}": {"GET": type_encryption.show,
                                                    "PUT": type_encryption.update,
                                                    "DELETE": type_encryption.delete},
    **{f"/{collection}": {"GET": transfers.list_transfers, "POST": transfers.create}
       for collection in ("os-volume-transfer", "volume-transfers")},
    **{f"/{collection}/detail": {"GET": transfers.list_detail}
       for collection in ("os-volume-transfer", "volume-transfers")},
    **{f"/{collection}/{{transfer_id}}": {"GET": transfers.show, "DELETE": transfers.delete}
       for collection in ("os-volume-transfer", "volume-transfers")},
    **{f"/{collection}/{{transfer_id}}/accept": {"POST": transfers.accept}
       for collection in ("os-volume-transfer", "volume-transfers")},
    "/group_types": {"GET": groups.list_group_types, "POST": groups.create_group_type},
    "/group_types/{group_type_id}": {"GET": groups.show_group_type,
                                     "PUT": groups.update_group_type,
                                     "DELETE": groups.delete_group_type},
    "/group_types/{group_type_id}/group_specs": {"GET": groups.list_specs,
                                                 "POST": groups.create_specs},
    "/group_types/{group_type_id}/group_specs/{key}": {"GET": groups.show_spec,
                                                       "PUT": groups.update_spec,
                                                       "DELETE": groups.delete_spec},
    "/groups": {"GET": groups.list_groups, "POST": groups.create_group},
    "/groups/detail": {"GET": groups.list_groups_detail},
    "/groups/action": {"POST": groups.create_group_from_src},
    "/groups/{group_id}": {"GET": groups.show_group, "PUT": groups.update_group},
    "/groups/{group_id}/action": {"POST": groups.group_action},
    "/group_snapshots": {"GET": groups.list_group_snapshots,
                         "POST": groups.create_group_snapshot},
    "/group_snapshots/detail": {"GET": groups.list_group_snapshots_detail},
    "/group_snapshots/{group_snapshot_id}": {"GET": groups.show_group_snapshot,
                                             "DELETE": groups.delete_group_snapshot},
    "/group_snapshots/{group_snapshot_id}/action": {"POST": groups.group_snapshot_action},
    "/consistencygroups": {"GET": consistency_groups.list_cgs,
                           "POST": consistency_groups.create_cg},
    "/consistencygroups/detail": {"GET": consistency_groups.list_cgs_detail},
    "/consistencygroups/create_from_src": {"POST": consistency_groups.create_cg_from_src},
    "/consistencygroups/{cg_id}": {"GET": consistency_groups.show_cg,
                                   "PUT": consistency_groups.update_cg},
    "/consistencygroups/{cg_id}/update": {"PUT": consistency_groups.update_cg},
    "/consistencygroups/{cg_id}/delete": {"POST": consistency_groups.delete_cg},
    "/cgsnapshots": {"GET": consistency_groups.list_cgsnapshots,
                     "POST": consistency_groups.create_cgsnapshot},
    "/cgsnapshots/detail": {"GET": consistency_groups.list_cgsnapshots_detail},
    "/cgsnapshots/{cgsnapshot_id}": {"GET": consistency_groups.show_cgsnapshot,
                                     "DELETE": consistency_groups.delete_cgsnapshot},
    "/default-types": {"GET": default_types.list_defaults},
    "/default-types/{target_project}": {"GET": default_types.show,
                                        "PUT": default_types.set_default,
                                        "DELETE": default_types.unset},
    "/qos-specs": {"GET": qos_specs.list_specs, "POST": qos_specs.create},
    "/qos-specs/{qos_id}": {"GET": qos_specs.show, "PUT": qos_specs.update,
                            "DELETE": qos_specs.delete},
    "/qos-specs/{qos_id}/delete_keys": {"PUT": qos_specs.delete_keys},
    "/qos-specs/{qos_id}/associations": {"GET": qos_specs.associations},
    "/qos-specs/{qos_id}/associate": {"GET": qos_specs.associate},
    "/qos-specs/{qos_id}/disassociate": {"GET": qos_specs.disassociate},
    "/qos-specs/{qos_id}/disassociate_all": {"GET": qos_specs.disassociate_all},
    "/os-quota-sets/{target_project}/defaults": {"GET": quota_sets.defaults},
    "/os-quota-sets/{target_project}": {"GET": quota_sets.show, "PUT": quota_sets.update,
                                        "DELETE": quota_sets.delete},
    "/os-quota-class-sets/{class_name}": {"GET": quota_sets.show_class,
                                          "PUT": quota_sets.update_class},
    "/extensions": {"GET": info.extensions},
    "/limits": {"GET": info.limits},
    "/os-availability-zone": {"GET": info.availability_zones},
    "/os-services": {"GET": info.services},
    "/os-services/{action}": {"PUT": info.update_service},
    "/scheduler-stats/get_pools": {"GET": info.get_pools},
    "/capabilities/{host}": {"GET": capabilities.show},
    "/os-volume-manage": {"POST": manage.create},
    "/manageable_volumes": {"GET": manage.list_manageable, "POST": manage.create_v3},
    "/manageable_volumes/detail": {"GET": manage.list_manageable_detail},
    "/os-snapshot-manage": {"POST": manage.create_snapshot},
    "/manageable_snapshots": {"GET": manage.list_manageable_snapshots,
                              "POST": manage.create_snapshot_v3},
    "/manageable_snapshots/detail": {"GET": manage.list_manageable_snapshots_detail},
    "/resource_filters": {"GET": capabilities.resource_filters},
    "/messages": {"GET": info.list_messages},
    "/messages/{message_id}": {"GET": info.show_message},
}


def _echo_version(handler):
    """Errors of a v3 call echo the microversion too (as cinder's); a malformed or
    unsupported version header is itself the error and echoes nothing."""
    @functools.wraps(handler)
    def run(req):
        try:
            return handler(req)
        except exceptions.PocketstackError as error:
            try:
                error.headers = {**microversion.headers(req), **error.headers}
            except exceptions.PocketstackError:
                pass
            raise
    return run


def _routes() -> dict:
    routes = {"/": {"GET": versions.versions}, "/v3": {"GET": versions.v3}}
    wrapped = {path: {method: _echo_version(h) for method, h in methods.items()}
               for path, methods in V3.items()}
    for path, methods in wrapped.items():
        routes["/v3" + path] = methods
    for path, methods in wrapped.items():
        routes["/v3/{project_id}" + path] = methods
    routes["/v3/{project_id}"] = {"GET": versions.v3}
    return routes


ROUTES = _routes()
