"""Keystone's ``immutable`` resource option on projects, and the service users it guards.

A project with ``options: {"immutable": true}`` answers keystone's 403 to any update or
delete until an admin sets the option to false (the only change it accepts), as keystone's
``resource_options.check_immutable_update``. Bootstrap makes the ``service`` project so.

Keystone has no immutable option for users nor for role assignments, so the users the
services act as are guarded through their project: a user holding the ``service`` role on
an immutable project is a service user, and cannot be deleted, disabled or renamed, nor
lose its ``admin`` or ``service`` role there (each would break every service's login),
until that project's option is set to false. Its password can change: rotating it (and
the config with it) is the operator's job. A compute host's own user (nova-compute-<host>)
holds the service role there too but is not guarded: cutting off a host is disabling it.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import exceptions
from pocketstack.identity.models import Assignment, Project, Role, User

OPTION = "immutable"
GUARDED_ROLES = ("admin", "service")  # the service users' roles on the service project


def options(project) -> dict:
    """The project's resource options, as keystone shows them (``{}`` when none is set)."""
    return dict((getattr(project, "extra", None) or {}).get("options") or {})


def is_immutable(project) -> bool:
    return options(project).get(OPTION) is True


def set_options(project, ref: dict) -> None:
    """Store ``ref["options"]``'s immutable (None removes it, as keystone)."""
    wanted = ref.get("options")
    if not isinstance(wanted, dict) or OPTION not in wanted:
        return
    if wanted[OPTION] not in (True, False, None):
        raise exceptions.ValidationError("Invalid input for field 'options': the immutable "
                                         "option must be a boolean or null.")
    current = options(project)
    if wanted[OPTION] is None:
        current.pop(OPTION, None)
    else:
        current[OPTION] = wanted[OPTION]
    project.extra = dict(project.extra or {}, options=current)


def check_update(project, ref: dict) -> None:
    """Only ``{"options": {"immutable": false or null}}`` may change an immutable project."""
    if not is_immutable(project):
        return
    unlock = set(ref) == {"options"} and isinstance(ref["options"], dict) and \
        OPTION in ref["options"] and ref["options"][OPTION] in (False, None)
    if not unlock:
        raise exceptions.Forbidden(f"Unable to update immutable project resource: "
                                   f"`{project.id}. Set resource option \"immutable\" to "
                                   f"false first.")


def check_delete(projects) -> None:
    for project in projects:
        if is_immutable(project):
            raise exceptions.Forbidden(f"Unable to delete immutable project resource: "
                                       f"`{project.id}. Set resource option \"immutable\" "
                                       f"to false first.")


def service_project_of(s, user_id: str):
    """The immutable project on which the user holds the ``service`` role, or None. Not
    for a compute host's own user (clients/host_users.py): no service logs in with it,
    and disabling or deleting it is how an operator cuts off a compromised host."""
    from pocketstack.clients import host_users

    if (s.scalar(sa.select(User.name).where(User.id == user_id)) or "").startswith(
            host_users.PREFIX):
        return None
    rows = s.scalars(sa.select(Project).join(Assignment, Assignment.target_id == Project.id)
                     .join(Role, Role.id == Assignment.role_id)
                     .where(Assignment.type == "UserProject", Assignment.actor_id == user_id,
                            Role.name == "service"))
    return next((p for p in rows if is_immutable(p)), None)


def guard_service_user(s, user, what: str) -> None:
    """403 when ``user`` is a service user (``what``: "delete", "disable", ...)."""
    project = service_project_of(s, user.id)
    if project is not None:
        raise exceptions.Forbidden(
            f"Cannot {what} user {user.name}: the cloud's services act as it (it has the "
            f"service role on the immutable project {project.name}). Set that project's "
            f"resource option \"immutable\" to false first.")


def guard_revoke(s, user_id: str, project_id: str, role_id: str) -> None:
    """403 for revoking a service user's admin or service role on its service project."""
    project = s.get(Project, project_id)
    role = s.get(Role, role_id)
    if project is None or role is None or role.name not in GUARDED_ROLES \
            or not is_immutable(project):
        return
    project_of_user = service_project_of(s, user_id)
    if project_of_user is not None and project_of_user.id == project_id:
        raise exceptions.Forbidden(
            f"Cannot revoke the {role.name} role on {project.name} from a service user: "
            f"the cloud's services log in with it. Set the project's resource option "
            f"\"immutable\" to false first.")
