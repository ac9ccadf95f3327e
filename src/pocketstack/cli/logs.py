"""How every pocketstack process logs: `pocketstack up` and `service` (cli/main.py,
cli/service.py) and the worker processes of `up --workers` (workers.py). A module of its
own so the workers need not import the CLI (which imports them)."""
from __future__ import annotations

import logging


def setup_logging(debug: bool) -> None:
    logging.basicConfig(level=logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    set_log_levels(debug)


def set_log_levels(debug: bool) -> None:
    """pocketstack's own messages at INFO (DEBUG with --debug or [DEFAULT] debug); libraries
    only warn (INFO when debugging), so the terminal shows the summary, warnings and, if
    enabled, the access log."""
    logging.getLogger().setLevel(logging.INFO if debug else logging.WARNING)
    logging.getLogger("pocketstack").setLevel(logging.DEBUG if debug else logging.INFO)
    # SQLAlchemy logs each statement with its parameters (password hashes) at INFO.
    logging.getLogger("sqlalchemy").setLevel(logging.WARNING)
