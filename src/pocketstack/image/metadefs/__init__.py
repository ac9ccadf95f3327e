"""Metadata definitions (/v2/metadefs): glance's catalogue of the properties that images,
flavors, volumes and host aggregates can carry.

* ``glance_metadefs.json`` glance's seeded namespaces (etc/metadefs/*.json of
  openstack/glance, all 33 files, unchanged), loaded once by migration image_0003 as
  ``glance-manage db_load_metadefs`` does at install time (``seed.py``)
* ``schemas.json`` glance's published /v2/schemas/metadefs/* and /v2/schemas/task(s)
* ``namespaces.py`` namespaces; ``contents.py`` their objects, properties and tags;
  ``resource_types.py`` resource types and their associations; ``common.py`` visibility,
  policy and views shared by them
"""
