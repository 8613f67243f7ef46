"""Command-line entry points: one module per command (report, parser, diff; iochar-db is
iochar/db/cli.py). No command imports another: what two of them share lives in
common.py (run_cli guard, ArgParser, escape, write_atomic), jobs.py (several jobs in one
input) or a non-CLI module such as iochar/jobreport.py (tests/unit/test_cli_imports.py)."""
