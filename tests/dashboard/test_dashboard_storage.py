"""The dashboard's volume snapshot and backup pages over real HTTP: create from a volume,
list, delete, restore a backup, and the block storage API's message on bad input (nothing
made)."""
from __future__ import annotations

import time

import pytest

from helpers.dashboard import alert_text, csrf_token, login


def _until(fetch, want, timeout=60):
    deadline = time.monotonic() + timeout
    while (value := fetch()) != want:
        assert time.monotonic() < deadline, f"{value!r} never became {want!r}"
        time.sleep(0.05)


@pytest.fixture()
def member_with_volume(cloud):
    user = cloud.make_user()
    client = login(cloud, user["name"], user["password"])
    conn = cloud.user_sdk(user)
    volume = conn.block_storage.create_volume(name="dash-src", size=1)
    _until(lambda: conn.block_storage.get_volume(volume.id).status, "available")
    yield user, client, conn, volume
    client.close()


def _post(client, path, **data):
    page = client.get(path)
    assert page.status_code == 200, page.text
    return client.post(path, data={"csrf_token": csrf_token(page.text), **data})


@pytest.mark.parametrize("kind", ["snapshots", "backups"])
def test_create_list_and_delete_from_a_volume(cloud, member_with_volume, kind):
    user, client, conn, volume = member_with_volume
    path = f"/dashboard/volumes/{kind}"
    listed = (conn.block_storage.snapshots if kind == "snapshots"
              else conn.block_storage.backups)
    get = (conn.block_storage.get_snapshot if kind == "snapshots"
           else conn.block_storage.get_backup)
    page = client.get(path)
    assert page.status_code == 200 and "None in this project." in page.text
    assert f'<option value="{volume.id}">dash-src</option>' in page.text
    r = _post(client, path, action="create", volume_id=volume.id, name=f"dash-{kind}",
              description="before the upgrade")
    assert r.status_code == 303 and r.headers["location"] == path
    (item,) = list(listed())
    assert item.name == f"dash-{kind}" and item.volume_id == volume.id
    _until(lambda: get(item.id).status, "available")
    page = client.get(path).text
    assert (f'<th scope="row">dash-{kind}</th><td>dash-src</td><td>1</td>') in page
    assert f'data-item-status="{item.id}">available' in page
    # A volume that is not there: the API's message, and nothing made.
    bad = _post(client, path, action="create", volume_id="no-such-volume", name="bad")
    api = cloud.user_session(user).post(
        f"{cloud.url}/volume/v3/{user['project_id']}/{kind}",
        json={kind[:-1]: {"volume_id": "no-such-volume", "name": "bad"}}, raise_exc=False)
    assert bad.status_code == api.status_code and 400 <= api.status_code < 500
    assert alert_text(bad.text) == next(iter(api.json().values()))["message"]
    assert [x.id for x in listed()] == [item.id]
    assert _post(client, path, action="create", volume_id="").status_code == 400
    r = _post(client, path, action="delete", item_id=item.id)
    assert r.status_code == 303
    _until(lambda: [x.id for x in listed()], [])
    assert _post(client, path, action="delete", item_id="").status_code == 400


def test_a_backup_restores_to_a_new_volume_and_over_an_existing_one_after_confirming(
        cloud, member_with_volume):
    user, client, conn, volume = member_with_volume
    path = "/dashboard/volumes/backups"
    backup = conn.block_storage.create_backup(volume_id=volume.id, name="dash-bk")
    _until(lambda: conn.block_storage.get_backup(backup.id).status, "available")
    target = conn.block_storage.create_volume(name="dash-target", size=1)
    _until(lambda: conn.block_storage.get_volume(target.id).status, "available")
    page = client.get(path).text
    form = page.split(f'data-restore="{backup.id}"')[1].split("</form>")[0]
    assert '<option value="">a new volume</option>' in form
    assert f'<option value="{target.id}">dash-target (overwrite)</option>' in form
    # To a new volume: made at once, from the backup.
    r = _post(client, path, action="restore", item_id=backup.id, volume_id="",
              name="dash-restored")
    assert r.status_code == 200 and "Restoring into volume dash-restored." in r.text
    (new,) = [v for v in conn.block_storage.volumes() if v.name == "dash-restored"]
    _until(lambda: conn.block_storage.get_volume(new.id).status, "available")
    _until(lambda: conn.block_storage.get_backup(backup.id).status, "available")
    # Over an existing volume: the page asks first, and nothing happens until confirmed.
    r = _post(client, path, action="restore", item_id=backup.id, volume_id=target.id)
    assert r.status_code == 200 and 'id="restore-confirm"' in r.text
    assert "Overwrite volume dash-target?" in r.text
    assert conn.block_storage.get_volume(target.id).status == "available"
    assert conn.block_storage.get_backup(backup.id).status == "available"
    r = _post(client, path, action="restore", item_id=backup.id, volume_id=target.id,
              confirm="yes")
    assert r.status_code == 200 and "Restoring into volume dash-target." in r.text
    _until(lambda: conn.block_storage.get_backup(backup.id).status, "available")
    _until(lambda: conn.block_storage.get_volume(target.id).status, "available")
    # A volume that is not there: the API's 4xx and its message.
    r = _post(client, path, action="restore", item_id=backup.id, volume_id="no-such",
              confirm="yes")
    assert 400 <= r.status_code < 500 and alert_text(r.text)
    for v in (new, target):
        conn.block_storage.delete_volume(v.id)
    conn.block_storage.delete_backup(backup.id)
    _until(lambda: list(conn.block_storage.backups()), [])
