"""Server-side dashboard sessions: the browser gets a random id, the token stays here."""
from __future__ import annotations

import dataclasses
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
