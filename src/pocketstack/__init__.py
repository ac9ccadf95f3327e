"""pocketstack: an OpenStack-compatible IaaS cloud in one Python package."""
