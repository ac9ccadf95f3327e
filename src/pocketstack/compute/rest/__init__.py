"""Nova v2.1 route table (paths below /compute): one line per URL, handlers in one module
per noun."""
from pocketstack.compute.rest import (external_events, flavors, instance_actions, keypairs,
                                      server_actions, servers, versions)

V = "/v2.1"

ROUTES = {
    "/": {"GET": versions.versions},
    V: {"GET": versions.v21},
    # servers
    f"{V}/servers": {"GET": servers.list_servers, "POST": servers.create_server},
    f"{V}/servers/detail": {"GET": servers.list_servers_detail},
    f"{V}/servers/{{server_id}}": {"GET": servers.show_server, "PUT": servers.update_server,
                                   "DELETE": servers.delete_server},
    f"{V}/servers/{{server_id}}/action": {"POST": server_actions.server_action},
    f"{V}/servers/{{server_id}}/os-instance-actions": {"GET": instance_actions.list_actions},
    f"{V}/servers/{{server_id}}/os-instance-actions/{{request_id}}": {
        "GET": instance_actions.show_action},
    f"{V}/os-server-external-events": {"POST": external_events.create_events},
    # flavors
    f"{V}/flavors": {"GET": flavors.list_flavors, "POST": flavors.create_flavor},
    f"{V}/flavors/detail": {"GET": flavors.list_flavors_detail},
    f"{V}/flavors/{{flavor_id}}": {"GET": flavors.show_flavor, "PUT": flavors.update_flavor,
                                   "DELETE": flavors.delete_flavor},
    f"{V}/flavors/{{flavor_id}}/os-extra_specs": {"GET": flavors.list_extra_specs,
                                                  "POST": flavors.create_extra_specs},
    f"{V}/flavors/{{flavor_id}}/os-extra_specs/{{key}}": {
        "GET": flavors.show_extra_spec, "PUT": flavors.update_extra_spec,
        "DELETE": flavors.delete_extra_spec},
    f"{V}/flavors/{{flavor_id}}/os-flavor-access": {"GET": flavors.list_access},
    f"{V}/flavors/{{flavor_id}}/action": {"POST": flavors.flavor_action},
    # keypairs
    f"{V}/os-keypairs": {"GET": keypairs.list_keypairs, "POST": keypairs.create_keypair},
    f"{V}/os-keypairs/{{name}}": {"GET": keypairs.show_keypair,
                                  "DELETE": keypairs.delete_keypair},
}
