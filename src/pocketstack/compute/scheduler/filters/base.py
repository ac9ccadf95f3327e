"""The filter interface."""
from __future__ import annotations

import collections


class Filter:
    name = "Filter"

    def applies(self, spec: dict) -> bool:
        return True

    def reject(self, host, spec: dict, context: dict) -> str | None:
        raise NotImplementedError

    def explain(self, reasons: list[str], spec: dict, hosts: list) -> str:
        top = collections.Counter(reasons).most_common(1)[0][0]
        return f"{self.name} removed {len(reasons)} ({top})"
