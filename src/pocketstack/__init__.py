"""pocketstack: an OpenStack-compatible IaaS cloud in one Python package.

``from pocketstack import Cloud`` starts a whole cloud in-process (see ``Cloud``); the
pytest plugin (``pocketstack.testing.pytest_plugin``) gives tests one per session and a
fresh project per test.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

# oslo.messaging imports eventlet, whose green DNS re-imports dnspython's modules beside
# the ones already loaded: dnspython's zone reader then refuses its own records ("add():
# expected an Rdata"), and DNS zone imports fail. pocketstack runs on threads and never
# monkey-patches, so it has no use for green DNS; this must be set before eventlet loads.
os.environ.setdefault("EVENTLET_NO_GREENDNS", "yes")

if TYPE_CHECKING:
    from pocketstack.cloud import Cloud

__all__ = ["Cloud"]


def __getattr__(name: str):
    # Imported on first use: `pocketstack --help` should not pay for the cloud's modules.
    if name == "Cloud":
        from pocketstack.cloud import Cloud

        return Cloud
    raise AttributeError(f"module 'pocketstack' has no attribute {name!r}")
