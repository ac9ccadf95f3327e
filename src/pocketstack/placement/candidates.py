"""GET /allocation_candidates: which providers (trees, sharing providers) can satisfy
request groups, and the allocation requests and provider summaries placement answers.

Each (group, resource class) is one SQL query that returns only the providers with room
(filters.with_capacity), so the database does the filtering. The common request - one
unsuffixed group, no nested or sharing providers anywhere - is a single query with the
limit applied in SQL; only then are the few chosen providers summarised.
"""
from __future__ import annotations

import dataclasses
import itertools
import random

import sqlalchemy as sa

from pocketstack.common import config
from pocketstack.placement import catalog, errors, fastpath, filters
from pocketstack.placement.models import (Allocation, Inventory, ProviderAggregate,
                                          ResourceProvider)

RP = ResourceProvider
SHARES = "MISC_SHARES_VIA_AGGREGATE"


@dataclasses.dataclass
class Group:
    suffix: str
    resources: dict[str, int] = dataclasses.field(default_factory=dict)
    required: filters.Traits = dataclasses.field(default_factory=filters.Traits)
    member_of: filters.MemberOf = dataclasses.field(default_factory=filters.MemberOf)
    in_tree: str | None = None


@dataclasses.dataclass
class Query:
    groups: list[Group]
    group_policy: str | None = None
    limit: int | None = None
    root_required: filters.Traits = dataclasses.field(default_factory=filters.Traits)
    same_subtree: list[set[str]] = dataclasses.field(default_factory=list)
    # The unsuffixed group's filters when it asks for no resources: they apply to the
    # whole candidate (in_tree: its tree; required: the traits of all its providers).
    tree_filter: Group | None = None


@dataclasses.dataclass
class Result:
    requests: list[dict]  # [{"allocations": {rp_id: {rc: n}}, "mappings": {suffix: [ids]}}]
    providers: dict[int, object]  # id -> row (uuid, parent_provider_id, root_provider_id)
    flat: bool = False  # every provider is its own tree: no tree to add to the summaries


def find(s, query: Query) -> Result:
    _check_names(s, query)
    limit = query.limit
    cap = config.CONF.placement.max_allocation_candidates
    if cap > 0:
        limit = min(limit or cap, cap)
    shuffle = config.CONF.placement.randomize_allocation_candidates
    flat = _simple(s, query)
    if flat:
        requests = _simple_candidates(s, query.groups[0], query.root_required,
                                      None if shuffle else limit)
    else:
        requests = _general(s, query, None if shuffle else limit)
    if shuffle:
        random.shuffle(requests)
    if limit:
        requests = requests[:limit]
    ids = {rp for req in requests for rp in req["allocations"]}
    ids |= {rp for req in requests for rps in req["mappings"].values() for rp in rps}
    rows = s.execute(fastpath.PROVIDERS, {"ids": sorted(ids)}) if ids else ()
    return Result(requests, {row.id: row for row in rows}, flat)


def _check_names(s, query: Query) -> None:
    classes = {rc for g in query.groups for rc in g.resources}
    missing = catalog.unknown_classes(s, classes)
    if missing:
        raise errors.bad_request(f"Invalid resource class in resources parameter: No such "
                                 f"resource class {missing[0]}.", errors.QUERYPARAM_BAD_VALUE)
    traits = set().union(*(g.required.names() for g in query.groups),
                         query.root_required.names())
    missing = catalog.unknown_traits(s, traits)
    if missing:
        raise errors.bad_request(f"Invalid query string parameters: No such trait(s): "
                                 f"{', '.join(missing)}", errors.QUERYPARAM_BAD_VALUE)


def _simple(s, query: Query) -> bool:
    if len(query.groups) != 1 or query.groups[0].suffix or not query.groups[0].resources:
        return False
    if query.same_subtree:
        return False
    return fastpath.flat_and_unshared(s)


def _tree_root(s, rp_uuid: str) -> int:
    root = s.scalar(sa.select(RP.root_provider_id).where(RP.uuid == rp_uuid))
    if root is None:
        raise errors.bad_request(f"Invalid uuid value: {rp_uuid}",
                                 errors.RESOURCE_PROVIDER_NOT_FOUND)
    return root


def _clauses(s, group: Group, own_traits: bool) -> list:
    clauses = filters.member_of_clauses(RP.id, group.member_of)
    traits = group.required if own_traits else filters.Traits(forbidden=group.required.forbidden)
    clauses += filters.trait_clauses(RP.id, traits)
    if group.in_tree:
        clauses.append(RP.root_provider_id == _tree_root(s, group.in_tree))
    return clauses


def _simple_candidates(s, group: Group, root_required, limit) -> list[dict]:
    """One provider holds everything: one query, ordered and limited in SQL."""
    plain = not (group.required.any_of or group.required.forbidden or group.member_of.any_of
                 or group.member_of.forbidden or group.in_tree or root_required.any_of
                 or root_required.forbidden)
    if plain:
        return [{"allocations": {rp_id: dict(group.resources)}, "mappings": {"": [rp_id]}}
                for rp_id in fastpath.candidate_ids(s, group.resources, limit)]
    query = sa.select(RP.id).where(*_clauses(s, group, own_traits=True),
                                   *filters.trait_clauses(RP.id, root_required))
    for rc, amount in group.resources.items():
        query = query.where(RP.id.in_(filters.with_capacity(rc, amount)))
    query = query.order_by(RP.id)
    if limit:
        query = query.limit(limit)
    return [{"allocations": {rp_id: dict(group.resources)}, "mappings": {"": [rp_id]}}
            for rp_id in s.scalars(query)]


# --- the general case: nested trees, sharing providers, several groups ------------------

class _World:
    """What the general case reads once: roots, parents, traits, sharing anchors."""

    def __init__(self, s):
        self.s = s
        self.root: dict[int, int] = {}
        self.parent: dict[int, int | None] = {}
        self.traits: dict[int, set[str]] = {}
        self._anchors: dict[int, set[int]] = {}

    def load(self, ids) -> None:
        ids = set(ids) - set(self.root)
        if not ids:
            return
        for rp_id, root, parent in self.s.execute(
                sa.select(RP.id, RP.root_provider_id, RP.parent_provider_id)
                .where(RP.id.in_(sorted(ids)))):
            self.root[rp_id], self.parent[rp_id] = root, parent
        self.traits.update(catalog.provider_traits(self.s, ids))

    def anchors(self, rp_id: int) -> set[int]:
        """Roots of the trees a sharing provider shares an aggregate with."""
        if rp_id not in self._anchors:
            aggs = sa.select(ProviderAggregate.aggregate_uuid).where(
                ProviderAggregate.resource_provider_id == rp_id)
            self._anchors[rp_id] = set(self.s.scalars(
                sa.select(RP.root_provider_id).join(
                    ProviderAggregate, ProviderAggregate.resource_provider_id == RP.id)
                .where(ProviderAggregate.aggregate_uuid.in_(aggs)).distinct()))
        return self._anchors[rp_id]

    def ancestors(self, rp_id: int) -> list[int]:
        chain = [rp_id]
        while self.parent.get(chain[-1]) is not None:
            chain.append(self.parent[chain[-1]])
            self.load([chain[-1]])
        return chain


def _rows(s, group: Group, rc: str, amount: int) -> list[int]:
    own = bool(group.suffix)
    query = sa.select(RP.id).where(RP.id.in_(filters.with_capacity(rc, amount)),
                                   *_clauses(s, group, own_traits=own)).order_by(RP.id)
    return list(s.scalars(query))


def _options(world: _World, group: Group, found: dict[str, list[int]]) -> dict[int, list]:
    """Per tree root: the group's possible assignments [{rc: provider}]."""
    per_root: dict[int, dict[str, list[int]]] = {}
    for rc, ids in found.items():
        for rp_id in ids:
            roots = {world.root[rp_id]}
            if SHARES in world.traits[rp_id]:
                roots |= world.anchors(rp_id)
            for root in roots:
                per_root.setdefault(root, {}).setdefault(rc, []).append(rp_id)
    out: dict[int, list] = {}
    for root, by_rc in per_root.items():
        if set(by_rc) != set(group.resources):
            continue
        if group.suffix:  # a numbered group comes from one provider
            common = set.intersection(*(set(v) for v in by_rc.values()))
            choices = [{rc: rp for rc in group.resources} for rp in sorted(common)]
        else:
            rcs = list(group.resources)
            choices = [dict(zip(rcs, combo)) for combo in
                       itertools.product(*(by_rc[rc] for rc in rcs))]
            choices = [c for c in choices if group.required.satisfied_by(
                set().union(*(world.traits[rp] for rp in c.values())))]
        if choices:
            out[root] = choices
    return out


def _resourceless(s, world: _World, group: Group) -> dict[int, list]:
    ids = list(s.scalars(sa.select(RP.id).where(*_clauses(s, group, own_traits=True))))
    world.load(ids)
    out: dict[int, list] = {}
    for rp_id in ids:
        out.setdefault(world.root[rp_id], []).append({"": rp_id})
    return out


def _general(s, query: Query, limit: int | None) -> list[dict]:
    world = _World(s)
    per_group = []
    for group in query.groups:
        if not group.resources:
            per_group.append(_resourceless(s, world, group))
            continue
        found = {rc: _rows(s, group, rc, n) for rc, n in group.resources.items()}
        world.load({i for ids in found.values() for i in ids})
        per_group.append(_options(world, group, found))
    roots = set.intersection(*(set(g) for g in per_group)) if per_group else set()
    if query.tree_filter is not None and query.tree_filter.in_tree:
        roots &= {_tree_root(s, query.tree_filter.in_tree)}
    world.load(roots)
    rooted = [r for r in sorted(roots)
              if query.root_required.satisfied_by(world.traits.get(r, set()))]
    room = _room(s, {rp for g in per_group for choices in g.values() for c in choices
                     for rp in c.values()})
    out, seen = [], set()
    for root in rooted:
        for combo in itertools.product(*(g[root] for g in per_group)):
            request = _merge(query, combo, room, world)
            if request is None:
                continue
            key = repr((sorted((rp, sorted(res.items()))
                               for rp, res in request["allocations"].items()),
                        sorted(request["mappings"].items())))
            if key not in seen:
                seen.add(key)
                out.append(request)
                if limit and len(out) >= limit:
                    return out
    return out


def _room(s, ids) -> dict[tuple[int, str], float]:
    """(provider, class) -> capacity left, for the merged-request check."""
    if not ids:
        return {}
    ids = sorted(ids)
    used = {(rp, rc): n for rp, rc, n in s.execute(
        sa.select(Allocation.resource_provider_id, Allocation.resource_class,
                  sa.func.sum(Allocation.used))
        .where(Allocation.resource_provider_id.in_(ids))
        .group_by(Allocation.resource_provider_id, Allocation.resource_class))}
    return {(i.resource_provider_id, i.resource_class):
            (i.total - i.reserved) * i.allocation_ratio
            - used.get((i.resource_provider_id, i.resource_class), 0)
            for i in s.scalars(sa.select(Inventory).where(
                Inventory.resource_provider_id.in_(ids)))}


def _merge(query: Query, combo, room, world: _World) -> dict | None:
    allocations: dict[int, dict[str, int]] = {}
    mappings: dict[str, list[int]] = {}
    numbered: list[set[int]] = []
    for group, choice in zip(query.groups, combo):
        used = set(choice.values())
        mappings[group.suffix] = sorted(used)
        if group.suffix:
            numbered.append(used)
        for rc, rp in choice.items():
            if rc:
                res = allocations.setdefault(rp, {})
                res[rc] = res.get(rc, 0) + group.resources[rc]
    if query.group_policy == "isolate":
        flat = [rp for used in numbered for rp in used]
        if len(flat) != len(set(flat)):
            return None
    for rp, res in allocations.items():
        if any(room.get((rp, rc), 0) < n for rc, n in res.items()):
            return None
    if query.tree_filter is not None:
        used = set(allocations) | {rp for rps in mappings.values() for rp in rps}
        if not query.tree_filter.required.satisfied_by(
                set().union(*(world.traits[rp] for rp in used))):
            return None
    for suffixes in query.same_subtree:
        members = {rp for sfx in suffixes for rp in mappings.get(sfx, [])}
        if not any(members <= _subtree_of(world, top, members) for top in members):
            return None
    return {"allocations": allocations, "mappings": mappings}


def _subtree_of(world: _World, top: int, members: set[int]) -> set[int]:
    """The members that have ``top`` as an ancestor (or are it)."""
    return {m for m in members if top in world.ancestors(m)}
