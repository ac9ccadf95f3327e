"""Image service: Glance v2 API over a filesystem store."""
