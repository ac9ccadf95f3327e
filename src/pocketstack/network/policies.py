"""Network policy defaults, with neutron's rule names so a neutron-style policy.yaml reads
the same. Visibility (which rows a project sees at all) is applied in the queries; these
rules decide what a caller may do with what it sees.
"""
from oslo_policy import policy

ADMIN = "rule:admin_required"
MEMBER = "rule:admin_or_member"
READER = "rule:admin_or_reader"
# Networks shared with everyone and external networks are readable by every project.
SHARED_READER = f"{READER} or (role:reader and 'True':%(shared)s)"
NETWORK_OWNER = f"{ADMIN} or (role:member and project_id:%(network:project_id)s)"

_RESOURCES = ("network", "subnet", "port", "security_group", "security_group_rule", "router",
              "floatingip", "subnetpool", "address_scope", "trunk", "address_group")


def _crud() -> list:
    rules = []
    for resource in _RESOURCES:
        read = (SHARED_READER if resource in ("network", "subnet", "subnetpool",
                                               "address_scope") else READER)
        for action, check in (("create", MEMBER), ("get", read), ("update", MEMBER),
                              ("delete", MEMBER)):
            rules.append(policy.RuleDefault(f"{action}_{resource}", check,
                                            f"{action.title()} a {resource}."))
    return rules


def list_rules():
    admin_only = [
        ("create_network:shared", "Create a network shared with every project."),
        ("update_network:shared", "Share or unshare a network."),
        ("create_network:router:external", "Create an external network."),
        ("update_network:router:external", "Make a network external or internal."),
        ("create_network:provider", "Set provider attributes on create."),
        ("create_network:segments", "Create a network of several segments (multi-provider)."),
        ("update_network:provider", "Change provider attributes."),
        ("get_network:provider", "See provider attributes."),
        ("create_network:is_default", "Create the default external network."),
        ("update_network:is_default", "Make an external network the default or not."),
        ("create_port:binding", "Set binding:host_id/binding:profile on create."),
        ("update_port:binding", "Bind a port to a host or change its binding."),
        ("get_port:binding", "See binding:host_id, binding:vif_type, binding:vif_details, "
                             "binding:profile."),
        ("create_port:trusted", "Mark a port trusted (port-trusted-vif)."),
        ("update_port:trusted", "Mark a port trusted or untrusted."),
        ("create_router:external_gateway_info:enable_snat", "Choose SNAT for a gateway."),
        ("update_router:external_gateway_info:enable_snat", "Choose SNAT for a gateway."),
        ("create_router:external_gateway_info:external_fixed_ips",
         "Choose a router's gateway addresses."),
        ("update_router:external_gateway_info:external_fixed_ips",
         "Choose a router's gateway addresses."),
        ("create_floatingip:floating_ip_address", "Choose a floating IP's address."),
        ("create_address_scope:shared", "Create an address scope shared with every project."),
        ("update_address_scope:shared", "Share an address scope."),
        ("create_subnetpool:shared", "Create a subnet pool shared with every project."),
        ("create_subnetpool:is_default", "Create the default subnet pool."),
        ("update_subnetpool:is_default", "Make a subnet pool the default."),
        ("update_quota", "Set a project's network quotas."),
        ("delete_quota", "Reset a project's network quotas to the defaults."),
        ("delete_security_group:default", "Delete a project's default security group."),
        ("update_agent", "Disable an agent or describe it."),
        ("delete_agent", "Delete a dead agent."),
        ("get_dhcp-networks", "List the networks a DHCP agent hosts."),
        ("get_dhcp-agents", "List the DHCP agents hosting a network."),
        ("get_l3-routers", "List the routers an L3 agent hosts."),
        ("get_l3-agents", "List the L3 agents hosting a router."),
        ("create_l3-router", "Schedule a router to an L3 agent."),
        ("delete_l3-router", "Remove a router from an L3 agent."),
        *[(f"{action}_{kind}", f"{action.title()} a network {kind.replace('_', ' ')}.")
          for kind in ("flavor", "service_profile")
          for action in ("create", "update", "delete")],
        ("get_service_profile", "See service profiles."),
        ("create_flavor_service_profile", "Associate a service profile with a flavor."),
        ("delete_flavor_service_profile", "Disassociate a service profile from a flavor."),
        ("create_segment", "Add a segment to a network."),
        ("update_segment", "Rename a segment or change its description."),
        ("delete_segment", "Remove a segment from a network."),
    ]
    network_owner = [
        ("create_port:mac_address", "Choose a port's MAC address."),
        ("update_port:mac_address", "Change a port's MAC address."),
        ("create_port:fixed_ips:ip_address", "Choose a port's IP addresses."),
        ("update_port:fixed_ips:ip_address", "Choose a port's IP addresses."),
        ("create_port:device_owner", "Create a port owned by the network (network:*)."),
        ("update_port:device_owner", "Make a port owned by the network (network:*)."),
        ("create_port:port_security_enabled", "Disable port security on create."),
        ("update_port:port_security_enabled", "Disable port security."),
    ]
    rules = _crud()
    rules += [policy.RuleDefault(name, ADMIN, doc) for name, doc in admin_only]
    rules += [policy.RuleDefault(name, NETWORK_OWNER, doc) for name, doc in network_owner]
    rules += [
        policy.RuleDefault("get_quota", READER, "See a project's network quotas."),
        policy.RuleDefault("add_router_interface", MEMBER, "Attach a subnet or port to a "
                                                           "router."),
        policy.RuleDefault("remove_router_interface", MEMBER, "Detach a router interface."),
        policy.RuleDefault("add_extraroutes", MEMBER, "Add extra routes to a router."),
        policy.RuleDefault("remove_extraroutes", MEMBER, "Remove extra routes from a router."),
        policy.RuleDefault("update_tags", MEMBER, "Change the tags of a resource."),
        policy.RuleDefault("get_policy", f"{READER} or (role:reader and 'True':%(shared)s)",
                           "See a QoS policy."),
        policy.RuleDefault("create_policy", ADMIN, "Create a QoS policy."),
        policy.RuleDefault("update_policy", ADMIN, "Update a QoS policy."),
        policy.RuleDefault("delete_policy", ADMIN, "Delete a QoS policy."),
        policy.RuleDefault("create_rbac_policy", MEMBER, "Share an object of one's own."),
        policy.RuleDefault("create_rbac_policy:target_tenant",
                           f"{ADMIN} or not '*':%(target_tenant)s",
                           "Only admins share with every project ('*')."),
        policy.RuleDefault("get_rbac_policy", READER, "See an RBAC policy."),
        policy.RuleDefault("update_rbac_policy", MEMBER, "Change an RBAC policy's target."),
        policy.RuleDefault("update_rbac_policy:target_tenant",
                           f"{ADMIN} or not '*':%(target_tenant)s",
                           "Only admins share with every project ('*')."),
        policy.RuleDefault("delete_rbac_policy", MEMBER, "Delete an RBAC policy."),
        *[policy.RuleDefault(f"{verb}_external_gateways", MEMBER,
                             f"{verb.title()} external gateways of a router.")
          for verb in ("add", "update", "remove")],
        *[policy.RuleDefault(f"{verb}_external_gateways:external_gateways:{key}", ADMIN,
                             f"Choose {key} of a router's external gateways.")
          for verb in ("add", "update") for key in ("enable_snat", "external_fixed_ips")],
        policy.RuleDefault("add_addresses", MEMBER, "Add addresses to an address group."),
        policy.RuleDefault("remove_addresses", MEMBER,
                           "Remove addresses from an address group."),
        policy.RuleDefault("add_prefixes", MEMBER, "Add prefixes to a subnet pool."),
        policy.RuleDefault("remove_prefixes", MEMBER, "Remove prefixes from a subnet pool."),
        policy.RuleDefault("add_subports", MEMBER, "Add subports to a trunk."),
        policy.RuleDefault("remove_subports", MEMBER, "Remove subports from a trunk."),
    ]
    for rule_type in ("bandwidth_limit", "dscp_marking", "minimum_bandwidth",
                      "minimum_packet_rate", "packet_rate_limit"):
        rules += [policy.RuleDefault(f"{action}_policy_{rule_type}_rule", ADMIN,
                                     f"{action.title()} a {rule_type} rule of a QoS policy.")
                  for action in ("create", "update", "delete")]
    return rules
