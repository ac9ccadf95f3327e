"""What the placement tests share besides the fixtures (a module of its own: ``from
conftest import`` can resolve to another test directory's conftest)."""
from __future__ import annotations


def error_code(response) -> str:
    """The code of placement's first error (``placement.concurrent_update``, ...)."""
    return response.json()["errors"][0].get("code")
