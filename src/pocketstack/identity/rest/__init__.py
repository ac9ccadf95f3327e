"""Keystone v3 route table: one line per URL, handlers in one module per noun."""
from pocketstack.identity.rest import auth, discovery

ROUTES = {
    "/": {"GET": discovery.versions},
    "/v3": {"GET": discovery.v3},
    "/v3/auth/tokens": {"POST": auth.issue_token, "GET": auth.validate_token,
                        "HEAD": auth.validate_token, "DELETE": auth.revoke_token},
    "/v3/auth/catalog": {"GET": auth.auth_catalog},
    "/v3/auth/projects": {"GET": auth.auth_projects},
    "/v3/auth/domains": {"GET": auth.auth_domains},
}
