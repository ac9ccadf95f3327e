"""Placement options ([placement] in pocketstack.conf), named as in placement.conf."""
from oslo_config import cfg

OPTS = {
    "placement": [
        cfg.BoolOpt("randomize_allocation_candidates", default=False,
                    help="Shuffle allocation candidates before a limit cuts them, so that "
                         "schedulers asking for a few do not all get the same providers "
                         "(placement's option of that name)."),
        cfg.IntOpt("max_allocation_candidates", default=-1, min=-1,
                   help="Most allocation candidates one request computes (-1: no limit), "
                        "whatever its limit parameter asks."),
    ],
}
