"""Identity policy defaults: Keystone's rule names and, in substance, its 2024 defaults.

* ``admin`` (a token carrying the admin role) may do everything, as in Keystone.
* A domain-scoped ``reader`` (members and managers imply it) reads the users, groups,
  projects and grants of that domain; a domain-scoped ``manager`` also manages them and
  may grant the manager/member/reader roles there.
* Every user reads itself, its own domain and projects, changes its own password, and
  manages its own application credentials.

Targets are flattened as Keystone does ("target.project.domain_id"). Keystone's
``token.domain.id`` / ``token.project.domain.id`` credentials are our ``domain_id`` /
``project_domain_id``.
"""
from oslo_policy import policy

from pocketstack.identity import policies_ext
from pocketstack.identity.policy_checks import (  # noqa: F401 - re-exported names
    ADMIN, ADMIN_OR_SYSTEM_READER, MANAGED_ROLE, OWNER, _manager_in,
    _reader_in, _rule)

_GRANT_READER = " or ".join(
    f"(role:reader and domain_id:%({actor})s and domain_id:%({target})s)"
    for actor in ("target.user.domain_id", "target.group.domain_id")
    for target in ("target.project.domain_id", "target.domain.id"))
_GRANT_MANAGER = " or ".join(
    f"(role:manager and domain_id:%({actor})s and domain_id:%({target})s and {MANAGED_ROLE})"
    for actor in ("target.user.domain_id", "target.group.domain_id")
    for target in ("target.project.domain_id", "target.domain.id"))

_P = "/v3/projects/{project_id}"
_GRANT_PATHS = ["/v3/projects/{project_id}/users/{user_id}/roles/{role_id}",
                "/v3/projects/{project_id}/groups/{group_id}/roles/{role_id}",
                "/v3/domains/{domain_id}/users/{user_id}/roles/{role_id}",
                "/v3/domains/{domain_id}/groups/{group_id}/roles/{role_id}"]


def _trust_rules() -> list:
    """Keystone's trust defaults: the trustor creates and deletes, trustor and trustee
    read, admins (and system readers) read everything."""
    trustor = "user_id:%(target.trust.trustor_user_id)s"
    trustee = "user_id:%(target.trust.trustee_user_id)s"
    trusts = "/v3/OS-TRUST/trusts"
    return [
        _rule("create_trust", trustor, "Create a trust (as its trustor).", [("POST", trusts)]),
        _rule("list_trusts", ADMIN_OR_SYSTEM_READER, "List every trust.", [("GET", trusts)]),
        _rule("list_trusts_for_trustor", f"{ADMIN_OR_SYSTEM_READER} or {trustor}",
              "List the trusts of a trustor.", [("GET", trusts + "?trustor_user_id={id}")]),
        _rule("list_trusts_for_trustee", f"{ADMIN_OR_SYSTEM_READER} or {trustee}",
              "List the trusts of a trustee.", [("GET", trusts + "?trustee_user_id={id}")]),
        _rule("get_trust", f"{ADMIN_OR_SYSTEM_READER} or {trustor} or {trustee}",
              "Show a trust.", [("GET", trusts + "/{trust_id}")]),
        _rule("list_roles_for_trust", f"{ADMIN_OR_SYSTEM_READER} or {trustor} or {trustee}",
              "List a trust's roles.", [("GET", trusts + "/{trust_id}/roles")]),
        _rule("get_role_for_trust", f"{ADMIN_OR_SYSTEM_READER} or {trustor} or {trustee}",
              "Show a role of a trust.", [("GET", trusts + "/{trust_id}/roles/{role_id}"),
                                          ("HEAD", trusts + "/{trust_id}/roles/{role_id}")]),
        _rule("delete_trust", f"{ADMIN} or {trustor}", "Delete a trust.",
              [("DELETE", trusts + "/{trust_id}")]),
    ]


def _credential_and_limit_rules() -> list:
    """Keystone's defaults for credentials (the owner or an admin), unified limits (read by
    everyone, written by admins) and policy blobs."""
    owner = "user_id:%(target.credential.user_id)s"
    own_limit = "project_id:%(target.limit.project_id)s"
    rules = []
    for name, check, method, path in (
            ("get_credential", f"{ADMIN_OR_SYSTEM_READER} or {owner}", "GET",
             "/v3/credentials/{credential_id}"),
            ("list_credentials", f"{ADMIN_OR_SYSTEM_READER} or {owner}", "GET",
             "/v3/credentials"),
            ("create_credential", f"{ADMIN} or {owner}", "POST", "/v3/credentials"),
            ("update_credential", f"{ADMIN} or {owner}", "PATCH",
             "/v3/credentials/{credential_id}"),
            ("delete_credential", f"{ADMIN} or {owner}", "DELETE",
             "/v3/credentials/{credential_id}"),
            ("ec2_get_credential", f"{ADMIN_OR_SYSTEM_READER} or {owner}", "GET",
             "/v3/users/{user_id}/credentials/OS-EC2/{credential_id}"),
            ("ec2_list_credentials", f"{ADMIN_OR_SYSTEM_READER} or {owner}", "GET",
             "/v3/users/{user_id}/credentials/OS-EC2"),
            ("ec2_create_credential", f"{ADMIN} or {owner}", "POST",
             "/v3/users/{user_id}/credentials/OS-EC2"),
            ("ec2_delete_credential", f"{ADMIN} or {owner}", "DELETE",
             "/v3/users/{user_id}/credentials/OS-EC2/{credential_id}"),
            ("get_registered_limit", "", "GET", "/v3/registered_limits/{id}"),
            ("list_registered_limits", "", "GET", "/v3/registered_limits"),
            ("create_registered_limits", ADMIN, "POST", "/v3/registered_limits"),
            ("update_registered_limit", ADMIN, "PATCH", "/v3/registered_limits/{id}"),
            ("delete_registered_limit", ADMIN, "DELETE", "/v3/registered_limits/{id}"),
            ("get_limit_model", "", "GET", "/v3/limits/model"),
            ("get_limit", f"{ADMIN_OR_SYSTEM_READER} or {own_limit}", "GET",
             "/v3/limits/{id}"),
            ("list_limits", "", "GET", "/v3/limits"),
            ("create_limits", ADMIN, "POST", "/v3/limits"),
            ("update_limit", ADMIN, "PATCH", "/v3/limits/{id}"),
            ("delete_limit", ADMIN, "DELETE", "/v3/limits/{id}"),
            ("get_policy", ADMIN_OR_SYSTEM_READER, "GET", "/v3/policies/{policy_id}"),
            ("list_policies", ADMIN_OR_SYSTEM_READER, "GET", "/v3/policies"),
            ("create_policy", ADMIN, "POST", "/v3/policies"),
            ("update_policy", ADMIN, "PATCH", "/v3/policies/{policy_id}"),
            ("delete_policy", ADMIN, "DELETE", "/v3/policies/{policy_id}")):
        rules.append(_rule(name, check, f"{name.replace('_', ' ').capitalize()}.",
                           [(method, path)]))
    return rules


def _system_grant_rules() -> list:
    rules = []
    for actor in ("user", "group"):
        path = f"/v3/system/{actor}s/{{{actor}_id}}/roles"
        for name, check, method, url in (
                ("check", ADMIN_OR_SYSTEM_READER, "HEAD", f"{path}/{{role_id}}"),
                ("list", ADMIN_OR_SYSTEM_READER, "GET", path),
                ("create", ADMIN, "PUT", f"{path}/{{role_id}}"),
                ("revoke", ADMIN, "DELETE", f"{path}/{{role_id}}")):
            plural = "s" if name == "list" else ""
            rules.append(_rule(f"{name}_system_grant{plural}_for_{actor}", check,
                               f"{name.capitalize()} a {actor}'s system role grant{plural}.",
                               [(method, url)]))
    return rules


def list_rules():
    return [
        policy.RuleDefault("service_role", "role:service"),
        policy.RuleDefault("domain_managed_target_role",
                           "'manager':%(target.role.name)s or 'member':%(target.role.name)s "
                           "or 'reader':%(target.role.name)s"),
        # tokens
        _rule("validate_token", f"{ADMIN} or rule:service_role or "
              "user_id:%(target.token.user_id)s", "Validate a token.",
              [("GET", "/v3/auth/tokens"), ("HEAD", "/v3/auth/tokens")]),
        _rule("revoke_token", f"{ADMIN} or user_id:%(target.token.user_id)s",
              "Revoke a token.", [("DELETE", "/v3/auth/tokens")]),
        # domains
        _rule("get_domain", f"{ADMIN_OR_SYSTEM_READER} or domain_id:%(target.domain.id)s or "
              "project_domain_id:%(target.domain.id)s", "Show a domain.",
              [("GET", "/v3/domains/{domain_id}")]),
        _rule("list_domains", ADMIN_OR_SYSTEM_READER, "List domains.",
              [("GET", "/v3/domains")]),
        _rule("create_domain", ADMIN, "Create a domain.", [("POST", "/v3/domains")]),
        _rule("update_domain", ADMIN, "Update a domain.",
              [("PATCH", "/v3/domains/{domain_id}")]),
        _rule("delete_domain", ADMIN, "Delete a domain.",
              [("DELETE", "/v3/domains/{domain_id}")]),
        # projects
        _rule("get_project", f"{ADMIN_OR_SYSTEM_READER} or "
              f"{_reader_in('target.project.domain_id')} or project_id:%(target.project.id)s",
              "Show a project.", [("GET", _P)]),
        _rule("list_projects", f"{ADMIN_OR_SYSTEM_READER} or {_reader_in('target.domain_id')}",
              "List projects.", [("GET", "/v3/projects")]),
        _rule("list_user_projects", f"{ADMIN_OR_SYSTEM_READER} or "
              f"{_reader_in('target.user.domain_id')} or {OWNER}",
              "List the projects a user has roles on.",
              [("GET", "/v3/users/{user_id}/projects")]),
        _rule("create_project", f"{ADMIN} or {_manager_in('target.project.domain_id')}",
              "Create a project.", [("POST", "/v3/projects")]),
        _rule("update_project", f"{ADMIN} or {_manager_in('target.project.domain_id')}",
              "Update a project.", [("PATCH", _P)]),
        _rule("delete_project", f"{ADMIN} or {_manager_in('target.project.domain_id')}",
              "Delete a project.", [("DELETE", _P)]),
        _rule("list_project_tags", "rule:identity:get_project", "List a project's tags.",
              [("GET", _P + "/tags")]),
        _rule("get_project_tag", "rule:identity:get_project", "Check a project's tag.",
              [("GET", _P + "/tags/{value}")]),
        _rule("update_project_tags", "rule:identity:update_project", "Replace the tags.",
              [("PUT", _P + "/tags")]),
        _rule("create_project_tag", "rule:identity:update_project", "Add a tag.",
              [("PUT", _P + "/tags/{value}")]),
        _rule("delete_project_tags", "rule:identity:update_project", "Remove all tags.",
              [("DELETE", _P + "/tags")]),
        _rule("delete_project_tag", "rule:identity:update_project", "Remove a tag.",
              [("DELETE", _P + "/tags/{value}")]),
        # users
        _rule("get_user", f"{ADMIN_OR_SYSTEM_READER} or {_reader_in('target.user.domain_id')} "
              f"or {OWNER}", "Show a user.", [("GET", "/v3/users/{user_id}")]),
        _rule("list_users", f"{ADMIN_OR_SYSTEM_READER} or {_reader_in('target.domain_id')}",
              "List users.", [("GET", "/v3/users")]),
        _rule("create_user", f"{ADMIN} or {_manager_in('target.user.domain_id')}",
              "Create a user.", [("POST", "/v3/users")]),
        _rule("update_user", f"{ADMIN} or {_manager_in('target.user.domain_id')}",
              "Update a user, including an administrator's password reset.",
              [("PATCH", "/v3/users/{user_id}")]),
        _rule("delete_user", f"{ADMIN} or {_manager_in('target.user.domain_id')}",
              "Delete a user.", [("DELETE", "/v3/users/{user_id}")]),
        # groups
        _rule("get_group", f"{ADMIN_OR_SYSTEM_READER} or "
              f"{_reader_in('target.group.domain_id')}", "Show a group.",
              [("GET", "/v3/groups/{group_id}")]),
        _rule("list_groups", f"{ADMIN_OR_SYSTEM_READER} or {_reader_in('target.domain_id')}",
              "List groups.", [("GET", "/v3/groups")]),
        _rule("list_groups_for_user", f"{ADMIN_OR_SYSTEM_READER} or "
              f"{_reader_in('target.user.domain_id')} or {OWNER}",
              "List the groups a user is in.", [("GET", "/v3/users/{user_id}/groups")]),
        _rule("create_group", f"{ADMIN} or {_manager_in('target.group.domain_id')}",
              "Create a group.", [("POST", "/v3/groups")]),
        _rule("update_group", f"{ADMIN} or {_manager_in('target.group.domain_id')}",
              "Update a group.", [("PATCH", "/v3/groups/{group_id}")]),
        _rule("delete_group", f"{ADMIN} or {_manager_in('target.group.domain_id')}",
              "Delete a group.", [("DELETE", "/v3/groups/{group_id}")]),
        _rule("list_users_in_group", f"{ADMIN_OR_SYSTEM_READER} or "
              f"{_reader_in('target.group.domain_id')}", "List a group's users.",
              [("GET", "/v3/groups/{group_id}/users")]),
        _rule("check_user_in_group", f"{ADMIN_OR_SYSTEM_READER} or (role:reader and "
              "domain_id:%(target.group.domain_id)s and domain_id:%(target.user.domain_id)s)",
              "Check membership.", [("HEAD", "/v3/groups/{group_id}/users/{user_id}")]),
        _rule("add_user_to_group", f"{ADMIN} or "
              f"{_manager_in('target.group.domain_id', 'target.user.domain_id')}",
              "Add a user to a group.", [("PUT", "/v3/groups/{group_id}/users/{user_id}")]),
        _rule("remove_user_from_group", f"{ADMIN} or "
              f"{_manager_in('target.group.domain_id', 'target.user.domain_id')}",
              "Remove a user from a group.",
              [("DELETE", "/v3/groups/{group_id}/users/{user_id}")]),
        # roles and implied roles
        _rule("get_role", f"{ADMIN_OR_SYSTEM_READER} or (role:manager and {MANAGED_ROLE})",
              "Show a role.", [("GET", "/v3/roles/{role_id}")]),
        _rule("list_roles", f"{ADMIN_OR_SYSTEM_READER} or "
              "(role:manager and not domain_id:None)", "List roles.", [("GET", "/v3/roles")]),
        _rule("create_role", ADMIN, "Create a role.", [("POST", "/v3/roles")]),
        _rule("update_role", ADMIN, "Update a role.", [("PATCH", "/v3/roles/{role_id}")]),
        _rule("delete_role", ADMIN, "Delete a role.", [("DELETE", "/v3/roles/{role_id}")]),
        _rule("get_domain_role", ADMIN_OR_SYSTEM_READER, "Show a domain-specific role.",
              [("GET", "/v3/roles/{role_id}")]),
        _rule("list_domain_roles", ADMIN_OR_SYSTEM_READER, "List a domain's roles.",
              [("GET", "/v3/roles?domain_id={domain_id}")]),
        _rule("create_domain_role", ADMIN, "Create a domain-specific role.",
              [("POST", "/v3/roles")]),
        _rule("update_domain_role", ADMIN, "Update a domain-specific role.",
              [("PATCH", "/v3/roles/{role_id}")]),
        _rule("delete_domain_role", ADMIN, "Delete a domain-specific role.",
              [("DELETE", "/v3/roles/{role_id}")]),
        _rule("get_implied_role", ADMIN_OR_SYSTEM_READER, "Show a role inference rule.",
              [("GET", "/v3/roles/{prior_role_id}/implies/{implied_role_id}")]),
        _rule("check_implied_role", ADMIN_OR_SYSTEM_READER, "Check a role inference rule.",
              [("HEAD", "/v3/roles/{prior_role_id}/implies/{implied_role_id}")]),
        _rule("list_implied_roles", ADMIN_OR_SYSTEM_READER, "List what a role implies.",
              [("GET", "/v3/roles/{prior_role_id}/implies")]),
        _rule("list_role_inference_rules", ADMIN_OR_SYSTEM_READER,
              "List all role inference rules.", [("GET", "/v3/role_inferences")]),
        _rule("create_implied_role", ADMIN, "Create a role inference rule.",
              [("PUT", "/v3/roles/{prior_role_id}/implies/{implied_role_id}")]),
        _rule("delete_implied_role", ADMIN, "Delete a role inference rule.",
              [("DELETE", "/v3/roles/{prior_role_id}/implies/{implied_role_id}")]),
        # grants and role assignments
        _rule("check_grant", f"{ADMIN_OR_SYSTEM_READER} or {_GRANT_READER}",
              "Check a role grant.", [("HEAD", p) for p in _GRANT_PATHS]),
        _rule("list_grants", f"{ADMIN_OR_SYSTEM_READER} or {_GRANT_READER}",
              "List the roles granted to an actor on a target.",
              [("GET", p.rsplit("/", 1)[0]) for p in _GRANT_PATHS]),
        _rule("create_grant", f"{ADMIN} or {_GRANT_MANAGER}", "Grant a role.",
              [("PUT", p) for p in _GRANT_PATHS]),
        _rule("revoke_grant", f"{ADMIN} or {_GRANT_MANAGER}", "Revoke a role grant.",
              [("DELETE", p) for p in _GRANT_PATHS]),
        *_system_grant_rules(),
        *_credential_and_limit_rules(),
        *_trust_rules(),
        _rule("list_role_assignments", f"{ADMIN_OR_SYSTEM_READER} or "
              f"{_reader_in('target.domain_id')}", "List role assignments.",
              [("GET", "/v3/role_assignments")]),
        _rule("list_role_assignments_for_tree", f"{ADMIN_OR_SYSTEM_READER} or "
              f"{_reader_in('target.domain_id')}",
              "List the role assignments of a project and its subtree.",
              [("GET", "/v3/role_assignments?include_subtree")]),
        # catalog
        *[_rule(name, ADMIN_OR_SYSTEM_READER if method == "GET" else ADMIN,
                f"{name.replace('_', ' ').capitalize()}.", [(method, path)])
          for noun in ("service", "endpoint")
          for name, method, path in ((f"get_{noun}", "GET", f"/v3/{noun}s/{{id}}"),
                                     (f"list_{noun}s", "GET", f"/v3/{noun}s"),
                                     (f"create_{noun}", "POST", f"/v3/{noun}s"),
                                     (f"update_{noun}", "PATCH", f"/v3/{noun}s/{{id}}"),
                                     (f"delete_{noun}", "DELETE", f"/v3/{noun}s/{{id}}"))],
        _rule("get_region", "", "Show a region (any user).", [("GET", "/v3/regions/{id}")]),
        _rule("list_regions", "", "List regions (any user).", [("GET", "/v3/regions")]),
        _rule("create_region", ADMIN, "Create a region.", [("POST", "/v3/regions")]),
        _rule("update_region", ADMIN, "Update a region.", [("PATCH", "/v3/regions/{id}")]),
        _rule("delete_region", ADMIN, "Delete a region.", [("DELETE", "/v3/regions/{id}")]),
        # application credentials
        _rule("get_application_credential", f"{ADMIN_OR_SYSTEM_READER} or {OWNER}",
              "Show an application credential.",
              [("GET", "/v3/users/{user_id}/application_credentials/{id}")]),
        _rule("list_application_credentials", f"{ADMIN_OR_SYSTEM_READER} or {OWNER}",
              "List a user's application credentials.",
              [("GET", "/v3/users/{user_id}/application_credentials")]),
        _rule("create_application_credential", OWNER,
              "Create an application credential (for oneself).",
              [("POST", "/v3/users/{user_id}/application_credentials")]),
        _rule("delete_application_credential", f"{ADMIN} or {OWNER}",
              "Delete an application credential.",
              [("DELETE", "/v3/users/{user_id}/application_credentials/{id}")]),
        *policies_ext.list_rules(),
    ]
