"""Volume service: the Cinder v3 API over file and LVM backends (seed steps 25-27).

Where things are:

* ``rest/``        route table (both URL forms: with and without the project id) and thin
                   handlers, one module per URL noun; ``rest/microversion.py`` the
                   `OpenStack-API-Version: volume 3.x` negotiation
* ``api.py``       volumes: create, list, show, update, delete, metadata
* ``actions.py``   volume actions (extend, reset status, bootable, readonly, upload to image)
* ``attach.py``    attachments (3.27+) and the legacy attach actions; connection_info
* ``snapshots.py`` snapshots; ``backups.py`` backups (full sparse copies) and restores;
  ``types.py`` volume types; ``quotas.py`` quotas and limits
* ``scheduler.py`` chooses a backend by volume type and free capacity
* ``manager.py``   the volume service's RPC endpoint (topic ``volume``, server = host):
                   does the slow work (backend create/delete, image download, copies,
                   backups)
* ``backends/``    ``file`` (sparse raw files) and ``lvm`` (logical volumes)
* ``views.py``     cinder's response shapes; ``service.py`` start-up, heartbeat, recovery
"""
