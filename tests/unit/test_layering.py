"""The C include graph: runtime -> nothing; reducer -> runtime; wrappers ->
runtime (and reducer/mpi_wrap.h only); no back edge (scripts/check_layers.py)."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("check_layers", ROOT / "scripts" / "check_layers.py")
check_layers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_layers)


def test_tree_has_no_back_edge():
    assert list(check_layers.violations(ROOT)) == []


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
