"""Users, groups and group membership (Keystone's "identity" backend), and passwords.

Anything that changes what a user's tokens stand for — disabling or deleting the user, a
new password, leaving a group — records a revocation event in the same transaction.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.identity import base, immutable, passwords, tokens
from pocketstack.identity.models import (Assignment, Credential, Domain, Group,
                                         GroupMembership, Project, User)

USER_COLUMNS = {"id", "name", "domain_id", "enabled", "password", "default_project_id",
                "description", "options", "federated", "password_expires_at"}
GROUP_COLUMNS = {"id", "name", "domain_id", "description"}


def _require_domain(s, domain_id: str) -> None:
    if s.get(Domain, domain_id) is None:
        raise exceptions.NotFound(f"Could not find domain: {domain_id}.")


def _check_default_project(s, project_id: str | None) -> None:
    if project_id and s.get(Project, project_id) is None:
        raise exceptions.ValidationError(f"Could not find project: {project_id}.")


# --- users ----------------------------------------------------------------------------

def list_users(*, name_filters: dict, domain_id=None, enabled=None) -> list[User]:
    with db.reader() as s:
        q = base.apply_name_filters(sa.select(User), User.name, name_filters)
        if domain_id is not None:
            q = q.where(User.domain_id == domain_id)
        if enabled is not None:
            q = q.where(User.enabled.is_(enabled))
        return list(s.scalars(q.order_by(User.name)))


def get_user(user_id: str) -> User:
    with db.reader() as s:
        return base.get_or_404(s, User, user_id, "user")


def create_user(ref: dict, default_domain_id: str) -> User:
    domain_id = ref.get("domain_id") or default_domain_id
    password = ref.get("password")
    user = User(id=base.new_id(), name=ref["name"], domain_id=domain_id,
                enabled=ref.get("enabled", True),
                password_hash=passwords.hash_password(password) if password else None,
                default_project_id=ref.get("default_project_id"),
                description=ref.get("description") or "",
                extra=base.extra_attributes(ref, USER_COLUMNS))
    with base.writing("user", ref["name"], domain_id) as s:
        _require_domain(s, domain_id)
        _check_default_project(s, user.default_project_id)
        if base.name_taken(s, User, ref["name"], domain_id):
            raise base.duplicate_name("user", ref["name"], domain_id)
        s.add(user)
    return user


def update_user(user_id: str, ref: dict) -> User:
    with base.writing("user", ref.get("name")) as s:
        user = base.get_or_404(s, User, user_id, "user")
        if "domain_id" in ref and ref["domain_id"] != user.domain_id:
            raise exceptions.ValidationError("Update of `domain_id` is not allowed.")
        # (A new password stays allowed: rotating it, with the config, is the operator's.)
        for what, changes in (("disable", ref.get("enabled") is False),
                              ("rename", ref.get("name", user.name) != user.name)):
            if changes:
                immutable.guard_service_user(s, user, what)
        if "name" in ref and ref["name"] != user.name and base.name_taken(
                s, User, ref["name"], user.domain_id, exclude=user.id):
            raise base.duplicate_name("user", ref["name"], user.domain_id)
        if "default_project_id" in ref:
            _check_default_project(s, ref["default_project_id"])
            user.default_project_id = ref["default_project_id"]
        revoke = False
        if "enabled" in ref:
            revoke = user.enabled and not ref["enabled"]
            user.enabled = ref["enabled"]
        if "password" in ref:  # an administrator's reset
            password = ref["password"]
            user.password_hash = passwords.hash_password(password) if password else None
            revoke = True
        if "name" in ref:
            user.name = ref["name"]
        if "description" in ref:
            user.description = ref["description"] or ""
        extra = base.extra_attributes(ref, USER_COLUMNS)
        if extra:
            user.extra = dict(user.extra or {}, **extra)
        if revoke:
            tokens.revoke(s, user_id=user_id)
    return user


def delete_user(user_id: str) -> None:
    with db.transaction() as s:
        user = base.get_or_404(s, User, user_id, "user")
        immutable.guard_service_user(s, user, "delete")
        s.execute(sa.delete(Assignment).where(Assignment.actor_id == user_id))
        s.execute(sa.delete(GroupMembership).where(GroupMembership.user_id == user_id))
        s.execute(sa.delete(Credential).where(Credential.user_id == user_id))
        s.delete(user)
        tokens.revoke(s, user_id=user_id)


def change_password(user_id: str, original: str, new: str) -> None:
    """The user's own change (POST /v3/users/{id}/password): proves the old password."""
    with db.transaction() as s:
        user = s.get(User, user_id) if isinstance(user_id, str) else None
        if user is None:
            passwords.dummy_check(original)
            raise exceptions.NotFound(f"Could not find user: {user_id}.")
        if not user.enabled or not passwords.check_password(original, user.password_hash):
            raise exceptions.Unauthorized("Error when changing user password: The request you "
                                          "have made requires authentication.")
        user.password_hash = passwords.hash_password(new)
        tokens.revoke(s, user_id=user_id)


# --- groups ---------------------------------------------------------------------------

def list_groups(*, name_filters: dict, domain_id=None) -> list[Group]:
    with db.reader() as s:
        q = base.apply_name_filters(sa.select(Group), Group.name, name_filters)
        if domain_id is not None:
            q = q.where(Group.domain_id == domain_id)
        return list(s.scalars(q.order_by(Group.name)))


def get_group(group_id: str) -> Group:
    with db.reader() as s:
        return base.get_or_404(s, Group, group_id, "group")


def create_group(ref: dict, default_domain_id: str) -> Group:
    domain_id = ref.get("domain_id") or default_domain_id
    group = Group(id=base.new_id(), name=ref["name"], domain_id=domain_id,
                  description=ref.get("description") or "",
                  extra=base.extra_attributes(ref, GROUP_COLUMNS))
    with base.writing("group", ref["name"], domain_id) as s:
        _require_domain(s, domain_id)
        if base.name_taken(s, Group, ref["name"], domain_id):
            raise base.duplicate_name("group", ref["name"], domain_id)
        s.add(group)
    return group


def update_group(group_id: str, ref: dict) -> Group:
    with base.writing("group", ref.get("name")) as s:
        group = base.get_or_404(s, Group, group_id, "group")
        if "domain_id" in ref and ref["domain_id"] != group.domain_id:
            raise exceptions.ValidationError("Update of `domain_id` is not allowed.")
        if "name" in ref and ref["name"] != group.name and base.name_taken(
                s, Group, ref["name"], group.domain_id, exclude=group.id):
            raise base.duplicate_name("group", ref["name"], group.domain_id)
        if "name" in ref:
            group.name = ref["name"]
        if "description" in ref:
            group.description = ref["description"] or ""
        extra = base.extra_attributes(ref, GROUP_COLUMNS)
        if extra:
            group.extra = dict(group.extra or {}, **extra)
    return group


def delete_group(group_id: str) -> None:
    with db.transaction() as s:
        group = base.get_or_404(s, Group, group_id, "group")
        members = list(s.scalars(sa.select(GroupMembership.user_id)
                                 .where(GroupMembership.group_id == group_id)))
        had_roles = s.scalar(sa.select(Assignment.role_id).where(
            Assignment.actor_id == group_id).limit(1)) is not None
        s.execute(sa.delete(Assignment).where(Assignment.actor_id == group_id))
        s.execute(sa.delete(GroupMembership).where(GroupMembership.group_id == group_id))
        s.delete(group)
        if had_roles:
            for user_id in members:
                tokens.revoke(s, user_id=user_id)


def group_user_ids(s, group_id: str) -> list[str]:
    return list(s.scalars(sa.select(GroupMembership.user_id)
                          .where(GroupMembership.group_id == group_id)))


def list_group_users(group_id: str, *, name_filters: dict, enabled=None) -> list[User]:
    with db.reader() as s:
        base.get_or_404(s, Group, group_id, "group")
        q = (sa.select(User).join(GroupMembership, GroupMembership.user_id == User.id)
             .where(GroupMembership.group_id == group_id))
        q = base.apply_name_filters(q, User.name, name_filters)
        if enabled is not None:
            q = q.where(User.enabled.is_(enabled))
        return list(s.scalars(q.order_by(User.name)))


def list_user_groups(user_id: str, *, name_filters: dict) -> list[Group]:
    with db.reader() as s:
        base.get_or_404(s, User, user_id, "user")
        q = (sa.select(Group).join(GroupMembership, GroupMembership.group_id == Group.id)
             .where(GroupMembership.user_id == user_id))
        q = base.apply_name_filters(q, Group.name, name_filters)
        return list(s.scalars(q.order_by(Group.name)))


def _group_and_user(s, group_id: str, user_id: str) -> tuple[Group, User]:
    return (base.get_or_404(s, Group, group_id, "group"),
            base.get_or_404(s, User, user_id, "user"))


def add_user_to_group(group_id: str, user_id: str) -> None:
    with db.transaction() as s:
        _group_and_user(s, group_id, user_id)
        if s.get(GroupMembership, (user_id, group_id)) is None:
            s.add(GroupMembership(user_id=user_id, group_id=group_id))


def check_user_in_group(group_id: str, user_id: str) -> None:
    with db.reader() as s:
        _group_and_user(s, group_id, user_id)
        if s.get(GroupMembership, (user_id, group_id)) is None:
            raise exceptions.NotFound(f"User '{user_id}' not found in group '{group_id}'")


def remove_user_from_group(group_id: str, user_id: str) -> None:
    with db.transaction() as s:
        _group_and_user(s, group_id, user_id)
        membership = s.get(GroupMembership, (user_id, group_id))
        if membership is None:
            raise exceptions.NotFound(f"User '{user_id}' not found in group '{group_id}'")
        s.delete(membership)
        # The user's tokens may carry roles granted to the group.
        tokens.revoke(s, user_id=user_id)
