"""The boot waterfall: a server's trace laid out as service lanes of positioned bars, and
a NoValidHost fault message split into one row per scheduler filter."""
from __future__ import annotations

import re

# The seed's boot path order; services not listed follow in the order they appear.
LANE_ORDER = ("api", "conductor", "scheduler", "compute", "network", "image", "volume")


def lanes(trace: dict) -> tuple[list[dict], float]:
    """[{"service", "rows": [{event..., "left", "width", "failed"}]}], total ms."""
    events = trace.get("events") or []
    total = max((e["offset_ms"] + e["duration_ms"] for e in events), default=0.0) or 1.0
    by_service: dict[str, list[dict]] = {}
    for e in events:
        left = min(e["offset_ms"] / total * 100, 99.5)
        row = dict(e, left=round(left, 2),
                   width=round(max(e["duration_ms"] / total * 100, 0.5), 2),
                   failed=e.get("result") not in (None, "Success"))
        row["width"] = min(row["width"], round(100 - row["left"], 2))
        by_service.setdefault(e["service"] or "other", []).append(row)
    known = [s for s in LANE_ORDER if s in by_service]
    rest = [s for s in by_service if s not in LANE_ORDER]
    return [{"service": s, "rows": by_service[s]} for s in known + rest], total


_NOTE = re.compile(r"^(?P<filter>.+?) removed (?P<count>\d+)(?: \((?P<why>.*)\))?$", re.S)


def _split_top_level(text: str) -> list[str]:
    """Split on '; ' outside parentheses (a filter's reason may itself contain '; ')."""
    parts, depth, current = [], 0, ""
    i = 0
    while i < len(text):
        ch = text[i]
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and text.startswith("; ", i):
            parts.append(current)
            current, i = "", i + 2
            continue
        current += ch
        i += 1
    return parts + [current]


def no_valid_host(message: str | None) -> dict | None:
    """{"hosts": "4 hosts", "filters": [{"filter", "removed", "reason"}]} or None."""
    prefix = "No valid host: "
    if not message or not message.startswith(prefix):
        return None
    head, *notes = _split_top_level(message[len(prefix):])
    rows = []
    for note in notes:
        m = _NOTE.match(note.strip())
        if m:
            rows.append({"filter": m["filter"], "removed": int(m["count"]),
                         "reason": m["why"] or ""})
        else:
            rows.append({"filter": "", "removed": None, "reason": note.strip()})
    return {"hosts": head, "filters": rows}
