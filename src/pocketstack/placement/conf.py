"""Placement options ([placement] in pocketstack.conf), named as in placement.conf."""
from oslo_config import cfg

OPTS = {
    "placement": [
        cfg.BoolOpt("randomize_allocation_candidates", default=False,
                    help="Shuffle allocation candidates before a limit cuts them, so that "
                         "schedulers asking for a few do not all get the same providers "
                         "(placement's option of that name)."),
        cfg.IntOpt("allocation_conflict_retry_count", default=10, min=0,
                   help="How often an allocation write is run again when another writer "
                        "changed one of its providers meanwhile (or the database chose it "
                        "as a deadlock victim), before it answers 409 "
                        "placement.concurrent_update (placement's option of that name)."),
        cfg.IntOpt("max_allocation_candidates", default=-1, min=-1,
                   help="Most allocation candidates one request computes (-1: no limit), "
                        "whatever its limit parameter asks."),
    ],
}
