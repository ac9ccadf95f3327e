"""Server-side dashboard sessions: the browser gets a random id, the token stays here."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import secrets
import threading
import time

COOKIE = "pocketstack_dashboard"
LOGIN_CSRF_COOKIE = "pocketstack_login_csrf"


@dataclasses.dataclass
class Session:
    token: str
    user: str
    project: str
    project_id: str
    catalog: list
    expires: float  # time.time() the token expires at
    projects: list = dataclasses.field(default_factory=list)  # [{"id", "name"}] to switch to
    unscoped: str = ""  # the login's unscoped token: the project switcher rescopes it
    csrf: str = dataclasses.field(default_factory=lambda: secrets.token_urlsafe(32))
    roles: list = dataclasses.field(default_factory=list)  # role names: the admin menu shows

    def endpoint(self, service_type: str) -> str | None:
        for entry in self.catalog:
            if entry.get("type") == service_type:
                for ep in entry.get("endpoints", []):
                    if ep.get("interface") == "public":
                        return ep["url"].rstrip("/")
        return None


class SessionStore:
    """In memory, per cloud: a restart logs everyone out, which is what a lab wants."""

    def __init__(self):
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}

    def create(self, session: Session) -> str:
        sid = secrets.token_urlsafe(32)
        with self._lock:
            now = time.time()
            self._sessions = {k: v for k, v in self._sessions.items() if v.expires > now}
            self._sessions[sid] = session
        return sid

    def get(self, sid: str | None) -> Session | None:
        if not sid:
            return None
        with self._lock:
            session = self._sessions.get(sid)
            if session is not None and session.expires <= time.time():
                del self._sessions[sid]
                return None
            return session

    def replace(self, sid: str, session: Session) -> None:
        with self._lock:
            self._sessions[sid] = session

    def pop(self, sid: str | None) -> Session | None:
        with self._lock:
            return self._sessions.pop(sid, None) if sid else None


class SharedSessionStore(SessionStore):
    """For `pocketstack up --workers N` (workers.py): the API processes share one listening
    socket, so a browser's next request may reach another process. Sessions are files in
    ``directory`` (0600, in the 0700 data dir), named by a hash of the id so that a listing
    gives no id away; every process reads them."""

    def __init__(self, directory: str):
        super().__init__()
        self.directory = directory
        os.makedirs(directory, mode=0o700, exist_ok=True)
        self._pruned = 0.0

    def _path(self, sid: str) -> str:
        return os.path.join(self.directory, hashlib.sha256(sid.encode()).hexdigest())

    def _write(self, sid: str, session: Session) -> None:
        path = self._path(sid)
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(dataclasses.asdict(session), f)
        os.replace(tmp, path)

    def _read(self, sid: str) -> Session | None:
        try:
            with open(self._path(sid)) as f:
                return Session(**json.load(f))
        except (OSError, ValueError, TypeError):
            return None

    def create(self, session: Session) -> str:
        sid = secrets.token_urlsafe(32)
        self._write(sid, session)
        self._prune()
        return sid

    def get(self, sid: str | None) -> Session | None:
        if not sid:
            return None
        session = self._read(sid)
        if session is not None and session.expires <= time.time():
            self._remove(sid)
            return None
        return session

    def replace(self, sid: str, session: Session) -> None:
        self._write(sid, session)

    def pop(self, sid: str | None) -> Session | None:
        if not sid:
            return None
        session = self._read(sid)
        self._remove(sid)
        return session

    def _remove(self, sid: str) -> None:
        try:
            os.unlink(self._path(sid))
        except FileNotFoundError:
            pass

    def _prune(self) -> None:
        """Remove expired sessions' files, at most once a minute."""
        now = time.time()
        if now - self._pruned < 60:
            return
        self._pruned = now
        for name in os.listdir(self.directory):
            path = os.path.join(self.directory, name)
            try:
                with open(path) as f:
                    expired = json.load(f).get("expires", 0) <= now
            except (OSError, ValueError, AttributeError):
                continue  # another process's file half-way through os.replace, or gone
            if expired:
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
