"""The one seam between services: calls to another service's REST API (seed steps 19-27).

Compute asks image, network and volume; network tells compute about ports; volume reads
images; the metadata proxy asks network and compute. Each call goes through the target's
public API with a token from Keystone, as upstream's services do:

* ``service_users.py`` - each service's own user (nova, neutron, cinder, glance), who
  logs in through the identity API with a password (keystoneauth1), and its token,
  cached until shortly before it expires;
* ``transport.py`` - how a request travels: handed to this process's own ASGI app when
  the target runs here (no socket), HTTP otherwise;
* ``base.py`` - a call with the user's token plus the service token (``X-Service-Token``,
  as nova sends it), or the service token alone for background work;
* ``image.py``, ``network.py``, ``volume.py``, ``compute.py`` - the calls themselves.

Nothing here reads another service's tables or keys.
"""
