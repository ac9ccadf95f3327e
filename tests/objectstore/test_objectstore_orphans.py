"""Bytes under the object store that nothing holds: what a crash between an upload's
bytes and its row leaves (a renamed file, a copied blob) is reported by `pocketstack
audit` and removed by the store's sweep, which never touches what an object holds."""
from __future__ import annotations

import os
import time
import uuid

from pocketstack.cli.audit import run_checks
from pocketstack.common import db
from pocketstack.objectstore import api, blobs, store
from pocketstack.objectstore.models import Blob


def _left_file(data: bytes) -> str:
    """A file under its final name that no row names: a large upload renamed into place
    by a process killed before its row committed."""
    path = store.path_of(uuid.uuid4().hex)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _left_blob(data: bytes) -> str:
    """A blob no row names: a copy of a small object killed before its row committed."""
    blob_id = blobs.new_id()
    with db.transaction() as s:
        s.add(Blob(id=blob_id, data=data, created=time.time()))
    return blob_id


def test_audit_reports_bytes_no_object_holds(cloud, owner, container):
    owner.swift.put_object(container, "kept", b"small and whole")
    owner.swift.put_object(container, "large", b"x" * (blobs.MAX + 1))
    with cloud.cloud.runtime.activated():
        account = owner.url.rstrip("/").rsplit("/", 1)[1]
        info = api.find_container(account, container)
        held = [api.get_object(info, name).file for name in ("kept", "large")]
        assert blobs.is_blob(held[0]) and not blobs.is_blob(held[1])
        left, blob = _left_file(b"renamed, never committed"), _left_blob(b"copied")
        try:
            found = run_checks(stuck_after=300)["object store"]
            assert f"object store file {left} is held by no object (an upload cut short)" \
                in found
            assert f"object store blob {blob} is held by no object (an upload cut short)" \
                in found
            assert not [problem for problem in found if held[0] in problem
                        or store.path_of(held[1]) in problem]
        finally:
            os.unlink(left)
            blobs.delete(blob)
        assert not [problem for problem in run_checks(stuck_after=300)["object store"]
                    if left in problem or blob in problem]


def test_the_sweep_removes_old_unheld_files_and_keeps_every_objects(cloud, owner, container):
    """Files and blobs an hour old: those no row names go, the objects' stay and still
    read (in a data dir under /tmp too, which the sweep once took for its temp
    directory)."""
    owner.swift.put_object(container, "small", b"4 KiB or so")
    owner.swift.put_object(container, "large", b"x" * (store.CHUNK + 1))
    with cloud.cloud.runtime.activated():
        left, blob = _left_file(b"renamed, never committed"), _left_blob(b"copied")
        hour_ago = time.time() - 3600
        for directory, _, names in os.walk(store.root()):
            for name in names:
                os.utime(os.path.join(directory, name), (hour_ago, hour_ago))
        with db.transaction() as s:
            s.query(Blob).update({Blob.created: hour_ago})
        assert store.sweep(api.all_files) >= 2
        assert not os.path.exists(left)
        with db.reader() as s:
            assert s.get(Blob, blob) is None
    assert owner.swift.get_object(container, "small")[1] == b"4 KiB or so"
    assert len(owner.swift.get_object(container, "large")[1]) == store.CHUNK + 1


def test_a_deleted_or_replaced_small_objects_bytes_go_with_it(cloud, owner, container):
    """DELETE and overwrite leave nothing behind for audit to find or the sweep to take."""
    owner.swift.put_object(container, "gone", b"deleted soon")
    owner.swift.put_object(container, "again", b"first version")
    with cloud.cloud.runtime.activated():
        account = owner.url.rstrip("/").rsplit("/", 1)[1]
        info = api.find_container(account, container)
        first = [api.get_object(info, name).file for name in ("gone", "again")]
    owner.swift.delete_object(container, "gone")
    owner.swift.put_object(container, "again", b"second version")
    assert owner.swift.get_object(container, "again")[1] == b"second version"
    with cloud.cloud.runtime.activated(), db.reader() as s:
        assert s.get(Blob, first[0]) is None and s.get(Blob, first[1]) is None
