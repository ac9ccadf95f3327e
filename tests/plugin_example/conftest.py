# Run only by tests/test_library_plugin.py (in a pytest of its own, as a user's project
# would); the repository's test run skips these files.
import os

if not os.environ.get("POCKETSTACK_PLUGIN_EXAMPLE"):
    collect_ignore_glob = ["test_*.py"]
