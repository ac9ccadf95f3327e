"""Identity options."""
from oslo_config import cfg

OPTS = {
    "identity": [
        cfg.IntOpt("password_hash_rounds", default=12, min=4, max=31,
                   help="bcrypt cost factor for password hashes (2^N rounds). Higher is slower "
                        "to attack and slower to log in with."),
        cfg.StrOpt("default_domain_id", default="default", help="ID of the Default domain."),
    ],
    "token": [
        cfg.IntOpt("expiration", default=3600, min=60, help="Token lifetime in seconds."),
        cfg.IntOpt("allow_expired_window", default=172800, min=0,
                   help="Seconds after its expiry a user's token is still accepted when it "
                        "comes with a valid service token (X-Service-Token): another service "
                        "finishing a long request for the user, as keystone's option."),
        cfg.FloatOpt("revocation_cache_time", default=1.0, min=0.0,
                     help="Seconds an API process trusts its copy of the revocation events "
                          "before it checks the database for new ones. Revocations made through "
                          "this process apply at once; those made by another process apply "
                          "within this time."),
    ],
    "oauth1": [
        cfg.IntOpt("request_token_duration", default=28800, min=0,
                   help="Seconds an OAuth1 request token stays valid (0: no expiry), as "
                        "keystone's option."),
        cfg.IntOpt("access_token_duration", default=86400, min=0,
                   help="Seconds an OAuth1 access token stays valid (0: no expiry), as "
                        "keystone's option."),
    ],
    "fernet_tokens": [
        cfg.StrOpt("key_repository",
                   help="Directory of Fernet keys. Default: <data dir>/fernet-keys."),
        cfg.IntOpt("max_active_keys", default=3, min=1,
                   help="Keys kept when rotating: one staged, one primary, the rest secondary."),
    ],
}
