"""Each cloud's id (<data dir>/cloud-id): made at its first start and kept, one of its own
per cloud; what the cloud names after it on the machine (its nftables tables, its libvirt
secret) follows it unless an operator named them in the config."""
from __future__ import annotations

import os
import shutil
import tempfile
import uuid

from helpers.cloud import ADMIN_PASSWORD, TEST_OVERRIDES, own_cloud


def _names(cloud) -> tuple[str, str, str]:
    from pocketstack.common import ceph, config
    from pocketstack.network.agent import firewall

    with cloud.runtime.activated():
        return config.cloud_id(), firewall.table_name(), ceph.secret_uuid()


def test_each_cloud_names_its_machine_objects_after_an_id_it_keeps():
    from pocketstack.cloud import Cloud

    data_dirs = [tempfile.mkdtemp(prefix="pocketstack-ids-") for _ in range(2)]
    try:
        seen = []
        for data_dir in data_dirs + data_dirs[:1]:  # the first one started twice
            with Cloud(data_dir, admin_password=ADMIN_PASSWORD,
                       overrides=TEST_OVERRIDES) as cloud:
                seen.append(_names(cloud))
        first, second, again = seen
        assert again == first  # a restart keeps its names
        assert all(a != b for a, b in zip(first, second))  # another cloud has others
        with open(os.path.join(data_dirs[0], "cloud-id")) as f:
            assert f.read().strip() == first[0]
    finally:
        for data_dir in data_dirs:
            shutil.rmtree(data_dir, ignore_errors=True)


def test_names_an_operator_set_are_kept():
    chosen = str(uuid.uuid4())
    with own_cloud("ids-set", **{"ceph.secret_uuid": chosen,
                                 "network.nft_table": "pocketstack"}) as handle:
        _, table, secret = _names(handle.cloud)
    assert (table, secret) == ("pocketstack", chosen)
