"""[loadbalancer] options."""
from oslo_config import cfg

OPTS = {"loadbalancer": [
    cfg.StrOpt("default_provider_driver", default="amphora",
               help="Provider of a load balancer created without one (Octavia's "
                    "[api_settings] default_provider_driver)."),
    cfg.StrOpt("data_plane", default="simulated", choices=("simulated", "haproxy"),
               help="simulated: the provider flips statuses without a data plane, as the "
                    "simulated hypervisor boots nothing; haproxy: one HAProxy per load "
                    "balancer in a namespace on the VIP network's bridge (needs the network "
                    "node's host networking)."),
    cfg.StrOpt("haproxy_host",
               help="The network node host (one of [network] bridge_hosts) whose bridges the "
                    "haproxy data plane plugs into: the VIP port is bound to it. Default: "
                    "this machine's host name."),
    cfg.FloatOpt("provisioning_delay", default=0.0, min=0.0,
                 help="Seconds the simulated provider takes to apply a change (the time "
                      "an object stays PENDING_*)."),
    cfg.FloatOpt("poll_interval", default=1.0, min=0.05,
                 help="Seconds between the provider's looks for pending changes made by "
                      "other API processes (changes made in its own are applied at once)."),
    cfg.StrOpt("pagination_max_limit", default="1000",
               help="The most items a listing returns at once (Octavia's [api_settings] "
                    "pagination_max_limit): more come through its next link; 'infinite' "
                    "or a negative number: no limit."),
    cfg.IntOpt("default_load_balancer_quota", default=-1, min=-1,
               help="Load balancers per project (-1: unlimited)."),
    cfg.IntOpt("default_listener_quota", default=-1, min=-1, help="Listeners per project."),
    cfg.IntOpt("default_pool_quota", default=-1, min=-1, help="Pools per project."),
    cfg.IntOpt("default_health_monitor_quota", default=-1, min=-1,
               help="Health monitors per project."),
    cfg.IntOpt("default_member_quota", default=-1, min=-1, help="Members per project."),
    cfg.IntOpt("default_l7policy_quota", default=-1, min=-1, help="L7 policies per project."),
    cfg.IntOpt("default_l7rule_quota", default=-1, min=-1, help="L7 rules per project."),
]}
