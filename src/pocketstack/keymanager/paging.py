"""barbican's list paging: offset/limit cleaned as its repositories do (bad values fall
back to defaults), ``previous``/``next`` links that keep the other query parameters, and
``total``."""
from __future__ import annotations

import sys
from urllib.parse import urlencode

from pocketstack.common import config


def clean(offset_arg, limit_arg) -> tuple[int, int]:
    conf = config.CONF.keymanager
    try:
        offset = int(offset_arg or 0)
        if offset < 0 or offset > sys.maxsize:
            offset = 0
    except ValueError:
        offset = 0
    try:
        limit = int(limit_arg or conf.default_limit_paging)
        limit = min(max(limit, 1), conf.max_limit_paging)
    except ValueError:
        limit = conf.default_limit_paging
    return offset, limit


def page(base: str, name: str, items: list, offset: int, limit: int, total: int,
         query) -> dict:
    body: dict = {name: items, "total": total}
    if not items:
        return body
    rest = urlencode([(k, v) for k, v in query.multi_items() if k not in ("limit", "offset")])

    def href(at: int) -> str:
        link = f"{base}/v1/{name}?limit={limit}&offset={at}"
        return f"{link}&{rest}" if rest else link

    if offset > 0:
        body["previous"] = href(max(0, offset - limit))
    if total > offset + limit:
        body["next"] = href(offset + limit)
    return body
