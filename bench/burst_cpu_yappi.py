"""`pocketstack ...` under yappi (CPU clock, every thread); pstats to $YAPPI_OUT at exit.
Used by bench/burst_cpu.py when YAPPI_OUT is set."""
import atexit
import os
import sys

import yappi

yappi.set_clock_type("cpu")
yappi.start()


def _dump():
    yappi.stop()
    yappi.get_func_stats().save(os.environ["YAPPI_OUT"], type="pstat")


atexit.register(_dump)
from pocketstack.cli.main import main  # noqa: E402

sys.exit(main())
