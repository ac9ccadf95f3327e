"""The JSON schemas glance publishes at /v2/schemas/* and validates requests against.

The image schema is "permissive": any additional property is allowed as long as its value
is a string (``additionalProperties: {"type": "string"}``), which is how users attach
``hw_disk_bus``, ``os_distro`` or openstacksdk's ``owner_specified.openstack.*``.
The well-known extra properties (kernel_id, os_distro, …) are those glance ships in
etc/schema-image.json.
"""
from __future__ import annotations

import copy
import functools

from pocketstack.common import config, exceptions

UUID_PATTERN = ("^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}"
                "-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$")
STATUSES = ["queued", "saving", "active", "killed", "deleted", "uploading", "importing",
            "pending_delete", "deactivated"]
VISIBILITIES = ["community", "public", "private", "shared"]
MEMBER_STATUSES = ["pending", "accepted", "rejected"]


def _prop(type_, description, **extra) -> dict:
    return {"type": type_, "description": description, **extra}


def base_properties() -> dict:
    conf = config.CONF.image
    nullable_string = ["null", "string"]
    return {
        "id": _prop("string", "An identifier for the image", pattern=UUID_PATTERN),
        "name": _prop(nullable_string, "Descriptive name for the image", maxLength=255),
        "status": _prop("string", "Status of the image", readOnly=True, enum=STATUSES),
        "visibility": _prop("string", "Scope of image accessibility", enum=VISIBILITIES),
        "protected": _prop("boolean", "If true, image will not be deletable."),
        "os_hidden": _prop("boolean",
                           "If true, image will not appear in default image list response."),
        "checksum": _prop(nullable_string, "md5 hash of image contents.", readOnly=True,
                          maxLength=32),
        "os_hash_algo": _prop(nullable_string, "Algorithm to calculate the os_hash_value",
                              readOnly=True, maxLength=64),
        "os_hash_value": _prop(nullable_string, "Hexdigest of the image contents using the "
                               "algorithm specified by the os_hash_algo", readOnly=True,
                               maxLength=128),
        "owner": _prop(nullable_string, "Owner of the image", maxLength=255),
        "size": _prop(["null", "integer"], "Size of image file in bytes", readOnly=True),
        "virtual_size": _prop(["null", "integer"], "Virtual size of image in bytes",
                              readOnly=True),
        "container_format": _prop(nullable_string, "Format of the container",
                                  enum=[None] + list(conf.container_formats)),
        "disk_format": _prop(nullable_string, "Format of the disk",
                             enum=[None] + list(conf.disk_formats)),
        "created_at": _prop("string", "Date and time of image registration", readOnly=True),
        "updated_at": _prop("string", "Date and time of the last image modification",
                            readOnly=True),
        "tags": _prop("array", "List of strings related to the image",
                      items={"type": "string", "maxLength": 255}),
        "direct_url": _prop("string", "URL to access the image file kept in external store",
                            readOnly=True),
        "min_ram": _prop("integer", "Amount of ram (in MB) required to boot image."),
        "min_disk": _prop("integer", "Amount of disk space (in GB) required to boot image."),
        "self": _prop("string", "An image self url", readOnly=True),
        "file": _prop("string", "An image file url", readOnly=True),
        "stores": _prop("string", "Store in which image data resides.  Only present when the "
                        "operator has enabled multiple stores.  May be a comma-separated list "
                        "of store identifiers.", readOnly=True),
        "schema": _prop("string", "An image schema url", readOnly=True),
        "locations": {
            "type": "array",
            "items": {"type": "object", "required": ["url", "metadata"], "properties": {
                "url": {"type": "string", "maxLength": 255},
                "metadata": {"type": "object"}}},
            "description": "A set of URLs to access the image file kept in external store",
        },
    }


PROPERTY_KEYS_URL = ("https://docs.openstack.org/python-glanceclient/latest/cli/"
                     "property-keys.html")

# glance's etc/schema-image.json
CUSTOM_PROPERTIES = {
    "kernel_id": _prop(["null", "string"], "ID of image stored in Glance that should be used "
                       "as the kernel when booting an AMI-style image.", pattern=UUID_PATTERN),
    "ramdisk_id": _prop(["null", "string"], "ID of image stored in Glance that should be used "
                        "as the ramdisk when booting an AMI-style image.", pattern=UUID_PATTERN),
    "instance_uuid": _prop("string", "Metadata which can be used to record which instance this "
                           "image is associated with. (Informational only, does not create an "
                           "instance snapshot.)"),
    "architecture": _prop("string", "Operating system architecture as specified in "
                          + PROPERTY_KEYS_URL),
    "os_distro": _prop("string", "Common name of operating system distribution as specified "
                       "in " + PROPERTY_KEYS_URL),
    "os_version": _prop("string", "Operating system version as specified by the distributor."),
    "description": _prop("string", "A human-readable string describing this image."),
    "cinder_encryption_key_id": _prop(
        "string", "Identifier in the OpenStack Key Management Service for the encryption key "
        "for the Block Storage Service to use when mounting a volume created from this image"),
    "cinder_encryption_key_deletion_policy": _prop(
        "string", "States the condition under which the Image Service will delete the object "
        "associated with the 'cinder_encryption_key_id' image property.  If this property is "
        "missing, the Image Service will take no action",
        enum=["on_image_deletion", "do_not_delete"]),
}
for _value in CUSTOM_PROPERTIES.values():
    _value["is_base"] = False



def image_schema() -> dict:
    properties = base_properties()
    properties.update(copy.deepcopy(CUSTOM_PROPERTIES))
    return {
        "name": "image",
        "properties": properties,
        "additionalProperties": {"type": "string"},
        "links": [{"rel": "self", "href": "{self}"},
                  {"rel": "enclosure", "href": "{file}"},
                  {"rel": "describedby", "href": "{schema}"}],
    }


def _collection(name: str, item: dict) -> dict:
    return {
        "name": name,
        "properties": {
            name: {"type": "array", "items": item},
            "first": {"type": "string"},
            "next": {"type": "string"},
            "schema": {"type": "string"},
        },
        "links": [{"rel": "first", "href": "{first}"},
                  {"rel": "next", "href": "{next}"},
                  {"rel": "describedby", "href": "{schema}"}],
    }


def images_schema() -> dict:
    return _collection("images", image_schema())


def member_schema() -> dict:
    return {
        "name": "member",
        "properties": {
            "created_at": _prop("string", "Date and time of image member creation"),
            "image_id": _prop("string", "An identifier for the image", pattern=UUID_PATTERN),
            "member_id": _prop("string", "An identifier for the image member (tenantId)"),
            "schema": {"readOnly": True, "type": "string"},
            "status": _prop("string", "The status of this image member",
                            enum=MEMBER_STATUSES),
            "updated_at": _prop("string", "Date and time of last modification of image member"),
        },
    }


def members_schema() -> dict:
    schema = _collection("members", member_schema())
    del schema["properties"]["first"], schema["properties"]["next"]
    schema["links"] = [{"rel": "describedby", "href": "{schema}"}]
    return schema


@functools.lru_cache(maxsize=4)
def _validator(formats: tuple):
    import jsonschema  # on the first validation: a start need not import it

    return jsonschema.Draft4Validator(image_schema())


def validate_image(obj: dict) -> None:
    """400 unless ``obj`` (whole or partial image) matches the image schema."""
    conf = config.CONF.image
    validator = _validator((tuple(conf.disk_formats), tuple(conf.container_formats)))
    import jsonschema

    error = jsonschema.exceptions.best_match(validator.iter_errors(obj))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        suffix = f" (in {where})" if where else ""
        raise exceptions.BadRequest(
            f"Provided object does not match schema 'image': {error.message}{suffix}")
