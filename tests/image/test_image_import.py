"""Interoperable import (web-download, glance-direct) and its tasks, through
python-glanceclient and openstacksdk as their users call them; web-download fetches from
a local HTTP server that the test allows by [import_filtering_opts]."""
from __future__ import annotations

import hashlib
import http.server
import threading
import time
import uuid

import pytest

from image_helpers import assert_error

DATA = b"web-download image data " * 1000


class _Handler(http.server.BaseHTTPRequestHandler):
    redirect_to = None

    def do_GET(self):  # noqa: N802 - http.server's name
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", self.server.redirect_to)
            self.end_headers()
            return
        if self.path.startswith("/missing"):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(DATA)))
        self.end_headers()
        self.wfile.write(DATA)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def web():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.redirect_to = "http://localhost.invalid/x"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def allow_web(web):
    from pocketstack.common import config

    port = web.server_address[1]
    config.CONF.set_override("allowed_hosts", ["127.0.0.1"], group="import_filtering_opts")
    config.CONF.set_override("allowed_ports", [port], group="import_filtering_opts")
    yield f"http://127.0.0.1:{port}"
    config.CONF.clear_override("allowed_hosts", group="import_filtering_opts")
    config.CONF.clear_override("allowed_ports", group="import_filtering_opts")


@pytest.fixture(scope="module")
def gc_for(cloud):
    from glanceclient import Client

    return lambda session: Client("2", session=session, region_name="RegionOne")


def _wait(fetch, done, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if done(value):
            return value
        assert time.monotonic() < deadline, value
        time.sleep(0.1)


def test_info_import_tells_what_works(glance):
    methods = glance.get("/v2/info/import").json()["import-methods"]["value"]
    assert methods == ["glance-direct", "web-download"]  # one store: no copy-image
    r = glance.post("/v2/images", json={"name": "x", "disk_format": "raw",
                                        "container_format": "bare"})
    assert r.headers["OpenStack-image-import-methods"] == "glance-direct,web-download"
    assert glance.get("/v2/info/usage").json() == {"usage": {}}


def test_web_download_through_glanceclient(cloud, as_user, gc_for, allow_web):
    user = as_user()
    gc = gc_for(cloud.user_session(user.user))
    image = gc.images.create(name=f"wd-{uuid.uuid4().hex[:6]}", disk_format="raw",
                             container_format="bare")
    gc.images.image_import(image["id"], method="web-download",
                           uri=f"{allow_web}/cirros.img")
    active = _wait(lambda: gc.images.get(image["id"]), lambda i: i["status"] == "active")
    assert active["size"] == len(DATA)
    assert active["os_hash_value"] == hashlib.sha512(DATA).hexdigest()
    assert "os_glance_import_task" not in active
    assert b"".join(gc.images.data(image["id"])) == DATA
    # the image's tasks: the member sees its own import (glance's tasks_get_by_image)
    sdk = cloud.user_sdk(user.user)
    tasks = list(sdk.image.image_tasks(image["id"]))
    assert [(t.type, t.status) for t in tasks] == [("api_image_import", "success")]
    assert tasks[0].input["import_req"]["method"] == {"name": "web-download",
                                                      "uri": f"{allow_web}/cirros.img"}
    assert tasks[0].user_id == user.user["id"] and tasks[0].expires_at
    # /v2/tasks is admin-only (tasks_api_access)
    assert_error(user.get("/v2/tasks"), 403)
    admin = cloud.sdk()
    shown = admin.image.get_task(tasks[0].id)
    assert shown.status == "success" and shown.result == {"image_id": image["id"]}
    assert shown.owner_id == user.project_id
    listed = [t.id for t in admin.image.tasks(status="success")]
    assert tasks[0].id in listed


def test_web_download_filtering_and_failures(glance, allow_web, web):
    image = glance.create()
    url = f"/v2/images/{image['id']}/import"

    def wd(uri):
        return glance.post(url, json={"method": {"name": "web-download", "uri": uri}})

    # refused before anything happens: scheme, host, port, encoded addresses, no uri
    for uri in ("ftp://127.0.0.1/x", "http://10.1.2.3/x", "http://127.0.0.1:1/x",
                "http://2130706433/x", "file:///etc/passwd", None, 42):
        assert_error(wd(uri), 400, "does not pass filtering")
    assert glance.show(image["id"])["status"] == "queued"
    # a redirect to a host outside the allow-list is not followed: the task fails and the
    # image is queued again
    assert wd(f"{allow_web}/redirect").status_code == 202
    back = _wait(lambda: glance.show(image["id"]), lambda i: i["status"] == "queued")
    assert "os_glance_import_task" not in back
    tasks = glance.get(f"/v2/images/{image['id']}/tasks").json()["tasks"]
    assert tasks[-1]["status"] == "failure"
    assert "Redirect to disallowed URL" in tasks[-1]["message"]
    # an HTTP error is a failed task too, and the image can be imported again after
    assert wd(f"{allow_web}/missing").status_code == 202
    _wait(lambda: glance.get(f"/v2/images/{image['id']}/tasks").json()["tasks"],
          lambda t: len(t) == 2 and t[-1]["status"] == "failure")
    _wait(lambda: glance.show(image["id"]), lambda i: i["status"] == "queued")
    assert wd(f"{allow_web}/ok").status_code == 202
    _wait(lambda: glance.show(image["id"]), lambda i: i["status"] == "active")
    # glance's state checks
    assert_error(wd(f"{allow_web}/ok"), 409, "active cannot be target")
    assert_error(glance.post(url, json={"method": {"name": "copy-image"}}), 400,
                 "Unknown import method")


def test_web_download_needs_formats_and_the_lock(glance, allow_web):
    bare = glance.create(disk_format=None, container_format=None)
    assert_error(glance.post(f"/v2/images/{bare['id']}/import", json={
        "method": {"name": "web-download", "uri": f"{allow_web}/x"}}), 409,
        "'container_format' needs to be set")
    image = glance.create()
    from pocketstack.common import db
    from pocketstack.image.models import Image, ImageProperty

    with db.transaction() as s:  # an import in progress holds the lock
        row = s.get(Image, image["id"])
        row.properties.append(ImageProperty(name="os_glance_import_task",
                                            value=str(uuid.uuid4())))
    assert_error(glance.post(f"/v2/images/{image['id']}/import", json={
        "method": {"name": "web-download", "uri": f"{allow_web}/x"}}), 409,
        "prior operation is still in progress")


def test_web_download_is_refused_for_loopback_by_default(glance, web):
    # no allowed_hosts: any host on 80/443, but never loopback (checked on the address)
    from pocketstack.image import webfetch

    assert webfetch.allowed("http://localhost/x")
    with pytest.raises(webfetch.FetchError, match="may not use"):
        webfetch.open_url("http://localhost/x")
    assert not webfetch.allowed(f"http://127.0.0.1:{web.server_address[1]}/x")


def test_glance_direct_is_recorded_as_a_task(glance):
    image = glance.create()
    r = glance.put(f"/v2/images/{image['id']}/stage", content=b"staged",
                   headers={"Content-Type": "application/octet-stream"})
    assert r.status_code == 204
    assert glance.post(f"/v2/images/{image['id']}/import",
                       json={"method": {"name": "glance-direct"}}).status_code == 202
    tasks = glance.get(f"/v2/images/{image['id']}/tasks").json()["tasks"]
    assert [(t["status"], t["input"]["import_req"]["method"]["name"]) for t in tasks] == [
        ("success", "glance-direct")]
    task = glance.get(f"/v2/tasks/{tasks[0]['id']}").json()
    assert task["self"] == f"/v2/tasks/{task['id']}" and task["schema"] == "/v2/schemas/task"
    assert task["image_id"] == image["id"]


def test_task_api_errors(glance):
    assert_error(glance.get(f"/v2/tasks/{uuid.uuid4()}"), 404)
    assert_error(glance.get("/v2/tasks?status=done"), 400, "Invalid status value")
    assert_error(glance.get("/v2/tasks?type=copy"), 400, "Invalid type value")
    assert_error(glance.get("/v2/tasks?sort_dir=up"), 400, "Invalid sort direction")
    assert_error(glance.get("/v2/tasks?limit=x"), 400, "must be an integer")
    assert_error(glance.get("/v2/tasks?marker=nope"), 400, "Invalid marker")
    assert_error(glance.delete(f"/v2/tasks/{uuid.uuid4()}"), 405, "auto deleted")
    assert_error(glance.post("/v2/tasks", json={"type": "import", "input": {}}), 400,
                 "interoperable image import")
    page = glance.get("/v2/tasks?limit=1").json()
    assert page["schema"] == "/v2/schemas/tasks" and len(page["tasks"]) <= 1
    if page["tasks"]:
        assert set(page["tasks"][0]) == {"id", "type", "status", "owner", "created_at",
                                         "updated_at", "self", "schema", "expires_at"}
        assert "marker=" in page["next"]
    assert glance.get("/v2/schemas/task").json()["name"] == "task"
    assert_error(glance.get(f"/v2/images/{uuid.uuid4()}/tasks"), 404)


def test_restart_fails_unfinished_imports(glance, allow_web):
    """A web-download cut by a restart: the image is queued again, its task failed, the
    lock gone, and a new import works."""
    from pocketstack.common import db
    from pocketstack.common.timeutils import utcnow
    from pocketstack.image import service
    from pocketstack.image.models import Image, ImageProperty, Task

    image = glance.create()
    task_id = str(uuid.uuid4())
    with db.transaction() as s:  # what a process that died mid-download leaves behind
        row = s.get(Image, image["id"])
        row.status = "importing"
        row.properties.append(ImageProperty(name="os_glance_import_task", value=task_id))
        s.add(Task(id=task_id, type="api_image_import", status="processing",
                   owner=glance.project_id, image_id=image["id"], input={}, message="",
                   created_at=utcnow(), updated_at=utcnow()))
    service.recover()
    shown = glance.show(image["id"])
    assert shown["status"] == "queued" and "os_glance_import_task" not in shown
    task = glance.get(f"/v2/tasks/{task_id}").json()
    assert task["status"] == "failure" and "interrupted" in task["message"]
    r = glance.post(f"/v2/images/{image['id']}/import",
                    json={"method": {"name": "web-download", "uri": f"{allow_web}/a"}})
    assert r.status_code == 202
    _wait(lambda: glance.show(image["id"]), lambda i: i["status"] == "active")
