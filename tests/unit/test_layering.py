"""The C include graph: runtime -> nothing; reducer -> runtime; wrappers ->
runtime (and reducer/mpi_wrap.h only); no back edge; and only the commands import
from reports/iochar/cli/ (scripts/check_layers.py)."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("check_layers", ROOT / "scripts" / "check_layers.py")
check_layers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_layers)


def test_tree_has_no_back_edge():
    assert list(check_layers.violations(ROOT)) == []
    assert list(check_layers.python_violations(ROOT)) == []


def test_back_edges_are_found(tmp_path):
    for d in ("runtime", "reducer", "wrappers"):
        (tmp_path / d).mkdir()
    (tmp_path / "runtime" / "core.h").write_text('#include "../reducer/pmpi.h"\n')
    (tmp_path / "reducer" / "pmpi.h").write_text('#include "../wrappers/posix_counters.h"\n')
    (tmp_path / "reducer" / "mpi_wrap.h").write_text('#include "../runtime/core.h"\n')
    (tmp_path / "wrappers" / "posix_counters.h").write_text("")
    (tmp_path / "wrappers" / "mpiio.c").write_text(
        '#include "../reducer/mpi_wrap.h"\n#include "../reducer/pmpi.h"\n#include "posix_counters.h"\n')
    assert list(check_layers.violations(tmp_path)) == [
        'runtime/core.h: #include "../reducer/pmpi.h" (runtime -> reducer)',
        'reducer/pmpi.h: #include "../wrappers/posix_counters.h" (reducer -> wrappers)',
        'wrappers/mpiio.c: #include "../reducer/pmpi.h" (wrappers -> reducer)',
    ]


def test_library_importing_a_cli_is_found(tmp_path):
    pkg = tmp_path / "reports" / "iochar"
    for d in ("cli", "db"):
        (pkg / d).mkdir(parents=True)
    (tmp_path / "reports" / "pyproject.toml").write_text(
        '[project.scripts]\niochar-db = "iochar.db.cli:main"\n')
    (pkg / "cli" / "common.py").write_text("from ..safetext import escape\n")
    (pkg / "cli" / "diff.py").write_text("from .common import escape\n")  # cli -> cli: fine
    (pkg / "db" / "cli.py").write_text("from ..cli.common import run_cli\n")  # a command
    (pkg / "junit.py").write_text("from .cli.common import escape\n")
    (pkg / "db" / "queries.py").write_text(
        "import os\n\n\ndef f():\n    from ..cli import diff\n")
    (pkg / "html.py").write_text("import iochar.cli.common\n")
    assert list(check_layers.python_violations(tmp_path)) == [
        "reports/iochar/db/queries.py:5: imports iochar.cli.diff (library -> cli)",
        "reports/iochar/html.py:1: imports iochar.cli.common (library -> cli)",
        "reports/iochar/junit.py:1: imports iochar.cli.common.escape (library -> cli)",
    ]
