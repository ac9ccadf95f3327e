"""The rbd store's thin provisioning at its write level (no Ceph needed): which runs of an
upload's buffer are written, at the 64 KiB granularity zeros are skipped at."""
from __future__ import annotations

import pytest

from pocketstack.common import config
from pocketstack.image import rbd_store
from pocketstack.image.rbd_store import SPARSE_BLOCK as B, data_extents


def test_zero_blocks_are_skipped_and_data_runs_kept_whole():
    data = bytearray(10 * B + 100)
    data[B + 5] = 1                   # one byte in block 1
    data[3 * B:5 * B] = b"\1" * 2 * B  # blocks 3-4
    data[5 * B] = 2                   # block 5 joins the run
    data[-1] = 3                      # the short last block
    assert data_extents(bytes(data)) == [(B, 2 * B), (3 * B, 6 * B), (10 * B, 10 * B + 100)]
    assert data_extents(bytes(4 * B)) == []
    assert data_extents(b"") == []
    assert data_extents(b"\1" * (3 * B)) == [(0, 3 * B)]


def test_blocks_are_the_images_not_the_buffers():
    """A buffer starting mid-block: its first block ends at the image's block boundary,
    so zeros before data never reach into the object before it."""
    data = bytes(B) + b"\1"  # starts 100 bytes before a block boundary
    assert data_extents(data, offset=B - 100) == [(100, B + 1)]
    assert data_extents(bytes(100) + b"\1", offset=B - 100) == [(100, 101)]
    assert data_extents(b"\1" + bytes(B), offset=B - 100) == [(0, 100)]


@pytest.fixture
def thick(cloud):
    config.CONF.set_override("rbd_thin_provisioning", False, group="image")
    yield
    config.CONF.clear_override("rbd_thin_provisioning", group="image")


def test_thin_provisioning_off_writes_everything(thick):
    assert data_extents(bytes(3 * B)) == [(0, 3 * B)]


class FakeImage:
    """What _write_extents asks of an RBD image: aio_write, completing at once."""

    def __init__(self):
        self.writes = []

    def aio_write(self, data, offset, callback):
        self.writes.append((offset, bytes(data)))

        class Done:
            def get_return_value(self):
                return 0
        callback(Done())


def test_a_buffer_writes_only_its_data_at_its_offset(cloud):
    import concurrent.futures

    image = FakeImage()
    data = bytes(2 * B) + b"data" + bytes(B)
    done = concurrent.futures.Future()
    rbd_store._write_extents(image, data, 7 * B, done)
    assert done.result(timeout=1) is None
    assert image.writes == [(9 * B, data[2 * B:3 * B])]
    image, done = FakeImage(), concurrent.futures.Future()
    rbd_store._write_extents(image, bytes(3 * B), 0, done)
    assert done.result(timeout=1) is None and image.writes == []
