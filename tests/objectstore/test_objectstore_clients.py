"""The object store through openstacksdk's object_store proxy and the `openstack`
CLI (container create/list, object create/list/save), as a user drives it."""
from __future__ import annotations

import hashlib
import os
import uuid


def test_openstacksdk_object_store(cloud, owner):
    conn = cloud.user_sdk(owner.user)
    name = f"sdk-{uuid.uuid4().hex[:8]}"
    conn.object_store.create_container(name=name)
    data = os.urandom(300_000)
    conn.object_store.upload_object(container=name, name="blob.bin", data=data,
                                    content_type="application/x-blob")
    assert conn.object_store.download_object("blob.bin", container=name) == data
    obj = conn.object_store.get_object_metadata("blob.bin", container=name)
    assert obj.etag.strip('"') == hashlib.md5(data).hexdigest()
    assert obj.content_length == len(data) or int(obj.content_length) == len(data)
    assert [o.name for o in conn.object_store.objects(name)] == ["blob.bin"]
    container = conn.object_store.get_container_metadata(name)
    assert int(container.object_count) == 1 and int(container.bytes_used) == len(data)
    info = conn.object_store.get_info()
    assert info.swift["max_file_size"] > 0 and "tempurl" in info.tempurl or info.tempurl
    conn.object_store.delete_object("blob.bin", container=name)
    conn.object_store.delete_container(name)
    assert name not in [c.name for c in conn.object_store.containers()]


def test_openstack_cli_container_and_object_flow(cloud, owner, tmp_path):
    user = owner.user
    name = f"cli-{uuid.uuid4().hex[:8]}"
    created = cloud.cli("container", "create", name, "-f", "json", user=user)
    assert created[0]["container"] == name
    listed = cloud.cli("container", "list", "-f", "json", user=user)
    assert [c["Name"] for c in listed] == [name]
    source = tmp_path / "notes.txt"
    source.write_bytes(b"notes from the cli\n" * 1000)
    cwd = os.getcwd()
    os.chdir(tmp_path)  # `object create` names the object after the path given
    try:
        uploaded = cloud.cli("object", "create", name, "notes.txt", "-f", "json", user=user)
    finally:
        os.chdir(cwd)
    assert uploaded[0]["object"] == "notes.txt"
    assert uploaded[0]["etag"] == hashlib.md5(source.read_bytes()).hexdigest()
    objects = cloud.cli("object", "list", name, "-f", "json", user=user)
    assert [o["Name"] for o in objects] == ["notes.txt"]
    target = tmp_path / "saved.txt"
    cloud.cli("object", "save", name, "notes.txt", "--file", str(target), user=user)
    assert target.read_bytes() == source.read_bytes()


def test_swift_command_upload_list_download(cloud, owner, tmp_path):
    import subprocess
    import sys

    user = owner.user
    env = dict(os.environ, OS_AUTH_URL=cloud.auth_url, OS_USERNAME=user["name"],
               OS_PASSWORD=user["password"], OS_PROJECT_ID=user["project_id"],
               OS_USER_DOMAIN_ID="default", OS_IDENTITY_API_VERSION="3")
    exe = os.path.join(os.path.dirname(sys.executable), "swift")

    def swift(*args):
        proc = subprocess.run([exe, *args], env=env, capture_output=True, text=True,
                              timeout=120, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    (tmp_path / "hello.txt").write_text("hello from swift\n")
    swift("upload", "cmd", "hello.txt")
    assert swift("list", "cmd").split() == ["hello.txt"]
    swift("download", "cmd", "hello.txt", "-o", "copy.txt")
    assert (tmp_path / "copy.txt").read_text() == "hello from swift\n"
    assert "Objects: 1" in swift("stat", "cmd")
