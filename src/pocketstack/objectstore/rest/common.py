"""What every object storage handler shares: names from the URL, swift's response shape
(Content-Length and Content-Type on every response, 204s included), listing formats and
metadata headers."""
from __future__ import annotations

import json
import random
import time
import urllib.parse
from xml.sax.saxutils import escape, quoteattr

from starlette.responses import Response

from pocketstack.objectstore import constraints
from pocketstack.objectstore.errors import SwiftError


def new_request_id() -> str:
    """swift's transaction id: ``tx`` + 21 hex digits + ``-`` + the time in 10 hex digits.
    The digits need to be unique, not secret: the process's Mersenne Twister (reseeded in
    a forked child) gives them for a quarter of uuid4's cost (os.urandom)."""
    return f"tx{random.getrandbits(84):021x}-{int(time.time()):010x}"


def response(status: int, body: bytes = b"", headers: dict | None = None,
             content_type: str = "text/html; charset=UTF-8") -> Response:
    out = {"Content-Type": content_type, "Content-Length": str(len(body))}
    out.update(headers or {})
    return Response(body, status_code=status, headers=out)


def names(req) -> tuple[str, str | None, str | None]:
    """(account, container, object) from the URL as sent: an object name keeps its
    trailing slashes (``dir/``), which the app strips from the routing path."""
    scope = req.raw.scope
    raw = scope.get("raw_path")
    if raw:
        try:
            path = urllib.parse.unquote_to_bytes(raw.split(b"?", 1)[0]).decode("utf-8")
        except UnicodeDecodeError:
            raise SwiftError(412, "Invalid UTF8 or contains NULL") from None
        root = scope.get("root_path", "")
        if path.startswith(root):
            path = path[len(root):]
    else:
        path = scope["path"][len(scope.get("root_path", "")):]
        if req.trailing_slash:
            path += "/"
    if "\x00" in path:
        raise SwiftError(412, "Invalid UTF8 or contains NULL")
    parts = path.split("/", 4)  # "", "v1", account, container, object
    account = parts[2] if len(parts) > 2 else ""
    container = parts[3] if len(parts) > 3 and parts[3] else None
    obj = parts[4] if len(parts) > 4 and parts[4] else None
    constraints.check_name("Account", account, constraints.MAX_ACCOUNT_NAME_LENGTH)
    if container is not None:
        constraints.check_name("Container", container, constraints.MAX_CONTAINER_NAME_LENGTH)
    if obj is not None:
        constraints.check_name("Object", obj, constraints.MAX_OBJECT_NAME_LENGTH)
    return account, container, obj


def title(header: str) -> str:
    """``x-object-meta-color`` -> ``X-Object-Meta-Color`` (how swift returns headers)."""
    return "-".join(word[:1].upper() + word[1:] for word in header.split("-"))


def meta_changes(headers, target: str, extra: tuple[str, ...] = ()) -> dict:
    """Header -> value to set ("" removes) from X-<target>-Meta-*, X-Remove-<target>-Meta-*
    and the ``extra`` headers (and their X-Remove- forms)."""
    prefix, remove = f"x-{target}-meta-", f"x-remove-{target}-meta-"
    changes = {}
    for key, value in headers.items():
        key = key.lower()
        if key.startswith(prefix):
            changes[key] = value.strip()
        elif key.startswith(remove):
            changes[prefix + key[len(remove):]] = ""
        elif key in extra:
            changes[key] = value.strip()
        elif key.startswith("x-remove-") and "x-" + key[len("x-remove-"):] in extra:
            changes["x-" + key[len("x-remove-"):]] = ""
    return changes


def meta_headers(meta: dict, hidden: tuple[str, ...] = ()) -> dict:
    return {title(k): v for k, v in meta.items() if k not in hidden}


# --- listings ---------------------------------------------------------------------------

FORMATS = {"json": "application/json; charset=utf-8",
           "xml": "application/xml; charset=utf-8",
           "plain": "text/plain; charset=utf-8"}


def listing_format(req) -> str:
    fmt = (req.query.get("format") or "").lower()
    if fmt in ("json", "xml", "plain"):
        return fmt
    if fmt:
        return "plain"
    accept = req.headers.get("accept", "")
    for item in accept.split(","):
        media = item.split(";")[0].strip().lower()
        if media == "application/json":
            return "json"
        if media in ("application/xml", "text/xml"):
            return "xml"
        if media in ("text/plain", "*/*", ""):
            return "plain"
    return "plain"


def listing_params(req) -> dict:
    query = req.query
    for key in ("prefix", "delimiter", "marker", "end_marker"):
        if "\x00" in query.get(key, ""):  # (the router refuses it first, with a 400)
            raise SwiftError(400, "Null characters not allowed")
    delimiter = query.get("delimiter") or ""
    if len(delimiter) > 1:
        raise SwiftError(412, "Bad delimiter")
    return {"prefix": query.get("prefix") or "", "delimiter": delimiter,
            "marker": query.get("marker") or "", "end_marker": query.get("end_marker") or "",
            "limit": constraints.listing_limit(query),
            "reverse": (query.get("reverse") or "").lower() in ("true", "1", "yes", "on", "t",
                                                                "y")}


def listing_response(req, kind: str, name: str, entries: list[dict], headers: dict) -> Response:
    """A listing in the asked-for format; an empty plain listing is a 204."""
    fmt = listing_format(req)
    if fmt == "json":
        body = json.dumps(entries).encode()
    elif fmt == "xml":
        item = "container" if kind == "account" else "object"
        parts = ['<?xml version="1.0" encoding="UTF-8"?>\n', f"<{kind} name={quoteattr(name)}>"]
        for entry in entries:
            if "subdir" in entry:
                sub = escape(entry["subdir"])
                parts.append(f'<subdir name={quoteattr(entry["subdir"])}><name>{sub}</name>'
                             "</subdir>")
                continue
            fields = "".join(f"<{k}>{escape(str(v))}</{k}>" for k, v in entry.items())
            parts.append(f"<{item}>{fields}</{item}>")
        parts.append(f"</{kind}>")
        body = "".join(parts).encode()
    else:
        if not entries:
            return response(204, headers=headers, content_type=FORMATS["plain"])
        body = "".join((e.get("name") or e.get("subdir")) + "\n" for e in entries).encode()
    return response(200, body, headers, content_type=FORMATS[fmt])


def head_response(req, headers: dict) -> Response:
    return response(204, headers=headers, content_type=FORMATS[listing_format(req)])


def bulk_result(req, deleted: int, not_found: int, errors: list[tuple[str, str]]) -> Response:
    """The body bulk delete (and an SLO's ``multipart-manifest=delete``) answers with:
    JSON when asked for, else plain text; the status of the whole is in the body."""
    status = "400 Bad Request" if errors else "200 OK"
    result = {"Number Deleted": deleted, "Number Not Found": not_found,
              "Response Body": "", "Response Status": status,
              "Errors": [list(error) for error in errors]}
    accept = req.headers.get("accept", "")
    if "application/json" in accept:
        return response(200, json.dumps(result).encode(),
                        content_type="application/json; charset=utf-8")
    lines = [f"Number Deleted: {deleted}", f"Number Not Found: {not_found}",
             "Response Body: ", f"Response Status: {status}", "Errors:"]
    lines += [f"{name}, {reason}" for name, reason in errors]
    return response(200, ("\n".join(lines) + "\n").encode(),
                    content_type="text/plain; charset=utf-8")
