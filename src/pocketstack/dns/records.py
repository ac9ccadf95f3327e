"""Names and record data as designate validates them, parsed with dnspython (the same
parser the DNS server's answers come from, so what the API accepts the server can serve)."""
from __future__ import annotations

import re

import dns.exception
import dns.name
import dns.rdata
import dns.rdataclass
import dns.rdatatype

from pocketstack.dns import errors

TYPES = ("A", "AAAA", "CNAME", "MX", "TXT", "SRV", "NS", "PTR", "CAA", "SSHFP", "SPF",
         "NAPTR", "CERT", "SOA")
USER_TYPES = tuple(t for t in TYPES if t != "SOA")  # SOA is the service's own
MAX_TTL = 2147483647
# designate's "domainname" and "hostname" formats: labels of letters, digits, - and _,
# not starting or ending with -, at most 63 long, 255 in all, a leading * for recordsets.
_LABEL = r"(?!-)[A-Za-z0-9_-]{1,63}(?<!-)"
ZONE_NAME = re.compile(rf"^(?:{_LABEL}\.)+$")
RECORDSET_NAME = re.compile(rf"^(?:\*\.)?(?:{_LABEL}\.)*$")
SRV_NAME = re.compile(r"^_[A-Za-z0-9-]+\._[A-Za-z0-9-]+\.")


def zone_name(value) -> str:
    if not isinstance(value, str) or not value.endswith(".") or len(value) > 255 \
            or not ZONE_NAME.match(value):
        raise errors.bad_request("Provided object does not match schema")
    if value.count(".") < 2:
        raise errors.bad_request("More than one label is required", "invalid_zone_name")
    return value.lower()


def recordset_name(value) -> str:
    if not isinstance(value, str) or not value.endswith(".") or len(value) > 255 \
            or not RECORDSET_NAME.match(value):
        raise errors.bad_request("Provided object does not match schema")
    return value.lower()


def ttl(value, minimum: int | None, nullable: bool = True) -> int | None:
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TTL:
        raise errors.bad_request("Provided object does not match schema")
    if minimum is not None and value < minimum:
        raise errors.bad_request(f"TTL is below the minimum: {minimum}", "invalid_ttl")
    return value


def rdata(rtype: str, text) -> dns.rdata.Rdata:
    """One record's data parsed as its type's text form; names in it must be absolute
    (designate's FQDN rule), which dnspython checks when it renders them."""
    if not isinstance(text, str) or not text.strip() or len(text) > 4096:
        raise errors.bad_request("Provided object does not match schema")
    try:
        rd = dns.rdata.from_text(dns.rdataclass.IN, dns.rdatatype.from_text(rtype), text,
                                 origin=None, relativize=False)
        rd.to_wire()
    except dns.name.NeedAbsoluteNameOrOrigin:
        raise errors.bad_request(f"Invalid {rtype} record {text!r}: names in it must end "
                                 f"with '.'") from None
    except (dns.exception.DNSException, ValueError, TypeError) as error:
        raise errors.bad_request(f"Invalid {rtype} record {text!r}: {error}") from None
    return rd


def check_records(rtype: str, name: str, records) -> list[str]:
    if not isinstance(records, list) or not records:
        raise errors.bad_request("Provided object does not match schema")
    if rtype == "CNAME" and len(records) > 1:
        raise errors.bad_request("only one CNAME record is allowed in a recordset",
                                 "bad_request")
    if rtype == "SRV" and not SRV_NAME.match(name):
        raise errors.bad_request("SRV recordset names must start with _service._proto",
                                 "invalid_recordset_name")
    out = []
    for text in records:
        rdata(rtype, text)
        if text not in out:
            out.append(text)
    return out
