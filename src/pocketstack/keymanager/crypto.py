"""Payload encryption at rest, as barbican's simple_crypto plugin: each project has its own
key-encryption key (KEK), stored wrapped by the master key; payloads are encrypted with
their project's KEK. The master key is a file in the data dir (mode 0600), never in the
database, so a copy of the database alone reveals no payload.

Keys and plaintexts are never logged. Unwrapped KEKs are cached per cloud."""
from __future__ import annotations

import os
import threading

from cryptography.fernet import Fernet, InvalidToken

from pocketstack.common import config, db, exceptions, runtime
from pocketstack.keymanager.models import ProjectKey

MASTER_KEY_FILE = os.path.join("keymanager", "master.key")


class _Keys:
    """One cloud's master key and unwrapped project keys."""

    def __init__(self):
        self.lock = threading.Lock()
        self.master: Fernet | None = None
        self.projects: dict[str, Fernet] = {}


def _keys() -> _Keys:
    return runtime.current().slot(__name__, _Keys)


def _master(keys: _Keys) -> Fernet:
    if keys.master is None:
        path = os.path.join(config.data_dir(), MASTER_KEY_FILE)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        try:  # first start: create it whole, readable by the cloud's user only
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as f:
                f.write(Fernet.generate_key())
        with open(path, "rb") as f:
            keys.master = Fernet(f.read().strip())
    return keys.master


def _project_key(project_id: str) -> Fernet:
    keys = _keys()
    kek = keys.projects.get(project_id)
    if kek is not None:
        return kek
    with keys.lock:
        master = _master(keys)
    # Not under keys.lock: a caller may hold the database's write lock already.
    try:
        with db.transaction() as s:
            row = s.get(ProjectKey, project_id)
            if row is None:
                row = ProjectKey(project_id=project_id,
                                 wrapped_key=master.encrypt(Fernet.generate_key()))
                s.add(row)
            wrapped = row.wrapped_key
    except Exception as error:  # another request made it first (PostgreSQL, MariaDB)
        if not db.is_duplicate(error):
            raise
        with db.reader() as s:
            wrapped = s.get(ProjectKey, project_id).wrapped_key
    try:
        kek = Fernet(master.decrypt(wrapped))
    except InvalidToken:  # the master key file was replaced: its payloads are lost
        raise exceptions.PocketstackError(
            "The project's key cannot be unwrapped with the master key.") from None
    keys.projects[project_id] = kek
    return kek


def encrypt(project_id: str, plaintext: bytes) -> bytes:
    return _project_key(project_id).encrypt(plaintext)


def decrypt(project_id: str, ciphertext: bytes) -> bytes:
    try:
        return _project_key(project_id).decrypt(ciphertext)
    except InvalidToken:
        raise exceptions.PocketstackError("The secret's payload cannot be decrypted.") from None
