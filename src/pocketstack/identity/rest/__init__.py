"""Keystone v3 route table: one line per URL, handlers in one module per noun."""
from pocketstack.identity.rest import (app_creds, auth, catalog, credentials, discovery,
                                       domains, ec2tokens, endpoint_filter, federation, grants,
                                       groups, limits, oauth1, projects, roles, trusts, users)

_GRANT = {"PUT": grants.create_grant, "GET": grants.check_grant, "HEAD": grants.check_grant,
          "DELETE": grants.revoke_grant}
_GRANT_LIST = {"GET": grants.list_grants}


def _grant_routes() -> dict:
    routes = {}
    for target in ("projects/{project_id}", "domains/{domain_id}"):
        for actor in ("users/{user_id}", "groups/{group_id}"):
            routes[f"/v3/{target}/{actor}/roles"] = _GRANT_LIST
            routes[f"/v3/{target}/{actor}/roles/{{role_id}}"] = _GRANT
            routes[f"/v3/OS-INHERIT/{target}/{actor}/roles/inherited_to_projects"] = _GRANT_LIST
            routes[f"/v3/OS-INHERIT/{target}/{actor}/roles/{{role_id}}/inherited_to_projects"] \
                = _GRANT
    for actor in ("users/{user_id}", "groups/{group_id}"):
        routes[f"/v3/system/{actor}/roles"] = _GRANT_LIST
        routes[f"/v3/system/{actor}/roles/{{role_id}}"] = _GRANT
    return routes


ROUTES = {
    "/": {"GET": discovery.versions},
    "/v3": {"GET": discovery.v3},
    # tokens
    "/v3/auth/tokens": {"POST": auth.issue_token, "GET": auth.validate_token,
                        "HEAD": auth.validate_token, "DELETE": auth.revoke_token},
    "/v3/auth/catalog": {"GET": auth.auth_catalog},
    "/v3/auth/projects": {"GET": auth.auth_projects},
    "/v3/auth/domains": {"GET": auth.auth_domains},
    # domains and projects
    "/v3/domains": {"GET": domains.list_domains, "POST": domains.create_domain},
    "/v3/domains/{domain_id}": {"GET": domains.get_domain, "PATCH": domains.update_domain,
                                "DELETE": domains.delete_domain},
    "/v3/projects": {"GET": projects.list_projects, "POST": projects.create_project},
    "/v3/projects/{project_id}": {"GET": projects.get_project,
                                  "PATCH": projects.update_project,
                                  "DELETE": projects.delete_project},
    "/v3/projects/{project_id}/tags": {"GET": projects.list_tags, "PUT": projects.replace_tags,
                                       "DELETE": projects.delete_tags},
    "/v3/projects/{project_id}/tags/{value}": {"GET": projects.check_tag,
                                               "PUT": projects.add_tag,
                                               "DELETE": projects.delete_tag},
    # users and groups
    "/v3/users": {"GET": users.list_users, "POST": users.create_user},
    "/v3/users/{user_id}": {"GET": users.get_user, "PATCH": users.update_user,
                            "DELETE": users.delete_user},
    "/v3/users/{user_id}/password": {"POST": users.change_password},
    "/v3/users/{user_id}/projects": {"GET": users.list_user_projects},
    "/v3/users/{user_id}/groups": {"GET": users.list_user_groups},
    "/v3/users/{user_id}/application_credentials": {"GET": app_creds.list_app_creds,
                                                    "POST": app_creds.create_app_cred},
    "/v3/users/{user_id}/application_credentials/{app_cred_id}": {
        "GET": app_creds.get_app_cred, "DELETE": app_creds.delete_app_cred},
    "/v3/users/{user_id}/access_rules": {"GET": app_creds.list_access_rules},
    "/v3/users/{user_id}/access_rules/{access_rule_id}": {
        "GET": app_creds.get_access_rule, "DELETE": app_creds.delete_access_rule},
    "/v3/groups": {"GET": groups.list_groups, "POST": groups.create_group},
    "/v3/groups/{group_id}": {"GET": groups.get_group, "PATCH": groups.update_group,
                              "DELETE": groups.delete_group},
    "/v3/groups/{group_id}/users": {"GET": groups.list_group_users},
    "/v3/groups/{group_id}/users/{user_id}": {"PUT": groups.add_user, "GET": groups.check_user,
                                              "HEAD": groups.check_user,
                                              "DELETE": groups.remove_user},
    # roles, implied roles, grants
    "/v3/roles": {"GET": roles.list_roles, "POST": roles.create_role},
    "/v3/roles/{role_id}": {"GET": roles.get_role, "PATCH": roles.update_role,
                            "DELETE": roles.delete_role},
    "/v3/roles/{prior_role_id}/implies": {"GET": roles.list_implied_roles},
    "/v3/roles/{prior_role_id}/implies/{implied_role_id}": {
        "PUT": roles.create_implied_role, "GET": roles.get_implied_role,
        "HEAD": roles.check_implied_role, "DELETE": roles.delete_implied_role},
    "/v3/role_inferences": {"GET": roles.list_role_inferences},
    "/v3/role_assignments": {"GET": grants.list_role_assignments},
    **_grant_routes(),
    # credentials (and their EC2 view)
    "/v3/credentials": {"GET": credentials.list_credentials,
                        "POST": credentials.create_credential},
    "/v3/credentials/{credential_id}": {"GET": credentials.get_credential,
                                        "PATCH": credentials.update_credential,
                                        "DELETE": credentials.delete_credential},
    "/v3/users/{user_id}/credentials/OS-EC2": {"GET": credentials.list_ec2,
                                               "POST": credentials.create_ec2},
    "/v3/users/{user_id}/credentials/OS-EC2/{access}": {"GET": credentials.get_ec2,
                                                        "DELETE": credentials.delete_ec2},
    # unified limits and policy blobs
    "/v3/registered_limits": {"GET": limits.list_registered_limits,
                              "POST": limits.create_registered_limits},
    "/v3/registered_limits/{registered_limit_id}": {
        "GET": limits.get_registered_limit, "PATCH": limits.update_registered_limit,
        "DELETE": limits.delete_registered_limit},
    "/v3/limits/model": {"GET": limits.limit_model},
    "/v3/limits": {"GET": limits.list_limits, "POST": limits.create_limits},
    "/v3/limits/{limit_id}": {"GET": limits.get_limit, "PATCH": limits.update_limit,
                              "DELETE": limits.delete_limit},
    "/v3/policies": {"GET": limits.list_policies, "POST": limits.create_policy},
    "/v3/policies/{policy_id}": {"GET": limits.get_policy, "PATCH": limits.update_policy,
                                 "DELETE": limits.delete_policy},
    # trusts
    "/v3/OS-TRUST/trusts": {"GET": trusts.list_trusts, "POST": trusts.create_trust},
    "/v3/OS-TRUST/trusts/{trust_id}": {"GET": trusts.get_trust, "DELETE": trusts.delete_trust},
    "/v3/OS-TRUST/trusts/{trust_id}/roles": {"GET": trusts.list_trust_roles},
    "/v3/OS-TRUST/trusts/{trust_id}/roles/{role_id}": {"GET": trusts.get_trust_role,
                                                       "HEAD": trusts.get_trust_role},
    # catalog
    "/v3/services": {"GET": catalog.list_services, "POST": catalog.create_service},
    "/v3/services/{service_id}": {"GET": catalog.get_service, "PATCH": catalog.update_service,
                                  "DELETE": catalog.delete_service},
    "/v3/endpoints": {"GET": catalog.list_endpoints, "POST": catalog.create_endpoint},
    "/v3/endpoints/{endpoint_id}": {"GET": catalog.get_endpoint,
                                    "PATCH": catalog.update_endpoint,
                                    "DELETE": catalog.delete_endpoint},
    **domains.CONFIG_ROUTES,
    **ec2tokens.ROUTES,
    **endpoint_filter.ROUTES,
    **federation.ROUTES,
    **oauth1.ROUTES,
    "/v3/regions": {"GET": catalog.list_regions, "POST": catalog.create_region},
    "/v3/regions/{region_id}": {"GET": catalog.get_region, "PUT": catalog.create_region_with_id,
                                "PATCH": catalog.update_region,
                                "DELETE": catalog.delete_region},
}
