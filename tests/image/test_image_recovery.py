"""What a crash leaves behind is repaired when the image service starts (service.recover)."""
import os
import subprocess
import uuid

from image_helpers import store_dir


def test_start_up_requeues_cut_uploads_and_removes_orphans(glance):
    from pocketstack.common import config, db
    from pocketstack.image import service
    from pocketstack.image.models import Image

    cut = glance.create()
    staging = glance.create()
    busy = glance.create()  # another live process is uploading this one
    active = glance.create_active(b"keep me")
    with db.transaction() as s:  # as a crash mid-upload and mid-stage leaves them
        for image_id, status in ((cut["id"], "saving"), (staging["id"], "uploading"),
                                 (busy["id"], "saving")):
            s.get(Image, image_id).status = status
    dead = subprocess.Popen(["true"])
    dead.wait()
    host = config.CONF.host
    tmp = os.path.join(store_dir(), "tmp", f"{cut['id']}.{host}-{dead.pid}.dead")
    live = os.path.join(store_dir(), "tmp", f"{busy['id']}.{host}-1.live")
    orphan = os.path.join(store_dir(), str(uuid.uuid4()))
    stale_stage = os.path.join(store_dir(), "staging", active["id"])
    for path in (tmp, live, orphan, stale_stage):
        with open(path, "wb") as f:
            f.write(b"left over")
    try:
        service.recover()

        assert glance.show(cut["id"])["status"] == "queued"
        assert glance.show(staging["id"])["status"] == "queued"
        assert glance.show(busy["id"])["status"] == "saving"
        assert os.path.exists(live)
        assert not any(os.path.exists(p) for p in (tmp, orphan, stale_stage))
        assert glance.get(f"/v2/images/{active['id']}/file").content == b"keep me"
    finally:
        os.unlink(live)
        with db.transaction() as s:
            s.get(Image, busy["id"]).status = "queued"
