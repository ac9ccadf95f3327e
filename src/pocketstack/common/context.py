"""RequestContext: who is asking, for which project, under which request id.

Built by the token middleware from a validated token, passed to every api.py call,
serialized into RPC messages and used by service clients to call other services.
"""
from __future__ import annotations

import dataclasses
import random


def new_request_id() -> str:
    """``req-`` + a version 4 UUID. Request ids need to be unique, not secret: the
    process's Mersenne Twister (reseeded in a forked child) gives one for a third of the
    cost of uuid.uuid4() (os.urandom and a UUID object); every request makes one or two."""
    bits = random.getrandbits(128)
    h = f"{bits:032x}"
    return f"req-{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[bits & 3]}{h[17:20]}-{h[20:]}"


@dataclasses.dataclass
class RequestContext:
    user_id: str | None = None
    user_name: str | None = None
    user_domain_id: str | None = None
    project_id: str | None = None
    project_name: str | None = None
    project_domain_id: str | None = None
    domain_id: str | None = None  # set for domain-scoped tokens
    system_scope: str | None = None
    roles: list[str] = dataclasses.field(default_factory=list)
    request_id: str = dataclasses.field(default_factory=new_request_id)
    auth_token: str | None = None
    audit_ids: list[str] = dataclasses.field(default_factory=list)
    expires_at: str | None = None
    is_service: bool = False  # internal calls made by pocketstack itself

    @property
    def is_admin(self) -> bool:
        return "admin" in self.roles

    @property
    def is_reader(self) -> bool:
        return bool({"reader", "member", "admin"} & set(self.roles))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "RequestContext":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in names})

    def policy_creds(self) -> dict:
        """The credentials oslo.policy rules check against."""
        return {
            "user_id": self.user_id,
            "project_id": self.project_id,
            "domain_id": self.domain_id,
            "user_domain_id": self.user_domain_id,
            "project_domain_id": self.project_domain_id,
            "system_scope": self.system_scope,
            "roles": list(self.roles),
            "is_admin": self.is_admin,
        }

    @classmethod
    def admin(cls, request_id: str | None = None) -> "RequestContext":
        """An internal all-powerful context for periodic tasks and bootstrap."""
        ctx = cls(roles=["admin", "member", "reader"], is_service=True, user_name="pocketstack")
        if request_id:
            ctx.request_id = request_id
        return ctx
