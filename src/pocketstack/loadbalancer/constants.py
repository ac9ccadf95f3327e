"""Octavia's names: statuses, protocols, algorithms and which combinations go together
(octavia/common/constants.py and octavia-lib's constants)."""
from __future__ import annotations

ACTIVE, ERROR, DELETED = "ACTIVE", "ERROR", "DELETED"
PENDING_CREATE, PENDING_UPDATE = "PENDING_CREATE", "PENDING_UPDATE"
PENDING_DELETE = "PENDING_DELETE"
PENDING = (PENDING_CREATE, PENDING_UPDATE, PENDING_DELETE)
ONLINE, OFFLINE, DEGRADED, NO_MONITOR = "ONLINE", "OFFLINE", "DEGRADED", "NO_MONITOR"

HTTP, HTTPS, TCP, UDP = "HTTP", "HTTPS", "TCP", "UDP"
TERMINATED_HTTPS, PROMETHEUS, SCTP = "TERMINATED_HTTPS", "PROMETHEUS", "SCTP"
PROXY, PROXYV2 = "PROXY", "PROXYV2"
LISTENER_PROTOCOLS = (HTTP, HTTPS, TCP, TERMINATED_HTTPS, UDP, SCTP, PROMETHEUS)
POOL_PROTOCOLS = (HTTP, HTTPS, PROXY, PROXYV2, TCP, UDP, SCTP)
# Which pool protocols a listener of each protocol may send to.
LISTENER_POOL_PROTOCOLS = {
    TCP: (HTTP, HTTPS, PROXY, PROXYV2, TCP),
    HTTP: (HTTP, PROXY, PROXYV2),
    HTTPS: (HTTPS, PROXY, PROXYV2, TCP),
    TERMINATED_HTTPS: (HTTP, PROXY, PROXYV2),
    UDP: (UDP,),
    SCTP: (SCTP,),
    PROMETHEUS: (),
}
L4_PROTOCOL = {TCP: TCP, HTTP: TCP, HTTPS: TCP, TERMINATED_HTTPS: TCP, PROXY: TCP,
               PROXYV2: TCP, PROMETHEUS: TCP, UDP: UDP, SCTP: SCTP}

ROUND_ROBIN, LEAST_CONNECTIONS = "ROUND_ROBIN", "LEAST_CONNECTIONS"
SOURCE_IP, SOURCE_IP_PORT = "SOURCE_IP", "SOURCE_IP_PORT"
LB_ALGORITHMS = (ROUND_ROBIN, LEAST_CONNECTIONS, SOURCE_IP, SOURCE_IP_PORT)
SESSION_PERSISTENCE_TYPES = ("SOURCE_IP", "HTTP_COOKIE", "APP_COOKIE")

HM_TYPES = ("HTTP", "HTTPS", "PING", "TCP", "TLS-HELLO", "UDP-CONNECT", "SCTP")
HM_HTTP_TYPES = ("HTTP", "HTTPS")
HM_HTTP_METHODS = ("CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT",
                   "TRACE")
# Monitors a UDP pool accepts (Octavia: "only UDP-CONNECT, HTTP, TCP, PING").
HM_TYPES_FOR_UDP = ("UDP-CONNECT", "HTTP", "TCP", "PING")

L7_ACTIONS = ("REJECT", "REDIRECT_TO_URL", "REDIRECT_TO_POOL", "REDIRECT_PREFIX")
L7_RULE_TYPES = ("HOST_NAME", "PATH", "FILE_TYPE", "HEADER", "COOKIE", "SSL_CONN_HAS_CERT",
                 "SSL_VERIFY_RESULT", "SSL_DN_FIELD")
L7_COMPARE_TYPES = ("REGEX", "STARTS_WITH", "ENDS_WITH", "CONTAINS", "EQUAL_TO")
L7_REDIRECT_CODES = (301, 302, 303, 307, 308)
MAX_L7RULES_PER_POLICY = 50

CLIENT_AUTH_NONE = "NONE"
CLIENT_AUTH_MODES = (CLIENT_AUTH_NONE, "OPTIONAL", "MANDATORY")
# HAProxy's verify of each (Octavia's CLIENT_AUTH_MAP)
CLIENT_AUTH_VERIFY = {CLIENT_AUTH_NONE: "none", "OPTIONAL": "optional",
                      "MANDATORY": "required"}

HTTP_HEADERS = ("X-Forwarded-For", "X-Forwarded-Port", "X-Forwarded-Proto")
SSL_HEADERS = ("X-SSL-Client-Verify", "X-SSL-Client-Has-Cert", "X-SSL-Client-DN",
               "X-SSL-Client-CN", "X-SSL-Issuer", "X-SSL-Client-SHA1",
               "X-SSL-Client-Not-Before", "X-SSL-Client-Not-After")
HEADER_PROTOCOLS = (HTTP, TERMINATED_HTTPS)

DEFAULT_TIMEOUT = 50000  # ms, Octavia's timeout_client_data/member_connect/member_data
DEFAULT_TCP_INSPECT = 0
MAX_TIMEOUT = 24 * 60 * 60 * 1000

PROVIDERS = {"amphora": "The Octavia Amphora driver.",
             "octavia": "Deprecated alias of the Octavia Amphora driver."}
FLAVOR_CAPABILITIES = [
    {"name": "loadbalancer_topology",
     "description": "The load balancer topology. One of: SINGLE - One amphora per load "
                    "balancer. ACTIVE_STANDBY - Two amphora per load balancer."},
    {"name": "compute_flavor", "description": "The compute driver flavor ID."},
    {"name": "amp_image_tag", "description": "The amphora image tag."},
]
AZ_CAPABILITIES = [
    {"name": "compute_zone", "description": "The compute availability zone."},
    {"name": "management_network", "description": "The management network ID for the amphora."},
    {"name": "valid_vip_networks",
     "description": "List of network IDs that are allowed for VIP use. This overrides/replaces "
                    "the list of allowed networks configured in `octavia.conf`."},
]
