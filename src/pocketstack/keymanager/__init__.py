"""The key manager (Barbican API v1): secrets with payloads encrypted at rest, containers
with their consumers, ACLs, quotas and orders that generate keys server-side."""
