"""Network service options ([network] and [network_quotas])."""
from oslo_config import cfg, types

OPTS = {
    "network": [
        cfg.StrOpt("dhcp_dir",
                   help="Where the DHCP files (dnsmasq host, addn_hosts, opts, leases) are "
                        "written, one directory per network. Default: "
                        "<data dir>/network/dhcp."),
        cfg.FloatOpt("dhcp_batch_interval", default=0.05, min=0.0,
                     help="Seconds the DHCP file writer lets changes gather after a rewrite "
                          "before the next one (a rewrite costs O(ports on the network))."),
        cfg.BoolOpt("allow_reverse_dns_lookup", default=True,
                    help="With a floating IP's A record, publish its PTR record too, in a "
                         "reverse zone (/24) of the DNS service's managed project, made when "
                         "missing (neutron's [designate] option of that name)."),
        cfg.StrOpt("dns_domain", default="openstacklocal",
                   help="Domain of the host names in DHCP files and dns_assignment. With the "
                        "default, ports are named host-<ip> whatever their dns_name, as in "
                        "neutron."),
        cfg.IntOpt("dhcp_lease_duration", default=86400, min=-1,
                   help="DHCP lease time in seconds written to the leases file (-1: "
                        "infinite)."),
        cfg.StrOpt("base_mac", default="fa:16:3e:00:00:00",
                   help="Base MAC address of ports; the last three octets are random."),
        cfg.StrOpt("tenant_network_type", default="geneve",
                   choices=["geneve", "vxlan", "vlan", "flat", "local"],
                   help="Network type of networks created without provider attributes."),
        cfg.ListOpt("vni_ranges", default=[],
                    help="<vni_min>:<vni_max> ranges of VXLAN VNIs enumerating those "
                         "available for networks of type vxlan given no "
                         "provider:segmentation_id (ML2's [ml2_type_vxlan] vni_ranges); "
                         "an admin may still name any VNI. Empty: 1 through 16777215."),
        cfg.IntOpt("global_physnet_mtu", default=1500, min=68,
                   help="MTU of the underlying physical network; overlay networks get this "
                        "minus their encapsulation overhead."),
        cfg.StrOpt("vif_type", default="ovs",
                   help="binding:vif_type reported for ports bound to a host."),
        cfg.IntOpt("max_dns_nameservers", default=5, help="DNS servers per subnet."),
        cfg.IntOpt("max_subnet_host_routes", default=20, help="Host routes per subnet."),
        cfg.IntOpt("max_routes", default=30, min=0,
                   help="Extra routes per router (neutron's max_routes): an update of "
                        "routes or add_extraroutes that would leave more is refused."),
        cfg.IntOpt("max_fixed_ips_per_port", default=5, help="Fixed IPs per port."),
        cfg.IntOpt("max_allowed_address_pair", default=10,
                   help="Allowed address pairs per port."),
        cfg.BoolOpt("notify_compute_on_port_status_changes", default=True,
                    help="Send network-vif-plugged/-unplugged/-deleted events to compute "
                         "(os-server-external-events) for ports of servers."),
        cfg.StrOpt("compute_url",
                   help="Compute API root for those events. Default: "
                        "<public_url>/compute/v2.1."),
        cfg.FloatOpt("compute_timeout", default=10.0, min=0.1,
                     help="Seconds to wait for compute to accept events."),
        # Real guest networking on this host (network/agent): needs root.
        cfg.BoolOpt("host_networking", default=False,
                    help="Run the host networking agent: per network with ports bound to "
                         "a bridge host, a Linux bridge brq<network id>, a qdhcp-<network "
                         "id> namespace with dnsmasq and the metadata proxy, and "
                         "nftables security group rules. Needs root. Also on when "
                         "[DEFAULT] compute_driver is libvirt."),
        cfg.ListOpt("bridge_hosts", default=[],
                    help="Compute hosts whose ports are plugged into this host's bridges "
                         "(binding:vif_type bridge). Default: [DEFAULT] host."),
        cfg.StrOpt("host",
                   help="This machine's name in port bindings (binding:host_id) as compute "
                        "names it, neutron's [DEFAULT] host: the agent plugs the ports bound "
                        "to it (with [DEFAULT] host's), unless bridge_hosts is set. Default: "
                        "on a libvirt host the libvirt compute host's name ([libvirt] "
                        "host_name, else this machine's hostname), else [DEFAULT] host."),
        cfg.StrOpt("metadata_url",
                   help="Compute's metadata API the agent's metadata proxy forwards guests' "
                        "requests to, when it runs on another host (e.g. "
                        "http://controller:8000/metadata). Default: this cloud's "
                        "(<public_url>/metadata)."),
        cfg.StrOpt("dhcp_agent_host",
                   help="The host whose networking agent serves DHCP, metadata and routers "
                        "(the network node: the network service's own agent, or `pocketstack "
                        "service network-agent` on another host, which gets the DHCP files "
                        "over RPC). Other hosts' agents plumb bridges and security groups "
                        "for their own ports only. Default: the network service's host "
                        "(bridge_hosts)."),
        # Agents (GET /v2.0/agents): heartbeats over RPC to the network service.
        cfg.FloatOpt("report_interval", default=30.0, min=0.05,
                     help="Seconds between an agent's heartbeats (neutron's [agent] "
                          "report_interval)."),
        cfg.FloatOpt("agent_down_time", default=75.0, min=0.1,
                     help="An agent whose last heartbeat is older than this many seconds "
                          "is shown dead (alive: false), and only then may be deleted."),
        # The overlay between hosts (agent/overlay.py) and provider networks on host NICs.
        cfg.IPOpt("local_ip", version=4,
                  help="This host's tunnel (underlay) address: networks of type vxlan get "
                       "a VXLAN device on their bridge sourced from it, with forwarding "
                       "entries for the other hosts' ports (neutron's [vxlan] local_ip and "
                       "l2_population). Unset: no overlay, guests of vxlan networks meet "
                       "on this host only."),
        cfg.ListOpt("physical_interface_mappings", default=[],
                    item_type=types.String(regex=r"^[^:\s]+:[^:\s/]{1,15}$"),
                    help="<physical_network>:<interface> pairs: a flat network on "
                         "physical_network gets the interface itself on its bridge, a vlan "
                         "network the subinterface <interface>.<vlan id> (neutron's "
                         "[linux_bridge] physical_interface_mappings)."),
        cfg.StrOpt("nft_table",
                   help="Name of the nftables tables (families inet and bridge) holding the "
                        "security group rules of this host's guests. Default: "
                        "pocketstack_<the first 12 digits of the cloud's id, <data "
                        "dir>/cloud-id>, so that each cloud on a machine has its own."),
    ],
    "network_quotas": [
        cfg.IntOpt("quota_network", default=100, min=-1, help="Networks per project (-1: "
                                                              "unlimited)."),
        cfg.IntOpt("quota_subnet", default=100, min=-1, help="Subnets per project."),
        cfg.IntOpt("quota_port", default=500, min=-1, help="Ports per project."),
        cfg.IntOpt("quota_router", default=10, min=-1, help="Routers per project."),
        cfg.IntOpt("quota_floatingip", default=50, min=-1, help="Floating IPs per project."),
        cfg.IntOpt("quota_security_group", default=10, min=-1,
                   help="Security groups per project."),
        cfg.IntOpt("quota_security_group_rule", default=100, min=-1,
                   help="Security group rules per project."),
        cfg.IntOpt("quota_rbac_policy", default=10, min=-1,
                   help="RBAC policies per project (neutron's default)."),
        cfg.IntOpt("quota_subnetpool", default=-1, min=-1,
                   help="Subnet pools per project (neutron's default_quota: unlimited)."),
    ],
}
