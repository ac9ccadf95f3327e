"""Object storage: the Swift API v1 (accounts, containers, objects) with an embedded
backend — object bytes in files under the data dir, listings and usage in the database."""
