"""GET /allocation_candidates (1.10) and the request groups of its query string."""
from __future__ import annotations

import re

import sqlalchemy as sa

from pocketstack.placement import api, candidates, errors, fastpath, filters
from pocketstack.placement.models import ResourceProvider
from pocketstack.placement.rest import util

_KEY = re.compile(r"^(resources|required|member_of|in_tree)([a-zA-Z0-9_-]{1,64})?$")
_NUMBER = re.compile(r"^[1-9][0-9]*$")


def _suffix_ok(suffix: str, version) -> bool:
    return bool(_NUMBER.match(suffix)) if version < (1, 33) else True


def _allowed(version) -> set[str]:
    names = {"resources"}
    for since, name in (((1, 16), "limit"), ((1, 17), "required"), ((1, 21), "member_of"),
                        ((1, 25), "group_policy"), ((1, 31), "in_tree"),
                        ((1, 35), "root_required"), ((1, 36), "same_subtree")):
        if version >= since:
            names.add(name)
    return names


def _groups(params: dict, version) -> dict[str, candidates.Group]:
    groups: dict[str, candidates.Group] = {}
    allowed = _allowed(version)
    for key, values in params.items():
        if key in ("limit", "group_policy", "root_required", "same_subtree") and key in allowed:
            continue
        m = _KEY.match(key)
        suffix = m.group(2) or "" if m else ""
        if (not m or m.group(1) not in allowed
                or (suffix and (version < (1, 25) or not _suffix_ok(suffix, version)))):
            raise errors.bad_request(f"Invalid query string parameters: Additional properties "
                                     f"are not allowed ('{key}' was unexpected)")
        group = groups.setdefault(suffix, candidates.Group(suffix))
        kind = m.group(1)
        if kind == "resources":
            group.resources = filters.parse_resources(util.single(params, key), key)
        elif kind == "required":
            group.required = filters.parse_required(values, version, key)
        elif kind == "member_of":
            group.member_of = filters.parse_member_of(values, version)
        else:
            group.in_tree = _uuid(util.single(params, key), key)
    return groups


def _uuid(value: str, key: str) -> str:
    try:
        return util.check_uuid(value)
    except Exception:
        raise errors.bad_request(f"Invalid query string parameters: Expected '{key}' "
                                 f"parameter to be a format of uuid. Got: {value}",
                                 errors.QUERYPARAM_BAD_VALUE) from None


def _query(req, version) -> candidates.Query:
    params: dict[str, list[str]] = {}
    for key, value in req.query.multi_items():
        params.setdefault(key, []).append(value)
    groups = _groups(params, version)
    if not any(g.resources for g in groups.values()):
        raise errors.bad_request("At least one resources parameter must be specified.",
                                 errors.QUERYPARAM_MISSING_VALUE)
    query = candidates.Query(list(groups.values()))
    if "" in groups and not groups[""].resources:  # filters of the whole request
        query.tree_filter = groups.pop("")
        query.groups = list(groups.values())
    limit = util.single(params, "limit")
    if limit is not None:
        # a limit of more than 10 digits is over 2**31 (and int() refuses 4,300)
        if not _NUMBER.match(limit) or len(limit) > 10 or int(limit) > 2 ** 31:
            shown = limit if len(limit) <= 20 else limit[:20] + "..."
            raise errors.bad_request(f"Invalid query string parameters: '{shown}' does not "
                                     "match '^[1-9][0-9]*$'", errors.QUERYPARAM_BAD_VALUE)
        query.limit = int(limit)
    policy = util.single(params, "group_policy")
    if policy is not None and policy not in ("none", "isolate"):
        raise errors.bad_request(f"Invalid query string parameters: '{policy}' is not one "
                                 "of ['none', 'isolate']", errors.QUERYPARAM_BAD_VALUE)
    query.group_policy = policy
    if sum(1 for g in groups if g) > 1 and policy is None:
        raise errors.bad_request('The "group_policy" parameter is required when specifying '
                                 'more than one "resources{N}" parameter.',
                                 errors.QUERYPARAM_MISSING_VALUE)
    if "root_required" in params:
        query.root_required = filters.parse_required(params["root_required"], version,
                                                     "root_required")
    for value in params.get("same_subtree", []):
        suffixes = {v.strip() for v in value.split(",")}
        unknown = sorted(suffixes - set(groups))
        if unknown:
            raise errors.bad_request(f"Real suffixes should be specified in same_subtree: "
                                     f"{unknown} not found in {sorted(g for g in groups if g)}.",
                                     errors.QUERYPARAM_BAD_VALUE)
        query.same_subtree.append(suffixes)
    subtree = set().union(*query.same_subtree)
    for group in groups.values():
        if not group.resources and group.suffix not in subtree:
            raise errors.bad_request(f"Resourceless suffixed group request should be "
                                     f"specified in `same_subtree` query param: bad group(s) - "
                                     f"['{group.suffix}'].", errors.QUERYPARAM_BAD_VALUE)
    return query


def list_candidates(req):
    util.require(req, (1, 10))
    util.authorize(req, "allocation_candidates:list")
    version = util.version(req)
    query = _query(req, version)
    requested = {rc for g in query.groups for rc in g.resources}
    return util.ok(api.allocation_candidates(
        query, lambda s, result: _render(s, result, version, requested)))


def _render(s, result: candidates.Result, version, requested: set[str]) -> dict:
    ids = set(result.providers)
    if version >= (1, 29) and ids and not result.flat:  # the whole trees of the candidates
        roots = {rp.root_provider_id for rp in result.providers.values()}
        for rp in s.execute(sa.select(ResourceProvider.__table__)
                            .where(ResourceProvider.root_provider_id.in_(roots))):
            result.providers[rp.id] = rp
    uuid = {i: rp.uuid for i, rp in result.providers.items()}
    return {"allocation_requests": [_request(r, uuid, version) for r in result.requests],
            "provider_summaries": _summaries(s, result.providers, uuid, version, requested)}


def _request(request: dict, uuid: dict, version) -> dict:
    allocs = request["allocations"]
    if version < (1, 12):
        return {"allocations": [{"resource_provider": {"uuid": uuid[rp]}, "resources": res}
                                for rp, res in allocs.items()]}
    body = {"allocations": {uuid[rp]: {"resources": res} for rp, res in allocs.items()}}
    if version >= (1, 34):
        body["mappings"] = {sfx: [uuid[rp] for rp in rps]
                            for sfx, rps in request["mappings"].items()}
    return body


def _summaries(s, rps: dict, uuid: dict, version, requested: set[str]) -> dict:
    if not rps:
        return {}
    ids = sorted(rps)
    used = {(rp, rc): int(n) for rp, rc, n in s.execute(fastpath.USAGE, {"ids": ids})}
    out = {uuid[i]: {"resources": {}} for i in ids}
    for inv in s.execute(fastpath.INVENTORIES, {"ids": ids}):
        if version < (1, 27) and inv.resource_class not in requested:
            continue
        key = (inv.resource_provider_id, inv.resource_class)
        out[uuid[inv.resource_provider_id]]["resources"][inv.resource_class] = {
            "capacity": int((inv.total - inv.reserved) * inv.allocation_ratio),
            "used": used.get(key, 0)}
    if version >= (1, 17):
        for rp_id in ids:
            out[uuid[rp_id]]["traits"] = []
        for rp_id, trait in s.execute(fastpath.TRAITS, {"ids": ids}):
            out[uuid[rp_id]]["traits"].append(trait)
        for rp_id in ids:
            out[uuid[rp_id]]["traits"].sort()
    if version >= (1, 29):
        tree = {rp.id: rp.uuid for rp in rps.values()}
        for rp_id in ids:
            rp = rps[rp_id]
            out[uuid[rp_id]]["parent_provider_uuid"] = tree.get(rp.parent_provider_id)
            out[uuid[rp_id]]["root_provider_uuid"] = tree.get(rp.root_provider_id)
    return out
