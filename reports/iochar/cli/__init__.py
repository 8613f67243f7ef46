"""Command-line entry points: one module per command (report, parser, diff; iochar-db is
iochar/db/cli.py). No command imports another: what two of them share lives in
common.py (run_cli guard, ArgParser, escape, write_atomic), jobs.py (several jobs in one
input) or a non-CLI module such as iochar/jobreport.py (tests/unit/test_cli_imports.py)."""

import os

# Before any command imports numpy: OpenBLAS's threads spin for ~0.1 s of CPU after the
# import and after each BLAS call, on another core, and no command here does linear
# algebra big enough to gain from them (a fresh iochar-top's first read of a 20,000-file
# live file: 107 ms of CPU in 54 ms without this, 45 in 45 with it; bench/live_scrape.py).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
