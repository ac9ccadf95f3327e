"""`pocketstack host-credential HOST`: make (or reset) a compute host's own identity user,
run on the API host: the credential a host on the conductor proves its name with
(clients/host_users.py)."""
from __future__ import annotations

import os

import click


@click.command("host-credential")
@click.argument("host")
@click.option("--data-dir", envvar="POCKETSTACK_HOME", default=None,
              help="The API host's state directory (as for `pocketstack up`): its "
                   "clouds.yaml signs in as admin, its password file keeps the password.")
@click.option("--config-file", default=None,
              help="Config file (default <data dir>/pocketstack.conf).")
def host_credential(host, data_dir, config_file):
    """Create compute host HOST's user nova-compute-HOST (the service role on the service
    project), or give it a new password, which revokes its tokens. The password is kept in
    the API host's password file and printed for HOST's config ([service_user]
    host_password)."""
    from pocketstack.cli import clouds
    from pocketstack.clients import host_users, service_users
    from pocketstack.cloud import default_data_dir
    from pocketstack.common import config

    data_dir = os.path.abspath(data_dir or default_data_dir())
    if config_file and not os.path.isfile(config_file):
        raise click.ClickException(f"Config file {config_file} does not exist.")
    try:
        config.load(data_dir, config_file or os.path.join(data_dir, "pocketstack.conf"))
    except config.ConfigError as error:
        raise click.ClickException(str(error)) from None
    session, _region = clouds.session("pocketstack", data_dir, elsewhere=False)
    identity_url = session.auth.auth_url
    try:
        password = host_users.provision(
            session, identity_url, host, domain_id=config.CONF.identity.default_domain_id,
            project_name=config.CONF.service_user.project_name)
    except host_users.ProvisionError as error:
        raise click.ClickException(f"could not make {host_users.user_name(host)}: "
                                   f"{error}") from None
    except Exception as error:  # noqa: BLE001 - e.g. the API does not answer
        raise click.ClickException(f"could not reach the identity API at {identity_url}: "
                                   f"{error}") from None
    service_users.store(host_users.user_name(host), password)
    click.echo(f"# {host_users.user_name(host)}: for {host}'s config (also kept in "
               f"{service_users.password_file()})\n[service_user]\nhost_password = "
               f"{password}")
