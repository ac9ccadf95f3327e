"""A server's instance actions filtered and paged as nova does (2.58: limit,
marker, changes-since; 2.66: changes-before), through openstacksdk and the API."""
import datetime as dt
import time
import uuid

import pytest


@pytest.fixture(scope="module")
def conn(cloud, member):
    return cloud.user_sdk(member)


@pytest.fixture(scope="module")
def server_with_actions(conn, image_id):
    """A server with three actions a second or more apart: create, stop, start."""
    s = conn.compute.create_server(name=f"acts-{uuid.uuid4().hex[:6]}", image_id=image_id,
                                   flavor_id="42", networks="none")
    s = conn.compute.wait_for_server(s, wait=60, interval=0.1)
    marks = []
    for step, status in ((conn.compute.stop_server, "SHUTOFF"),
                         (conn.compute.start_server, "ACTIVE")):
        time.sleep(1.1)  # the API shows times to the second
        marks.append(dt.datetime.now(dt.timezone.utc).replace(microsecond=0, tzinfo=None))
        time.sleep(1.1)
        step(s)
        conn.compute.wait_for_server(s, status=status, wait=60, interval=0.1)
    yield s, marks
    conn.compute.delete_server(s, ignore_missing=True)
    conn.compute.wait_for_delete(s, wait=60, interval=0.1)


def _actions(conn, server, version="2.66", **query):
    r = conn.compute.get(f"/servers/{server.id}/os-instance-actions", params=query,
                         microversion=version, raise_exc=False)
    return r


def test_changes_since_and_before_pick_a_window(conn, server_with_actions):
    server, (before_stop, before_start) = server_with_actions
    every = [a.action for a in conn.compute.server_actions(server)]
    assert every == ["start", "stop", "create"]
    since = [a.action for a in conn.compute.server_actions(
        server, changes_since=before_stop.isoformat())]
    assert since == ["start", "stop"]
    window = _actions(conn, server, **{"changes-since": before_stop.isoformat(),
                                       "changes-before": before_start.isoformat()})
    assert window.status_code == 200
    assert [a["action"] for a in window.json()["instanceActions"]] == ["stop"]
    # changes-before is 2.66's: earlier versions ignore it, as nova's schema does
    older = _actions(conn, server, "2.65", **{"changes-before": before_stop.isoformat()})
    assert [a["action"] for a in older.json()["instanceActions"]] == ["start", "stop", "create"]


def test_limit_and_marker_page_with_a_next_link(conn, server_with_actions):
    server, _ = server_with_actions
    first = _actions(conn, server, limit=2).json()
    assert [a["action"] for a in first["instanceActions"]] == ["start", "stop"]
    nxt = first["instanceActions_links"][0]
    assert nxt["rel"] == "next" and "marker=" in nxt["href"]
    rest = _actions(conn, server, limit=2,
                    marker=first["instanceActions"][-1]["request_id"]).json()
    assert [a["action"] for a in rest["instanceActions"]] == ["create"]
    assert "instanceActions_links" not in rest


def test_bad_filters_are_clear_4xx(conn, server_with_actions):
    server, (before_stop, before_start) = server_with_actions
    assert _actions(conn, server, marker="req-nothing").status_code == 404
    assert _actions(conn, server, limit="x").status_code == 400
    assert _actions(conn, server, **{"changes-since": "yesterday"}).status_code == 400
    reversed_window = _actions(conn, server, **{"changes-since": before_start.isoformat(),
                                                "changes-before": before_stop.isoformat()})
    assert reversed_window.status_code == 400
    assert "changes-since must be less than or equal" in reversed_window.text
