"""The key manager's route table (barbican's pecan controllers): one line per URL."""
from pocketstack.keymanager.rest import containers, orders, quotas, root, secrets

S = "/v1/secrets/{secret_id}"
C = "/v1/containers/{container_id}"

ROUTES = {
    "/": {"GET": root.versions},
    "/v1": {"GET": root.v1},
    "/v1/secrets": {"GET": secrets.list_secrets, "POST": secrets.create},
    S: {"GET": secrets.show, "PUT": secrets.put_payload, "DELETE": secrets.delete},
    S + "/payload": {"GET": secrets.payload},
    S + "/metadata": {"GET": secrets.get_metadata, "PUT": secrets.set_metadata,
                      "POST": secrets.add_metadatum},
    S + "/metadata/{key}": {"GET": secrets.get_metadatum, "PUT": secrets.update_metadatum,
                            "DELETE": secrets.delete_metadatum},
    S + "/consumers": {"GET": secrets.list_consumers, "POST": secrets.add_consumer,
                       "DELETE": secrets.remove_consumer},
    S + "/acl": {"GET": secrets.get_acl, "PUT": secrets.put_acl, "PATCH": secrets.patch_acl,
                 "DELETE": secrets.delete_acl},
    "/v1/containers": {"GET": containers.list_containers, "POST": containers.create},
    C: {"GET": containers.show, "DELETE": containers.delete},
    C + "/secrets": {"POST": containers.add_secret, "DELETE": containers.remove_secret},
    C + "/consumers": {"GET": containers.list_consumers, "POST": containers.add_consumer,
                       "DELETE": containers.remove_consumer},
    C + "/acl": {"GET": containers.get_acl, "PUT": containers.put_acl,
                 "PATCH": containers.patch_acl, "DELETE": containers.delete_acl},
    "/v1/orders": {"GET": orders.list_orders, "POST": orders.create},
    "/v1/orders/{order_id}": {"GET": orders.show, "DELETE": orders.delete},
    "/v1/quotas": {"GET": quotas.show_own},
    "/v1/project-quotas": {"GET": quotas.list_projects},
    "/v1/project-quotas/{project_id}": {"GET": quotas.show_project, "PUT": quotas.set_project,
                                        "DELETE": quotas.delete_project},
}
