"""GET /v2/images: glance's filters, sorting and marker pagination as one SQL query.

Visibility follows glance's db api: an admin sees every image; anyone else sees public and
community images, their own, and shared images whose membership for their project has the
requested ``member_status`` (default accepted). Without a ``visibility`` filter, community
images of other projects are left out of lists (they are found by id or with
``visibility=community``). Hidden images (``os_hidden``) and killed ones are left out unless
asked for.
"""
from __future__ import annotations

import dataclasses
import re
import urllib.parse

import sqlalchemy as sa
from sqlalchemy.orm import aliased

from pocketstack.common import config, db, exceptions, numbers, policy
from pocketstack.common.timeutils import parse_isotime
from pocketstack.image import access, views
from pocketstack.image.models import Image, ImageMember, ImageProperty, ImageTag

SORT_KEYS = ("name", "status", "container_format", "disk_format", "size", "id", "created_at",
             "updated_at")
# Sorting and paging treat NULL as glance does: the column type's default value.
NULL_AS = {"name": "", "container_format": "", "disk_format": "", "size": 0}
VISIBILITIES = ("community", "public", "private", "shared", "all")
MEMBER_STATUSES = ("pending", "accepted", "rejected", "all")
EQ_OR_IN = ("name", "id", "status", "container_format", "disk_format")
RANGE = {"size_min": ("size", ">="), "size_max": ("size", "<="),
         "virtual_size_min": ("virtual_size", ">="), "virtual_size_max": ("virtual_size", "<=")}
TIME_OPS = {"gt": "__gt__", "gte": "__ge__", "lt": "__lt__", "lte": "__le__", "eq": "__eq__",
            "neq": "__ne__"}
COLUMN_FILTERS = ("owner", "checksum", "os_hash_value", "min_ram", "min_disk", "virtual_size",
                  "os_hash_algo", "size")
NOT_FILTERS = ("limit", "marker", "sort", "sort_key", "sort_dir", "member_status")


@dataclasses.dataclass
class Listing:
    images: list[dict]
    next_marker: str | None


def _split_op(value: str) -> tuple[str, str]:
    """glance's split_filter_op: 'gte:2020-01-01T00:00:00Z' → ('gte', …); a bare ISO time
    containing ':' is an equality."""
    left, sep, right = value.partition(":")
    if not sep:
        return "eq", value
    try:
        parse_isotime(value)
        return "eq", value
    except ValueError:
        return left, right


def _split_in(value: str) -> list[str]:
    """Comma-separated values; double quotes protect commas (api-wg 'in:' syntax)."""
    if (value.count('"') - value.count('\\"')) % 2:
        raise exceptions.BadRequest("Invalid filter value: the quotes are not balanced.")
    pattern = re.compile(r'"((?:[^"\\]|\\.)*)",?|([^,]+),?|,')
    return [quoted or plain for quoted, plain in pattern.findall(value)]


def _int(name: str, value: str, message: str | None = None) -> int:
    text = value.strip()
    digits = text[1:] if text[:1] in "+-" else text
    if not (digits.isascii() and digits.isdigit()):  # "²".isdigit() is True, int() refuses
        raise exceptions.BadRequest(message or f"Invalid value '{value}' for '{name}' filter.")
    if not numbers.is_int_text(text, signed=True):
        raise exceptions.BadRequest(f"Invalid value '{value}' for '{name}' filter: out of range.")
    return int(text)


def _bool(name: str, value: str) -> bool:
    if value not in ("true", "false"):
        raise exceptions.BadRequest(
            f"Invalid value '{value}' for '{name}' filter. Valid values are 'true' or 'false'.")
    return value == "true"


def _sorting(params: list[tuple[str, str]]) -> list[tuple[str, str]]:
    def key(name):
        if name not in SORT_KEYS:
            raise exceptions.BadRequest(f"Invalid sort key: {name}. It must be one of the "
                                        f"following: {', '.join(SORT_KEYS)}.")
        return name

    def direction(value):
        if value not in ("asc", "desc"):
            raise exceptions.BadRequest(f"Invalid sort direction: {value}")
        return value

    sort = [v for k, v in params if k == "sort"]
    keys = [v.strip() for k, v in params if k == "sort_key"]
    dirs = [v.strip() for k, v in params if k == "sort_dir"]
    if sort:
        if keys or dirs:
            raise exceptions.BadRequest("Old and new sorting syntax cannot be combined")
        result = []
        for item in ",".join(sort).split(","):
            name, _, dir_ = item.partition(":")
            result.append((key(name.strip()), direction(dir_.strip() or "desc")))
        return result
    if len(dirs) > 1 and len(dirs) != len(keys):
        raise exceptions.BadRequest("Number of sort dirs does not match the number of sort keys")
    keys = [key(k) for k in keys] or ["created_at"]
    dirs = [direction(d) for d in dirs] or ["desc"]
    if len(dirs) == 1:
        dirs = dirs * len(keys)
    return list(zip(keys, dirs))


def _sort_column(name: str):
    column = getattr(Image, name)
    return sa.func.coalesce(column, NULL_AS[name]) if name in NULL_AS else column


def _visibility_clause(ctx, visibility: str | None, member_status: str):
    clauses = []
    if not ctx.is_admin:
        project = ctx.project_id
        shared_with_me = sa.exists().where(
            ImageMember.image_id == Image.id, ImageMember.member == (project or ""),
            *([] if member_status == "all" else [ImageMember.status == member_status]))
        clauses.append(sa.or_(Image.visibility.in_(("public", "community")),
                              Image.owner == (project or ""),
                              sa.and_(Image.visibility == "shared", shared_with_me)))
    if visibility is not None:
        if visibility != "all":
            clauses.append(Image.visibility == visibility)
    else:
        clauses.append(sa.or_(Image.visibility != "community",
                              Image.owner == (ctx.project_id or "")))
    return clauses


def _filter_clauses(filters: list[tuple[str, str]]):
    clauses = []
    for name, value in filters:
        if name in RANGE:
            column, op = RANGE[name]
            number = _int(name, value, "Unable to filter on a range with a non-numeric value.")
            col = getattr(Image, column)
            clauses.append(col >= number if op == ">=" else col <= number)
        elif name in ("created_at", "updated_at"):
            op, text = _split_op(value)
            if op not in TIME_OPS:
                raise exceptions.BadRequest("Unable to filter on a unknown operator.")
            try:
                when = parse_isotime(text)
            except ValueError:
                raise exceptions.BadRequest(
                    f'Bad "{name}" query filter format. Use ISO 8601 DateTime notation.') from None
            clauses.append(getattr(getattr(Image, name), TIME_OPS[op])(when))
        elif name in EQ_OR_IN:
            op, text = _split_op(value)
            column = getattr(Image, name)
            if op == "in":
                clauses.append(column.in_(_split_in(text)))
            elif op == "eq":
                clauses.append(column == text)
            else:
                raise exceptions.BadRequest(f"Unable to filter by unknown operator '{op}'.")
        elif name == "tag":
            tag = aliased(ImageTag)
            clauses.append(sa.exists().where(tag.image_id == Image.id, tag.value == value.strip()))
        elif name == "protected":
            clauses.append(Image.protected.is_(_bool(name, value)))
        elif name in COLUMN_FILTERS:
            column = getattr(Image, name)
            if name in ("min_ram", "min_disk", "virtual_size", "size"):
                value = _int(name, value)
            clauses.append(column == value)
        else:
            prop = aliased(ImageProperty)
            clauses.append(sa.exists().where(prop.image_id == Image.id, prop.name == name,
                                             prop.value == value))
    return clauses


def _after_marker(marker: Image, sorting: list[tuple[str, str]]):
    """Rows strictly after ``marker`` in the sort order (keyset pagination)."""
    alternatives = []
    for i, (name, dir_) in enumerate(sorting):
        equal = [_sort_column(n) == _marker_value(marker, n) for n, _ in sorting[:i]]
        column, value = _sort_column(name), _marker_value(marker, name)
        beyond = column > value if dir_ == "asc" else column < value
        alternatives.append(sa.and_(*equal, beyond))
    return sa.or_(*alternatives)


def _marker_value(marker: Image, name: str):
    value = getattr(marker, name)
    return NULL_AS.get(name) if value is None else value


def list_images(ctx, query) -> Listing:
    """``query``: the request's query parameters as a list of (name, value) pairs."""
    policy.authorize(ctx, "image:get_images")
    params = list(query)
    single = {}
    for name in ("limit", "marker", "member_status", "visibility", "os_hidden"):
        values = [v for k, v in params if k == name]
        if values:
            single[name] = values[-1]
    conf = config.CONF.image
    limit = conf.limit_param_default
    if "limit" in single:
        text = single["limit"].strip()
        if text.startswith("-") and numbers.is_int_text(text, signed=True):
            raise exceptions.BadRequest("limit param must be positive")
        limit = numbers.parse_limit(text, "limit", conf.api_limit_max,
                                    message="limit param must be an integer")
    limit = min(limit, conf.api_limit_max)
    member_status = single.get("member_status", "accepted")
    if member_status not in MEMBER_STATUSES:
        raise exceptions.BadRequest(f"Invalid status: {member_status}")
    visibility = single.get("visibility")
    if visibility is not None and visibility not in VISIBILITIES:
        raise exceptions.BadRequest(f"Invalid visibility value: {visibility}")
    if any(k == "changes-since" for k, _ in params):
        raise exceptions.BadRequest('The "changes-since" filter is no longer available on v2.')
    hidden = _bool("os_hidden", single.get("os_hidden", "false").lower())
    sorting = _sorting(params)
    for name in ("created_at", "id"):
        if name not in (k for k, _ in sorting):
            sorting.append((name, sorting[0][1] if sorting else "desc"))
    filters = [(k, v) for k, v in params
               if k not in NOT_FILTERS + ("visibility", "os_hidden")]

    with db.reader() as s:
        stmt = sa.select(Image).where(Image.deleted.is_(False), Image.status != "killed",
                                      Image.os_hidden.is_(hidden),
                                      *_visibility_clause(ctx, visibility, member_status),
                                      *_filter_clauses(filters))
        if "marker" in single:
            try:
                marker = access.load(s, ctx, single["marker"])
            except exceptions.NotFound:
                raise exceptions.BadRequest(
                    f"Marker image {single['marker']} could not be found.") from None
            stmt = stmt.where(_after_marker(marker, sorting))
        order = [_sort_column(n).asc() if d == "asc" else _sort_column(n).desc()
                 for n, d in sorting]
        images = s.scalars(stmt.order_by(*order).limit(limit)).all()
        out = [views.image(i) for i in images]
    next_marker = out[-1]["id"] if out and len(out) == limit else None
    return Listing(out, next_marker)


def next_link(query, marker: str) -> str:
    params = [(k, v) for k, v in query if k != "marker"] + [("marker", marker)]
    return "/v2/images?" + urllib.parse.urlencode(params)


def first_link(query) -> str:
    params = [(k, v) for k, v in query if k != "marker"]
    return "/v2/images" + ("?" + urllib.parse.urlencode(params) if params else "")
