"""The C include graph: runtime -> nothing; reducer -> runtime; wrappers ->
runtime (and reducer/mpi_wrap.h only); no back edge; only the commands import
from reports/iochar/cli/; inside reports/iochar/ every import runs down the layer
order (scripts/check_layers.py)."""
import importlib.util
import pathlib
import shutil
import subprocess

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


def test_runtime_reducer_and_wrappers_follow_their_layers():
    """No include, call or header's inline call inside runtime/, reducer/ or
    wrappers/ runs up the layer order (the calls from the build's objects:
    scripts/test builds first)."""
    assert list(check_layers.layer_violations(ROOT, ROOT / "build")) == []


def _planted_tree(tmp_path):
    """A copy of runtime/, reducer/ and wrappers/ and of the build's objects."""
    for d in ("runtime", "reducer", "wrappers"):
        (tmp_path / d).mkdir()
        for f in (ROOT / d).glob("*.[ch]"):
            (tmp_path / d / f.name).write_bytes(f.read_bytes())
    build = tmp_path / "build"
    for o in (ROOT / "build").glob("*.p/*.c.o"):
        (build / o.parent.name).mkdir(parents=True, exist_ok=True)
        (build / o.parent.name / o.name).symlink_to(o)
    return build


def test_a_planted_back_include_or_call_fails(tmp_path):
    """An include of a higher file, and calls up hidden behind a macro (the
    objects show them all the same), are each found."""
    build = _planted_tree(tmp_path)
    core = tmp_path / "runtime" / "core.c"
    core.write_text(core.read_text().replace('#include "core.h"', '#include "core.h"\n#include "lifecycle.h"'))
    # warn.c calling the lifecycle (the top) from inside a macro
    warn = tmp_path / "runtime" / "warn.c"
    warn.write_text(warn.read_text() + "void iochar_shutdown(void);\n"
                    "#define QUIET_EXIT() iochar_shutdown()\n"
                    "void iochar_warn_planted(void) { QUIET_EXIT(); }\n")
    planted = build / "libiochar.so.p" / "runtime_warn.c.o"
    planted.unlink()
    subprocess.run(["cc", "-std=c11", "-D_GNU_SOURCE", "-O2", "-c", str(warn), "-o", str(planted)],
                   check=True)
    # the vote step calling the writer (a step above it), in the MPICH part
    vote = tmp_path / "planted_vote.c"
    vote.write_text("int red_write_log(void);\nint red_vote_planted(void) { return red_write_log(); }\n")
    planted = build / "libiochar_mpi_mpich.a.p" / "reducer_vote.c.o"
    planted.unlink()
    subprocess.run(["cc", "-c", str(vote), "-o", str(planted)], check=True)
    assert list(check_layers.layer_violations(tmp_path, build)) == [
        'runtime/core.c: #include "lifecycle.h" runs up the layers (core: floor 1, lifecycle: floor 13)',
        "reducer/vote.c: uses red_write_log of reducer/write.c, which runs up the layers "
        "(vote: floor 2, write: floor 4)",
        "runtime/warn.c: uses iochar_shutdown of runtime/lifecycle.c, which runs up the layers "
        "(warn: floor 2, lifecycle: floor 13)",
    ]


def _relink(obj, source, tmp_path):
    """obj (a symlink into the build) replaced by itself plus source compiled."""
    extra = tmp_path / (source.stem + ".o")
    subprocess.run(["cc", "-c", str(source), "-o", str(extra)], check=True)
    orig = obj.resolve()
    obj.unlink()
    subprocess.run(["ld", "-r", str(orig), str(extra), "-o", str(obj)], check=True)


def test_a_planted_inline_call_up_from_a_header_fails(tmp_path):
    """A header's inline function is its header's code wherever it is expanded:
    a call or a global of a higher file from it is found (a name in a comment,
    a string, a member or a declaration is not a use)."""
    build = _planted_tree(tmp_path)
    core = tmp_path / "runtime" / "core.h"
    core.write_text(core.read_text().replace("#pragma GCC visibility pop", """\
void iochar_shutdown(void);
/* iochar_flush_all() in a comment */
static inline void iochar_planted_later(void);
static inline __attribute__((always_inline)) void iochar_planted(iochar_job *j) {
  if (j->log_pid) /* iochar_abort_log(1) */
    iochar_shutdown();
  (void)"iochar_exec_prepare()";
}
#pragma GCC visibility pop""", 1))
    state = tmp_path / "runtime" / "rw_state.h"
    state.write_text(state.read_text().replace("#pragma GCC visibility pop", """\
extern int iochar_observing;
static inline int iochar_planted_peek(void) { return iochar_observing; }
#pragma GCC visibility pop""", 1))
    mpiio = tmp_path / "wrappers" / "mpiio_internal.h"  # the private header is mpiio.c's
    mpiio.write_text(mpiio.read_text().replace("#endif", """\
extern const iochar_module iochar_mod_nc_file;
static inline const char *mpiio_planted(void) { return iochar_mod_nc_file.name; }
#endif"""))
    assert list(check_layers.layer_violations(tmp_path, build)) == [
        "runtime/core.h: iochar_planted uses iochar_shutdown of runtime/lifecycle.c, which runs up "
        "the layers (core: floor 1, lifecycle: floor 13)",
        "runtime/rw_state.h: iochar_planted_peek uses iochar_observing of runtime/observe.c, which "
        "runs up the layers (rw_state.h: floor 5, observe: floor 6)",
        "wrappers/mpiio_internal.h: mpiio_planted uses iochar_mod_nc_file of wrappers/netcdf.c, "
        "which runs up the layers (mpiio: floor 1, netcdf: floor 3)",
    ]


def test_wrappers_follow_their_layers(tmp_path):
    """wrappers/ has a layer order too: an include of a higher wrapper file, and
    the two MPI-IO files calling each other (one MPI's part), are found; a
    call of an interposed name (fstat: the C library's, our wrapper only
    stands in front of it) is not a tie between files."""
    build = _planted_tree(tmp_path)
    posix = tmp_path / "wrappers" / "posix.c"
    posix.write_text(posix.read_text().replace('#include "posix_internal.h"',
                                               '#include "ncfamily.h"\n#include "posix_internal.h"'))
    below = tmp_path / "planted_req.c"
    below.write_text("int mpiio_req_planted(void) { return 1; }\n")
    above = tmp_path / "planted_open.c"
    above.write_text("int mpiio_req_planted(void);\nint mpiio_open_planted(void) { return mpiio_req_planted(); }\n")
    part = build / "libiochar_mpi_mpich.a.p"
    _relink(part / "wrappers_mpiio_req.c.o", below, tmp_path)
    _relink(part / "wrappers_mpiio.c.o", above, tmp_path)
    assert "fstat" in check_layers.interposed(tmp_path)
    assert "MPI_File_open" in check_layers.interposed(tmp_path)
    assert list(check_layers.layer_violations(tmp_path, build)) == [
        'wrappers/posix.c: #include "ncfamily.h" runs up the layers (posix: floor 1, ncfamily: floor 2)',
        "wrappers/mpiio.c: uses mpiio_req_planted of wrappers/mpiio_req.c, which runs up the layers "
        "(mpiio: floor 1, mpiio_req: floor 2)",
    ]


def test_a_file_outside_the_layer_order_fails(tmp_path):
    build = _planted_tree(tmp_path)
    (tmp_path / "runtime" / "stray.c").write_text('#include "core.h"\n')
    (build / "libiochar.so.p" / "runtime_stray.c.o").symlink_to(
        ROOT / "build" / "libiochar.so.p" / "runtime_layout.c.o")
    assert list(check_layers.layer_violations(tmp_path, build)) == [
        "runtime/stray.c: not in the layer order (scripts/check_layers.py RUNTIME_LAYERS)"]
# ---- the layer order inside reports/iochar/ (PY_LAYERS) ----------------------------

def test_package_follows_its_layer_order():
    assert list(check_layers.python_layer_violations(ROOT)) == []


def _package_copy(tmp_path):
    """reports/ with the package's sources and pyproject.toml, to plant imports in."""
    dest = tmp_path / "reports"
    shutil.copytree(ROOT / "reports" / "iochar", dest / "iochar",
                    ignore=shutil.ignore_patterns("__pycache__", "*.bin"))
    shutil.copy(ROOT / "reports" / "pyproject.toml", dest / "pyproject.toml")
    return dest / "iochar"


def test_planted_back_imports_fail(tmp_path):
    pkg = _package_copy(tmp_path)
    assert list(check_layers.python_layer_violations(tmp_path)) == []
    with open(pkg / "logformat.py", "a") as f:  # the floor importing the top
        f.write("\nfrom . import log  # noqa\n")
    with open(pkg / "merge.py", "a") as f:  # hidden in a function
        f.write("\n\ndef _later():\n    from .log import Log\n    return Log\n")
    with open(pkg / "codec.py", "a") as f:  # another module's private name
        f.write("\nfrom .logformat import _struct  # noqa\n")
    with open(pkg / "advice" / "base.py", "a") as f:  # a loop inside a subpackage
        f.write("\nfrom .small_io import small_counts  # noqa\n")
    (pkg / "newmod.py").write_text("x = 1\n")  # not placed in the order
    with open(pkg / "writer.py", "a") as f:  # a private name through the module
        f.write("\nfrom . import summary as _S  # noqa\n_x = _S._hidden\n")
    lines = len((ROOT / "reports" / "iochar" / "logformat.py").read_text().splitlines())
    mlines = len((ROOT / "reports" / "iochar" / "merge.py").read_text().splitlines())
    clines = len((ROOT / "reports" / "iochar" / "codec.py").read_text().splitlines())
    wlines = len((ROOT / "reports" / "iochar" / "writer.py").read_text().splitlines())
    assert list(check_layers.python_layer_violations(tmp_path)) == [
        f"reports/iochar/codec.py:{clines + 2}: imports _struct from logformat.py (a private name)",
        f"reports/iochar/logformat.py:{lines + 2}: imports log (runs back up: logformat -> log)",
        f"reports/iochar/merge.py:{mlines + 4}: imports log (runs back up: merge -> log)",
        "reports/iochar/newmod.py: newmod is not in the layer order (scripts/check_layers.py PY_LAYERS)",
        f"reports/iochar/writer.py:{wlines + 3}: uses _hidden of summary.py (a private name)",
        "import loop: reports/iochar/advice/base.py -> reports/iochar/advice/small_io.py"
        " -> reports/iochar/advice/base.py",
    ]


def test_contributing_shows_the_order_verbatim():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    block = "\n".join("    " + ln for ln in check_layers.PY_LAYERS.strip("\n").splitlines())
    assert block in text
