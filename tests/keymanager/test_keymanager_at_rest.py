"""Payloads are encrypted at rest: per-project keys wrapped by a master key kept in the data
dir (not in the database), so neither the database file nor a listing holds a payload."""
from __future__ import annotations

import os
import stat
import uuid

import sqlalchemy as sa


def _database_bytes(cloud) -> bytes:
    """The SQLite file and its write-ahead log, as a copy of the disk would have them."""
    data = b""
    for suffix in ("", "-wal"):
        path = os.path.join(cloud.data_dir, "pocketstack.db" + suffix)
        if os.path.exists(path):
            with open(path, "rb") as f:
                data += f.read()
    return data


def test_database_file_does_not_hold_the_plaintext(cloud, member):
    plaintext = f"plaintext-marker-{uuid.uuid4().hex}"
    ref = member.store(plaintext)
    binary = os.urandom(24)
    r = member.post("/v1/secrets", {"name": "put-later"})
    later = r.json()["secret_ref"]
    member.put(later, data=binary, headers={"Content-Type": "application/octet-stream"})
    assert member.get(ref + "/payload", headers={"Accept": "text/plain"}).text == plaintext
    on_disk = _database_bytes(cloud)
    assert plaintext.encode() not in on_disk
    assert binary not in on_disk
    assert plaintext not in member.get("/v1/secrets").text
    assert plaintext not in member.get(ref).text


def test_projects_have_their_own_wrapped_keys(cloud, member, other):
    member.store("a")
    other.store("b")
    from pocketstack.common import db
    from pocketstack.keymanager.models import ProjectKey

    with db.reader() as s:
        keys = {k.project_id: k.wrapped_key for k in s.scalars(sa.select(ProjectKey).where(
            ProjectKey.project_id.in_([member.user["project_id"],
                                       other.user["project_id"]])))}
    assert len(keys) == 2 and len(set(keys.values())) == 2
    master = os.path.join(cloud.data_dir, "keymanager", "master.key")
    assert stat.S_IMODE(os.stat(master).st_mode) == 0o600
    with open(master, "rb") as f:
        assert f.read().strip() not in _database_bytes(cloud)
