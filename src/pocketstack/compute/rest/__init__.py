"""Nova v2.1 route table (paths below /compute): one line per URL, handlers in one module
per noun."""
from pocketstack.compute.rest import (aggregates, availability_zones, consoles,
                                      external_events, extensions, flavors, hosts, hypervisors,
                                      images,
                                      instance_actions, interfaces, keypairs, migrations,
                                      network_proxies,
                                      quota_classes, quota_sets, server_actions,
                                      server_diagnostics, server_groups, server_meta,
                                      server_security_groups, server_shares, services, servers,
                                      usage, versions, volume_attachments)

V = "/v2.1"

ROUTES = {
    "/": {"GET": versions.versions},
    V: {"GET": versions.v21},
    "/v2": {"GET": versions.v20},
    # servers
    f"{V}/servers": {"GET": servers.list_servers, "POST": servers.create_server},
    f"{V}/servers/detail": {"GET": servers.list_servers_detail},
    f"{V}/servers/{{server_id}}": {"GET": servers.show_server, "PUT": servers.update_server,
                                   "DELETE": servers.delete_server},
    f"{V}/servers/{{server_id}}/action": {"POST": server_actions.server_action},
    # novaclient's boot-from-volume URL: the same create
    f"{V}/os-volumes_boot": {"POST": servers.create_server},
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
    # server sub-resources
    f"{V}/servers/{{server_id}}/metadata": {"GET": server_meta.list_metadata,
                                            "POST": server_meta.create_metadata,
                                            "PUT": server_meta.replace_metadata},
    f"{V}/servers/{{server_id}}/metadata/{{key}}": {
        "GET": server_meta.show_metadata_item, "PUT": server_meta.update_metadata_item,
        "DELETE": server_meta.delete_metadata_item},
    f"{V}/servers/{{server_id}}/tags": {"GET": server_meta.list_tags,
                                        "PUT": server_meta.replace_tags,
                                        "DELETE": server_meta.delete_tags},
    f"{V}/servers/{{server_id}}/tags/{{tag}}": {"GET": server_meta.check_tag,
                                                "PUT": server_meta.add_tag,
                                                "DELETE": server_meta.delete_tag},
    f"{V}/servers/{{server_id}}/ips": {"GET": server_meta.list_ips},
    f"{V}/servers/{{server_id}}/ips/{{network}}": {"GET": server_meta.show_ips},
    f"{V}/servers/{{server_id}}/os-interface": {"GET": interfaces.list_interfaces,
                                                "POST": interfaces.attach_interface},
    f"{V}/servers/{{server_id}}/os-interface/{{port_id}}": {
        "GET": interfaces.show_interface, "DELETE": interfaces.detach_interface},
    f"{V}/servers/{{server_id}}/os-volume_attachments": {
        "GET": volume_attachments.list_attachments, "POST": volume_attachments.attach_volume},
    f"{V}/servers/{{server_id}}/os-volume_attachments/{{volume_id}}": {
        "GET": volume_attachments.show_attachment, "PUT": volume_attachments.update_attachment,
        "DELETE": volume_attachments.detach_volume},
    f"{V}/servers/{{server_id}}/shares": {"GET": server_shares.list_shares,
                                          "POST": server_shares.attach_share},
    f"{V}/servers/{{server_id}}/shares/{{share_id}}": {"GET": server_shares.show_share,
                                                       "DELETE": server_shares.detach_share},
    f"{V}/servers/{{server_id}}/os-security-groups": {
        "GET": server_security_groups.list_server_security_groups},
    # server groups
    f"{V}/os-server-groups": {"GET": server_groups.list_groups,
                              "POST": server_groups.create_group},
    f"{V}/os-server-groups/{{group_id}}": {"GET": server_groups.show_group,
                                           "DELETE": server_groups.delete_group},
    # host aggregates
    f"{V}/os-aggregates": {"GET": aggregates.list_aggregates,
                           "POST": aggregates.create_aggregate},
    f"{V}/os-aggregates/{{aggregate_id}}": {"GET": aggregates.show_aggregate,
                                            "PUT": aggregates.update_aggregate,
                                            "DELETE": aggregates.delete_aggregate},
    f"{V}/os-aggregates/{{aggregate_id}}/action": {"POST": aggregates.aggregate_action},
    f"{V}/os-aggregates/{{aggregate_id}}/images": {"POST": aggregates.cache_images},
    # quotas, limits, zones, services, hypervisors
    f"{V}/limits": {"GET": quota_sets.limits},
    f"{V}/os-quota-sets/{{project_id}}": {"GET": quota_sets.show, "PUT": quota_sets.update,
                                          "DELETE": quota_sets.delete},
    f"{V}/os-quota-sets/{{project_id}}/defaults": {"GET": quota_sets.defaults},
    f"{V}/os-quota-sets/{{project_id}}/detail": {"GET": quota_sets.detail},
    f"{V}/os-availability-zone": {"GET": availability_zones.list_zones},
    f"{V}/os-availability-zone/detail": {"GET": availability_zones.detail_zones},
    f"{V}/os-services": {"GET": services.list_services},
    f"{V}/os-services/{{service_id}}": {"PUT": services.update_service,
                                        "DELETE": services.delete_service},
    f"{V}/os-hypervisors": {"GET": hypervisors.list_hypervisors},
    f"{V}/os-hypervisors/detail": {"GET": hypervisors.list_hypervisors_detail},
    f"{V}/os-hypervisors/statistics": {"GET": hypervisors.statistics},
    f"{V}/os-hypervisors/{{hypervisor_id}}": {"GET": hypervisors.show_hypervisor},
    # Read routes real clients call
    f"{V}/os-hypervisors/{{hypervisor_id}}/uptime": {"GET": hypervisors.uptime},
    f"{V}/servers/{{server_id}}/diagnostics": {"GET": server_diagnostics.diagnostics},
    f"{V}/servers/{{server_id}}/topology": {"GET": server_diagnostics.topology},
    f"{V}/servers/{{server_id}}/os-server-password": {
        "GET": server_diagnostics.show_password, "DELETE": server_diagnostics.clear_password},
    f"{V}/servers/{{server_id}}/remote-consoles": {"POST": consoles.create_remote_console},
    "/console/{server_id}": {"GET": consoles.console_page},
    f"{V}/os-console-auth-tokens/{{token}}": {"GET": consoles.show_console_auth_token},
    f"{V}/os-simple-tenant-usage": {"GET": usage.list_usage},
    f"{V}/os-simple-tenant-usage/{{tenant_id}}": {"GET": usage.show_usage},
    f"{V}/os-migrations": {"GET": migrations.list_migrations},
    f"{V}/servers/{{server_id}}/migrations": {"GET": migrations.list_server_migrations},
    f"{V}/servers/{{server_id}}/migrations/{{migration_id}}": {
        "GET": migrations.show_server_migration},
    f"{V}/os-hosts": {"GET": hosts.list_hosts},
    f"{V}/os-hosts/{{host_name}}": {"GET": hosts.show_host},
    f"{V}/os-quota-class-sets/{{class_name}}": {"GET": quota_classes.show,
                                                "PUT": quota_classes.update},
    # Nova's proxies to the network service, 404 from 2.36 on
    f"{V}/os-security-groups": {"GET": network_proxies.list_security_groups,
                                "POST": network_proxies.create_security_group},
    f"{V}/os-security-groups/{{group_id}}": {
        "GET": network_proxies.show_security_group,
        "PUT": network_proxies.update_security_group,
        "DELETE": network_proxies.delete_security_group},
    f"{V}/os-security-group-rules": {"POST": network_proxies.create_security_group_rule},
    f"{V}/os-security-group-rules/{{rule_id}}": {
        "DELETE": network_proxies.delete_security_group_rule},
    f"{V}/os-floating-ip-pools": {"GET": network_proxies.list_floating_ip_pools},
    f"{V}/os-floating-ips": {"GET": network_proxies.list_floating_ips,
                             "POST": network_proxies.create_floating_ip},
    f"{V}/os-floating-ips/{{fip_id}}": {"GET": network_proxies.show_floating_ip,
                                        "DELETE": network_proxies.delete_floating_ip},
    f"{V}/os-networks": {"GET": network_proxies.list_networks},
    f"{V}/os-networks/{{network_id}}": {"GET": network_proxies.show_network},
    f"{V}/images": {"GET": images.list_images},
    f"{V}/images/detail": {"GET": images.list_images_detail},
    f"{V}/images/{{image_id}}": {"GET": images.show_image, "DELETE": images.delete_image},
    f"{V}/images/{{image_id}}/metadata": {"GET": images.list_image_metadata,
                                          "POST": images.create_image_metadata,
                                          "PUT": images.replace_image_metadata},
    f"{V}/images/{{image_id}}/metadata/{{key}}": {
        "GET": images.show_image_metadata, "PUT": images.update_image_metadata_item,
        "DELETE": images.delete_image_metadata_item},
    f"{V}/extensions": {"GET": extensions.list_extensions},
    f"{V}/extensions/{{alias}}": {"GET": extensions.show_extension},
}
