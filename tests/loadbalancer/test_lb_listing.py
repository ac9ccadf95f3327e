"""Listings as Octavia's: sort=key:dir,... (or sort_key/sort_dir) then created_at and id,
NULL names first; limit/marker pages with next and previous links (page_reverse), the
filters kept; tag filters; Octavia's 400s for a bad sort, marker or limit. Through
openstacksdk's proxy (its own pagination follows the next links)."""
from __future__ import annotations

import urllib.parse

from lb_helpers import active


def _ids(body, key="loadbalancers"):
    return [o["id"] for o in body[key]]


def _get(proxy, path):
    response = proxy.get(path)
    assert response.status_code == 200, response.text
    return response.json()


def _relative(href: str) -> str:
    """A link's path and query from /lbaas/ on (the proxy adds its version)."""
    parsed = urllib.parse.urlparse(href)
    return parsed.path[parsed.path.index("/lbaas/"):] + "?" + parsed.query


def _walk(proxy, path, key="loadbalancers"):
    """Every page from ``path`` on through the next links."""
    pages = []
    while path:
        body = _get(proxy, path)
        pages.append(_ids(body, key))
        nxt = [link["href"] for link in body[f"{key}_links"] if link["rel"] == "next"]
        path = _relative(nxt[0]) if nxt else None
        assert len(pages) < 20
    return pages


def test_load_balancers_sort_and_page_in_octavias_way(conn, subnet, raw):
    lb_api = conn.load_balancer
    specs = [("delta", ["blue"]), ("alpha", ["blue", "red"]), (None, []),
             ("charlie", ["red"]), ("alpha", [])]
    made = []
    for name, tags in specs:
        made.append(lb_api.create_load_balancer(vip_subnet_id=subnet.id, tags=tags,
                                                **({"name": name} if name else {})).id)
    for lb_id in made:
        active(conn, lb_id)
    by_name = {i: (specs[i][0] or "") for i in range(len(made))}

    # The default order is creation's; openstacksdk pages through the next links.
    assert _ids(_get(lb_api, "/lbaas/loadbalancers")) == made
    assert [lb.id for lb in lb_api.load_balancers(limit=2)] == made

    ascending = [made[i] for i in sorted(by_name, key=lambda i: (by_name[i], i))]
    descending = [made[i] for i in sorted(by_name, key=lambda i: (_neg(by_name[i]), i))]
    assert ascending[0] == made[2]  # the one without a name first
    assert _ids(_get(lb_api, "/lbaas/loadbalancers?sort=name:asc")) == ascending
    assert _ids(_get(lb_api, "/lbaas/loadbalancers?sort=name")) == ascending
    assert _ids(_get(lb_api, "/lbaas/loadbalancers?sort=name:desc")) == descending
    assert _ids(_get(lb_api, "/lbaas/loadbalancers?sort_key=name&sort_dir=desc")) == \
        descending
    assert _ids(_get(lb_api, "/lbaas/loadbalancers?sort=name:desc,created_at:desc")) == [
        made[i] for i in sorted(by_name, key=lambda i: (_neg(by_name[i]), -i))]
    assert _ids(_get(lb_api, "/lbaas/loadbalancers?sort=created_at:desc")) == made[::-1]

    # Pages of two in the sorted order, through the next links, the sort kept.
    pages = _walk(lb_api, "/lbaas/loadbalancers?sort=name:desc&limit=2")
    assert pages == [descending[0:2], descending[2:4], descending[4:]]
    second = _get(lb_api, f"/lbaas/loadbalancers?sort=name:desc&limit=2&marker={pages[0][-1]}")
    rels = {link["rel"]: link["href"] for link in second["loadbalancers_links"]}
    assert set(rels) == {"previous", "next"}
    assert "page_reverse=True" in rels["previous"]
    assert _ids(_get(lb_api, _relative(rels["previous"]))) == descending[0:2]
    # page_reverse: the page before a marker, in the order asked.
    assert _ids(_get(lb_api, f"/lbaas/loadbalancers?sort=name:desc&limit=2&page_reverse=True"
                             f"&marker={descending[3]}")) == descending[1:3]
    # A marker on a NULL name: the rows after it are those created later with none, then
    # the named ones.
    assert _ids(_get(lb_api, f"/lbaas/loadbalancers?sort=name:asc&marker={made[2]}")) == \
        ascending[1:]
    assert _ids(_get(lb_api, f"/lbaas/loadbalancers?sort=name:desc&marker={made[2]}")) == []

    # Tag filters, in SQL, with paging keeping them.
    assert _ids(_get(lb_api, "/lbaas/loadbalancers?tags=blue,red")) == [made[1]]
    assert _ids(_get(lb_api, "/lbaas/loadbalancers?tags-any=blue,red")) == made[0:2] + [made[3]]
    assert _ids(_get(lb_api, "/lbaas/loadbalancers?not-tags=blue,red")) == [
        made[0], made[2], made[3], made[4]]
    assert _ids(_get(lb_api, "/lbaas/loadbalancers?not-tags-any=red")) == [
        made[0], made[2], made[4]]
    assert _walk(lb_api, "/lbaas/loadbalancers?tags-any=blue,red&limit=1&sort=name") == [
        [made[1]], [made[3]], [made[0]]]
    assert [lb.id for lb in lb_api.load_balancers(tags=["red"], limit=1)] == [made[1], made[3]]
    assert _ids(_get(lb_api, "/lbaas/loadbalancers?name=alpha&sort=id:desc")) == sorted(
        [made[1], made[4]], reverse=True)

    # limit 0 or below: no limit; fields still select.
    assert _ids(_get(lb_api, "/lbaas/loadbalancers?limit=0")) == made
    assert _ids(_get(lb_api, "/lbaas/loadbalancers?limit=-1&sort=name")) == ascending
    assert _get(lb_api, "/lbaas/loadbalancers?limit=1&fields=id,name")["loadbalancers"] == [
        {"id": made[0], "name": "delta"}]

    for query, message in (
            ("sort=name:sideways", "Supplied sort direction 'sideways' is not valid."),
            ("sort_key=name&sort_dir=up", "Supplied sort direction 'up' is not valid."),
            ("sort=claimed_by", "Supplied sort key 'claimed_by' is not valid."),
            ("sort=tags", "Supplied sort key 'tags' is not valid."),
            ("sort=name:asc:x", "Supplied sort key 'name:asc:x' is not valid."),
            ("sort=nothing", "Supplied sort key 'nothing' is not valid."),
            ("marker=6c0a7bcc-8a4a-4a58-9f3c-4d1e4b0e2f11",
             "Supplied pagination marker '6c0a7bcc-8a4a-4a58-9f3c-4d1e4b0e2f11' is not "
             "valid."),
            ("limit=two", "Supplied pagination limit 'two' is not valid.")):
        assert raw.error("GET", f"/v2/lbaas/loadbalancers?{query}") == (400, message), query
    for lb_id in made:
        lb_api.delete_load_balancer(lb_id)


def _neg(text: str) -> tuple:
    """A key that sorts strings descending (NULL, shown as '', last)."""
    return tuple(-ord(c) for c in text) + (1,) if text else (float("inf"),)


def test_members_sort_on_several_keys_and_page_through_openstacksdk(conn, subnet, raw):
    lb_api = conn.load_balancer
    lb = lb_api.create_load_balancer(vip_subnet_id=subnet.id)
    active(conn, lb.id)
    pool = lb_api.create_pool(loadbalancer_id=lb.id, protocol="HTTP",
                              lb_algorithm="ROUND_ROBIN")
    active(conn, lb.id)
    specs = [("10.20.0.13", 5), ("10.20.0.11", 1), ("10.20.0.12", 5), ("10.20.0.10", 1)]
    made = []
    for address, weight in specs:
        made.append(lb_api.create_member(pool, address=address, protocol_port=80,
                                         weight=weight).id)
        active(conn, lb.id)
    base = f"/lbaas/pools/{pool.id}/members"
    expected = [made[2], made[0], made[3], made[1]]  # weight desc, then address asc
    assert _ids(_get(lb_api, f"{base}?sort=weight:desc,address:asc"), "members") == expected
    assert _walk(lb_api, f"{base}?sort=weight:desc,address:asc&limit=3", "members") == [
        expected[:3], expected[3:]]
    assert [m.id for m in lb_api.members(pool, limit=1)] == made
    assert _ids(_get(lb_api, f"{base}?sort_key=weight,address&sort_dir=asc,desc"),
                "members") == [made[1], made[3], made[0], made[2]]
    assert raw.error("GET", f"/v2{base}?sort=pool_id:asc,weight:down") == (
        400, "Supplied sort direction 'down' is not valid.")
    lb_api.delete_load_balancer(lb.id, cascade=True)
