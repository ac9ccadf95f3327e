"""Policy defaults of Keystone's extensions (OS-EP-FILTER, OS-FEDERATION, OS-OAUTH1,
domain configuration) and of access rules: reads for admins and system readers, writes
for admins, as Keystone's defaults; a user reads and deletes its own access rules."""
from pocketstack.identity import policy_checks as base

_EP = "/v3/OS-EP-FILTER"
_FED = "/v3/OS-FEDERATION"


def _admin_crud(pairs) -> list:
    """(name, method, path): GET (and HEAD) rules read, the others write."""
    return [base._rule(name, base.ADMIN_OR_SYSTEM_READER if method == "GET" else base.ADMIN,
                       f"{name.replace('_', ' ').capitalize()}.", [(method, path)])
            for name, method, path in pairs]


def _crud(noun: str, plural: str, path: str, create: str = "POST") -> list:
    return [(f"create_{noun}", create, path if create == "POST" else path + "/{id}"),
            (f"list_{plural}", "GET", path), (f"get_{noun}", "GET", path + "/{id}"),
            (f"update_{noun}", "PATCH", path + "/{id}"),
            (f"delete_{noun}", "DELETE", path + "/{id}")]


def _endpoint_filter() -> list:
    groups = f"{_EP}/endpoint_groups"
    pe = f"{_EP}/projects/{{project_id}}/endpoints/{{endpoint_id}}"
    pg = f"{groups}/{{endpoint_group_id}}/projects/{{project_id}}"
    return [*_crud("endpoint_group", "endpoint_groups", groups),
            ("list_projects_associated_with_endpoint_group", "GET", groups + "/{id}/projects"),
            ("list_endpoints_associated_with_endpoint_group", "GET",
             groups + "/{id}/endpoints"),
            ("get_endpoint_group_in_project", "GET", pg),
            ("list_endpoint_groups_for_project", "GET",
             f"{_EP}/projects/{{project_id}}/endpoint_groups"),
            ("add_endpoint_group_to_project", "PUT", pg),
            ("remove_endpoint_group_from_project", "DELETE", pg),
            ("add_endpoint_to_project", "PUT", pe), ("check_endpoint_in_project", "GET", pe),
            ("remove_endpoint_from_project", "DELETE", pe),
            ("list_endpoints_for_project", "GET", f"{_EP}/projects/{{project_id}}/endpoints"),
            ("list_projects_for_endpoint", "GET", f"{_EP}/endpoints/{{endpoint_id}}/projects")]


def _federation() -> list:
    idps = f"{_FED}/identity_providers"
    return [*_crud("identity_provider", "identity_providers", idps, create="PUT"),
            *_crud("protocol", "protocols", idps + "/{idp_id}/protocols", create="PUT"),
            *_crud("mapping", "mappings", f"{_FED}/mappings", create="PUT"),
            *_crud("service_provider", "service_providers", f"{_FED}/service_providers",
                   create="PUT")]


def _domain_config() -> list:
    path = "/v3/domains/{domain_id}/config"
    return [("create_domain_config", "PUT", path), ("get_domain_config", "GET", path),
            ("update_domain_config", "PATCH", path),
            ("delete_domain_config", "DELETE", path),
            ("get_domain_config_default", "GET", "/v3/domains/config/default")]


def _oauth1_tokens() -> list:
    """keystone/common/policies/access_token.py: all admin-only."""
    tokens = "/v3/users/{user_id}/OS-OAUTH1/access_tokens"
    return [base._rule(name, base.ADMIN, f"{name.replace('_', ' ').capitalize()}.",
                       [(method, path)])
            for name, method, path in (
                ("authorize_request_token", "PUT",
                 "/v3/OS-OAUTH1/authorize/{request_token_id}"),
                ("list_access_tokens", "GET", tokens),
                ("get_access_token", "GET", tokens + "/{access_token_id}"),
                ("delete_access_token", "DELETE", tokens + "/{access_token_id}"),
                ("list_access_token_roles", "GET", tokens + "/{access_token_id}/roles"),
                ("get_access_token_role", "GET",
                 tokens + "/{access_token_id}/roles/{role_id}"))]


def list_rules() -> list:
    own = f"{base.ADMIN_OR_SYSTEM_READER} or {base.OWNER}"
    rules_path = "/v3/users/{user_id}/access_rules"
    return [
        *_admin_crud(_endpoint_filter()), *_admin_crud(_federation()),
        *_admin_crud(_crud("consumer", "consumers", "/v3/OS-OAUTH1/consumers")),
        *_oauth1_tokens(),
        *_admin_crud(_domain_config()),
        # Keystone: any user may read the password rules its domain enforces.
        base._rule("get_security_compliance_domain_config", "",
                   "Read a domain's security compliance options.",
                   [("GET", "/v3/domains/{domain_id}/config/security_compliance")]),
        # Keystone 2025: only services (swift3, ec2-api) and admins validate signatures:
        # a presigned URL must not become a token in anyone's hands.
        *[base._rule(f"{kind}tokens_validate", f"{base.ADMIN} or rule:service_role",
                     f"Validate {kind.upper()} credentials and issue a token.",
                     [("POST", f"/v3/{kind}tokens")]) for kind in ("ec2", "s3")],
        base._rule("list_access_rules", own, "List a user's access rules.",
                   [("GET", rules_path)]),
        base._rule("get_access_rule", own, "Show an access rule.",
                   [("GET", rules_path + "/{id}")]),
        base._rule("delete_access_rule", f"{base.ADMIN} or {base.OWNER}",
                   "Delete an access rule.", [("DELETE", rules_path + "/{id}")]),
    ]
