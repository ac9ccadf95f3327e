"""Cinder v3 route table. Every v3 path exists in both catalog forms cinder accepts since
Yoga: ``/v3/{project_id}/volumes`` and ``/v3/volumes`` (the project id from the token);
the project-less form comes first so a literal collection name is never read as a project
id."""
from pocketstack.volume.rest import attachments, versions, volume_actions, volumes

V3 = {
    "/volumes": {"GET": volumes.list_volumes, "POST": volumes.create},
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
    "/attachments": {"GET": attachments.list_attachments, "POST": attachments.create},
    "/attachments/detail": {"GET": attachments.list_detail},
    "/attachments/{attachment_id}": {"GET": attachments.show, "PUT": attachments.update,
                                     "DELETE": attachments.delete},
    "/attachments/{attachment_id}/action": {"POST": attachments.action},
}


def _routes() -> dict:
    routes = {"/": {"GET": versions.versions}, "/v3": {"GET": versions.v3}}
    for path, methods in V3.items():
        routes["/v3" + path] = methods
    for path, methods in V3.items():
        routes["/v3/{project_id}" + path] = methods
    routes["/v3/{project_id}"] = {"GET": versions.v3}
    return routes


ROUTES = _routes()
