from oslo_config import cfg

OPTS = {
    "keymanager": [
        cfg.IntOpt("max_allowed_secret_in_bytes", default=20000, min=1,
                   help="Largest secret payload accepted (barbican's option)."),
        cfg.IntOpt("default_limit_paging", default=10, min=1,
                   help="Page size of a listing without limit."),
        cfg.IntOpt("max_limit_paging", default=100, min=1,
                   help="Largest page size a listing's limit may ask for."),
        # barbican's [quotas] quota_*: -1 is unlimited
        cfg.IntOpt("quota_secrets", default=-1, min=-1, help="Secrets per project."),
        cfg.IntOpt("quota_orders", default=-1, min=-1, help="Orders per project."),
        cfg.IntOpt("quota_containers", default=-1, min=-1, help="Containers per project."),
        cfg.IntOpt("quota_consumers", default=-1, min=-1, help="Consumers per project."),
        cfg.IntOpt("quota_cas", default=-1, min=-1,
                   help="Certificate authorities per project (none are made here)."),
    ],
}
