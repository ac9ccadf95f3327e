"""Image service: the Glance v2 API over a filesystem store (seed steps 19-21).

Where things are:

* ``rest/``     route table and thin handlers, one module per URL noun
* ``api.py``    images: create, show, JSON-patch update, delete, (de)activate, tags, and
                ``register_image`` for in-process callers
* ``query.py``  listing: visibility, filters, sorting, marker pagination
* ``data.py``   upload, stage/import (glance-direct) and download state transitions
* ``members.py`` sharing images with other projects
* ``store.py``  the filesystem store: temp file → atomic rename, md5 + sha512 on the fly
* ``access.py`` who can see an image; policy targets; ``patch.py`` JSON-patch parsing;
  ``schemas.py`` the published JSON schemas; ``views.py`` response shapes
* ``service.py`` start-up: store location and crash recovery
"""
