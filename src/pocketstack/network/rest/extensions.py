"""/v2.0/extensions: exactly the extensions this service implements (clients and test
tools decide what to use from this list)."""
from __future__ import annotations

from pocketstack.network import exceptions as exc
from pocketstack.wsgi import routing

UPDATED = "2024-01-01T00:00:00-00:00"

# alias -> (name, description)
EXTENSIONS = {
    "address-group": ("Address group", "Support address group"),
    "address-scope": ("Address scope", "Address scopes extension."),
    "agent": ("agent", "The agent management extension."),
    "availability_zone": ("Availability Zone", "The availability zone extension."),
    "flavors": ("Neutron Service Flavors",
                "Flavor specification for Neutron advanced services."),
    "floating-ip-port-forwarding": ("Floating IP Port Forwarding",
                                    "Provide a way to configure port forwarding for a "
                                    "floating IP"),
    "floating-ip-port-forwarding-port-ranges": ("Floating IP Port Forwarding support port "
                                                "ranges", "Add support to port ranges"),
    "fip-port-details": ("Floating IP Port Details Extension",
                         "Add port_details attribute to Floating IP resource"),
    "l3_agent_scheduler": ("L3 Agent Scheduler", "Schedule routers among l3 agents"),
    "segment": ("Segment", "Segments extension."),
    "trunk-details": ("Trunk port details", "Expose trunk port details"),
    "vlan-transparent": ("Vlantransparent", "Provides Vlan Transparent Networks"),
    "network-ip-availability": ("Network IP Availability",
                                "Provides IP availability data for each network and "
                                "subnet."),
    "router_availability_zone": ("Router Availability Zone",
                                 "Availability zone support for router."),
    "subnet-service-types": ("Subnet service types",
                             "Provides ability to set the subnet service_types field"),
    "subnet_allocation": ("Subnet Allocation", "Enables allocation of subnets from a subnet "
                                               "pool"),
    "default-subnetpools": ("Default Subnetpools", "Provides ability to mark and use a "
                                                   "subnetpool as the default."),
    "subnetpool-prefix-ops": ("Subnet Pool Prefix Operations",
                              "Provides support for adjusting the prefix list of subnet "
                              "pools"),
    "trunk": ("Trunk Extension", "Provides support for trunk ports"),
    "service-type": ("Neutron Service Type Management",
                     "API for retrieving service providers for Neutron advanced services"),
    "allowed-address-pairs": ("Allowed Address Pairs", "Provides allowed address pairs"),
    "binding": ("Port Binding", "Expose port bindings of a virtual port to external "
                                "application"),
    "dns-integration": ("DNS Integration", "Provides integration with DNS."),
    "dns-domain-ports": ("dns_domain for ports", "Allows the DNS domain to be specified for "
                                                 "a network port."),
    "dns-integration-domain-keywords": ("DNS domain names with keywords allowed",
                                        "Allows to use keywords like <project_id>, "
                                        "<project_name>, <user_id> and <user_name> as DNS "
                                        "domain name"),
    "external-net": ("Neutron external network", "Adds external network attribute to "
                                                 "network resource."),
    "extra_dhcp_opt": ("Neutron Extra DHCP options",
                       "Extra options configuration for DHCP. For example PXE boot options "
                       "to DHCP clients can be specified (e.g. tftp-server, "
                       "server-ip-address, bootfile-name)"),
    "port-trusted-vif": ("Port trusted vif", "Expose port 'trusted' attribute in the API"),
    "ext-gw-mode": ("Neutron L3 Configurable external gateway mode",
                    "Extension of the router abstraction for specifying whether SNAT should "
                    "occur on the external gateway"),
    "external-gateway-multihoming": ("Neutron L3 External Gateway Multihoming",
                                     "Allow multiple external gateway ports per router"),
    "qos-gateway-ip": ("Router gateway IP QoS",
                       "The Router gateway IP Quality of Service extension"),
    "extraroute-atomic": ("Atomically add/remove extra routes",
                          "Edit extra routes of a router on server side by atomically "
                          "adding/removing extra routes"),
    "extraroute": ("Neutron Extra Route", "Extra routes configuration for L3 router"),
    "filter-validation": ("Filter parameters validation",
                          "Provides validation on filter parameters."),
    "ip-substring-filtering": ("IP address substring filtering",
                               "Provides IP address substring filtering when listing ports"),
    "net-mtu": ("Network MTU", "Provides MTU attribute for a network resource."),
    "net-mtu-writable": ("Network MTU (writable)", "Provides a writable MTU attribute for a "
                                                   "network resource."),
    "pagination": ("Pagination support", "Extension that indicates that pagination is "
                                         "enabled."),
    "port-security": ("Port Security", "Provides port security"),
    "project-id": ("project_id field enabled", "Extension that indicates that project_id "
                                               "field is enabled."),
    "provider": ("Provider Network", "Expose mapping of virtual networks to physical "
                                     "networks"),
    "multi-provider": ("Multi Provider Network", "Expose mapping of virtual networks to "
                                                 "multiple physical networks"),
    "quotas": ("Quota management support", "Expose functions for quotas management per "
                                           "project"),
    "quota_details": ("Quota details management support",
                      "Expose functions for quotas usage statistics per project"),
    "quota-check-limit": ("Quota engine limit check",
                          "Check the quota limit before setting a new value"),
    "router": ("Neutron L3 Router", "Router abstraction for basic L3 forwarding between L2 "
                                    "Neutron networks and access to external networks via "
                                    "a NAT gateway."),
    "security-group": ("security-group", "The security groups extension."),
    "security-groups-normalized-cidr": ("Security group rule normalized CIDR",
                                        "Add new field with normalized remote_ip_prefix cidr "
                                        "in SG rule"),
    "sorting": ("Sorting support", "Extension that indicates that sorting is enabled."),
    "standard-attr-description": ("standard-attr-description", "Extension to add "
                                  "descriptions to standard attributes"),
    "standard-attr-revisions": ("Resource revision numbers", "This extension will display "
                                "the revision number of neutron resources."),
    "revision-if-match": ("If-Match constraints based on revision_number",
                          "Extension indicating that If-Match based on revision_number is "
                          "supported."),
    "standard-attr-tag": ("Tag support for resources with standard attribute",
                          "Enables to set tag on resources with standard attribute."),
    "standard-attr-timestamp": ("Resource timestamps", "Adds created_at and updated_at "
                                "fields to all Neutron resources that have Neutron standard "
                                "attributes."),
    "stateful-security-group": ("Stateful security group", "Indicates if the security "
                                "group is stateful or not"),
    "qos": ("Quality of Service", "The Quality of Service extension."),
    "qos-bw-limit-direction": ("Direction for QoS bandwidth limit rule",
                               "Allow to configure QoS bandwidth limit rule with specific "
                               "direction: ingress or egress"),
    "qos-bw-minimum-ingress": ("Ingress direction for QoS minimum bandwidth rule",
                               "Allow to configure QoS minumum bandwidth rule with ingress "
                               "direction."),
    "qos-pps": ("QoS Rule Type Packet per Second Extension",
                "Add QoS Rule Type Packet per Second"),
    "qos-pps-minimum": ("QoS minimum packet rate rule",
                        "Allow to configure QoS minimum packet rate rule."),
    "qos-rules-alias": ("Quality of Service rules alias API",
                        "API to enable GET, PUT and DELETE operations on QoS policy rules "
                        "without specifying policy ID"),
    "qos-pps-minimum-rule-alias": ("QoS minimum packet rate rule alias",
                                   "API to enable GET, PUT and DELETE operations on QoS "
                                   "minimum packet rate rule without specifying policy ID"),
    "qos-rule-type-details": ("Details of QoS rule types",
                              "Expose details about QoS rule types supported by loaded "
                              "backend drivers"),
    "qos-rule-type-filter": ("QoS rule type filter",
                             "Add the \"all_supported\" and \"all_rules\" flags to the "
                             "rule type list query"),
    "qos-default": ("QoS default policy", "Expose the QoS default policy per project"),
    "qos-port-network-policy": ("QoS port network policy ID",
                                "Adds a the QoS network ID to the port definition"),
    "rbac-policies": ("RBAC Policies", "Allows creation and modification of policies that "
                                       "control tenant access to resources."),
    "rbac-security-groups": ("Add security_group type to network RBAC",
                             "Add security_group type to network RBAC"),
    "tag-ports-during-bulk-creation": ("Tag Ports During Bulk Creation",
                                       "Allow to tag ports during bulk creation"),
}


def _extension(alias: str) -> dict:
    name, description = EXTENSIONS[alias]
    return {"alias": alias, "name": name, "description": description, "updated": UPDATED,
            "links": []}


def list_extensions(req):
    return routing.json_response({"extensions": [_extension(a) for a in sorted(EXTENSIONS)]})


def get_extension(req):
    alias = req.params["alias"]
    if alias not in EXTENSIONS:
        raise exc.ExtensionNotFound(alias)
    return routing.json_response({"extension": _extension(alias)})
