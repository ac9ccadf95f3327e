"""A keystoneauth1 session for `pocketstack demo` and `pocketstack trace`, from a
clouds.yaml entry or the OS_* variables, as the openstack CLI finds its cloud — without
openstacksdk, which a plain install of pocketstack does not have.

Where the entry is looked up: ``<data dir>/clouds.yaml`` (what `pocketstack up` writes),
then $OS_CLIENT_CONFIG_FILE, ./clouds.yaml, ~/.config/openstack/clouds.yaml,
/etc/openstack/clouds.yaml. The cloud name ``envvars`` means the OS_* variables.
"""
from __future__ import annotations

import os

import click

# clouds.yaml auth keys keystoneauth1's v3 Password plugin takes, and the OS_* variables
# that set them.
AUTH_KEYS = ("auth_url", "username", "user_id", "password", "project_name", "project_id",
             "user_domain_name", "user_domain_id", "project_domain_name", "project_domain_id",
             "domain_name", "domain_id")


class CloudConfigError(click.ClickException):
    pass


def candidate_files(data_dir: str, elsewhere: bool = True) -> list[str]:
    paths = [os.path.join(data_dir, "clouds.yaml")]
    if not elsewhere:
        return paths
    if os.environ.get("OS_CLIENT_CONFIG_FILE"):
        paths.append(os.environ["OS_CLIENT_CONFIG_FILE"])
    paths += ["clouds.yaml", os.path.expanduser("~/.config/openstack/clouds.yaml"),
              "/etc/openstack/clouds.yaml"]
    return paths


def find_cloud(cloud_name: str, data_dir: str, elsewhere: bool = True) -> dict:
    """The clouds.yaml entry ``cloud_name`` (``envvars``: from the OS_* variables)."""
    if cloud_name == "envvars":
        auth = {key: os.environ[f"OS_{key.upper()}"] for key in AUTH_KEYS
                if os.environ.get(f"OS_{key.upper()}")}
        if not auth.get("auth_url"):
            raise CloudConfigError("--os-cloud envvars needs OS_AUTH_URL (and OS_USERNAME, "
                                   "OS_PASSWORD, OS_PROJECT_NAME or OS_PROJECT_ID …).")
        return {"auth": auth, "region_name": os.environ.get("OS_REGION_NAME")}
    import yaml

    looked = []
    for path in candidate_files(data_dir, elsewhere):
        if not os.path.isfile(path):
            continue
        looked.append(path)
        try:
            with open(path) as f:
                clouds = (yaml.safe_load(f) or {}).get("clouds") or {}
        except (OSError, yaml.YAMLError, AttributeError) as error:
            raise CloudConfigError(f"cannot read {path}: {error}") from None
        if cloud_name in clouds:
            return clouds[cloud_name]
    if not looked:
        raise CloudConfigError(
            f"no clouds.yaml in {data_dir}: start the cloud with "
            f"`pocketstack up --data-dir {data_dir}` first (or pass --data-dir).")
    raise CloudConfigError(f"no cloud named {cloud_name!r} in {', '.join(looked)}.")


def session(cloud_name: str, data_dir: str, elsewhere: bool = True):
    """A keystoneauth1 session for the cloud, and its region (or None). ``elsewhere``
    False: only ``<data dir>/clouds.yaml``."""
    from keystoneauth1 import session as ks_session
    from keystoneauth1.identity import v3

    entry = find_cloud(cloud_name, data_dir, elsewhere)
    auth = {k: v for k, v in (entry.get("auth") or {}).items() if k in AUTH_KEYS and v}
    if "auth_url" not in auth:
        raise CloudConfigError(f"cloud {cloud_name!r} has no auth_url.")
    auth["auth_url"] = auth["auth_url"].rstrip("/")
    if not auth["auth_url"].endswith("/v3"):
        auth["auth_url"] += "/v3"
    try:
        plugin = v3.Password(**auth)
    except TypeError as error:
        raise CloudConfigError(f"cloud {cloud_name!r}: {error}") from None
    return ks_session.Session(auth=plugin), entry.get("region_name")
