"""pocketstack: an OpenStack-compatible IaaS cloud in one Python package.

``from pocketstack import Cloud`` starts a whole cloud in-process (see ``Cloud``); the
pytest plugin (``pocketstack.testing.pytest_plugin``) gives tests one per session and a
fresh project per test.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pocketstack.cloud import Cloud

__all__ = ["Cloud"]


def __getattr__(name: str):
    # Imported on first use: `pocketstack --help` should not pay for the cloud's modules.
    if name == "Cloud":
        from pocketstack.cloud import Cloud

        return Cloud
    raise AttributeError(f"module 'pocketstack' has no attribute {name!r}")
