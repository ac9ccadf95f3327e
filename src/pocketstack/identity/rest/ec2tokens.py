"""POST /v3/ec2tokens and /v3/s3tokens: validate an EC2/S3 signature, answer with a token
(200; the EC2 answer names it in X-Subject-Token too, as Keystone's)."""
from __future__ import annotations

from pocketstack.identity import ec2tokens
from pocketstack.identity.rest import common
from pocketstack.wsgi import routing


def ec2_validate(req):
    common.authorize(req, "identity:ec2tokens_validate")
    token_id, body = ec2tokens.authenticate(common.json_body(req), "ec2")
    return routing.json_response(body, headers={"X-Subject-Token": token_id})


def s3_validate(req):
    common.authorize(req, "identity:s3tokens_validate")
    _token_id, body = ec2tokens.authenticate(common.json_body(req), "s3")
    return routing.json_response(body)


ROUTES = {"/v3/ec2tokens": {"POST": ec2_validate},
          "/v3/s3tokens": {"POST": s3_validate}}
