"""Files under the object store that nothing holds: what a crash between an upload's
bytes and its row leaves is reported by `pocketstack audit` and removed by the store's
sweep, which never touches a file an object holds."""
from __future__ import annotations

import os
import time

from pocketstack.cli.audit import run_checks
from pocketstack.objectstore import api, store


def test_audit_reports_a_file_no_object_holds(cloud, owner, container):
    """What a kill between an upload's bytes and its row leaves (a small object is written
    under its final name at once): a file no row names, reported until it is gone."""
    owner.swift.put_object(container, "kept", b"small and whole")
    with cloud.cloud.runtime.activated():
        account = owner.url.rstrip("/").rsplit("/", 1)[1]
        kept = store.path_of(api.get_object(api.find_container(account, container),
                                            "kept").file)
        left = store.path_of(store.write_whole(b"an upload whose row never committed"))
        try:
            found = run_checks(stuck_after=300)["object store"]
            assert f"object store file {left} is held by no object (an upload cut short)" \
                in found
            assert not [problem for problem in found if kept in problem]
        finally:
            os.unlink(left)
        assert not [problem for problem in run_checks(stuck_after=300)["object store"]
                    if left in problem]


def test_the_sweep_removes_old_unheld_files_and_keeps_every_objects(cloud, owner, container):
    """Files an hour old: the one no row names goes, the objects' stay and still read
    (in a data dir under /tmp too, which the sweep once took for its temp directory)."""
    owner.swift.put_object(container, "small", b"4 KiB or so")
    owner.swift.put_object(container, "large", b"x" * (store.CHUNK + 1))
    with cloud.cloud.runtime.activated():
        left = store.path_of(store.write_whole(b"an upload whose row never committed"))
        hour_ago = time.time() - 3600
        for directory, _, names in os.walk(store.root()):
            for name in names:
                os.utime(os.path.join(directory, name), (hour_ago, hour_ago))
        assert store.sweep(api.all_files) >= 1
        assert not os.path.exists(left)
    assert owner.swift.get_object(container, "small")[1] == b"4 KiB or so"
    assert len(owner.swift.get_object(container, "large")[1]) == store.CHUNK + 1
