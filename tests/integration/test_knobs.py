"""The site's knobs (issue 41): modules on and off, programs included and excluded,
the ranks whose records are kept, the record limit; from the environment and from a
config file alike. knobs_workload DIR N: 100 bytes to each of N files f<i>.dat
(POSIX), then 3 x 10 bytes to s.dat (STDIO)."""

import contextlib
import io
import os
import sys

import pytest

from iochar.cli import report
from iochar.flags import PARTIAL
from tool import BUILD_OPENMPI, LIB, logs_in, mpiexec, one, run, run_log, workload

pytestmark = pytest.mark.skipif(not LIB.exists(), reason="build/libiochar.so not built")


def knobs(tmp_path, n=3, **env):
    return run_log([workload("knobs_workload"), str(tmp_path), str(n)], tmp_path, env=env)


def report_text(log) -> str:
    """iochar-report's text, in process (this checkout's package)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert report.main([str(log.files[0])]) == 0
    return out.getvalue()


def names(log, mod):
    return sorted(p.rsplit("/", 1)[-1] for p in log.records(mod)["path"])


def test_all_modules_by_default(tmp_path):
    _, log = knobs(tmp_path)
    assert log.modules == ["POSIX", "STDIO"]
    assert "modules_off" not in log.job and "max_records" not in log.job


@pytest.mark.parametrize("env, kept, off", [
    ({"IOCHAR_DISABLE_MODULES": "stdio"}, ["POSIX"], "STDIO"),
    ({"IOCHAR_DISABLE_MODULES": "POSIX,H5D"}, ["STDIO"], "POSIX,H5D"),
    ({"IOCHAR_MODULES": "STDIO"}, ["STDIO"],
     "POSIX,MPIIO,H5F,H5D,NC_FILE,NC_VAR,PNETCDF_FILE,PNETCDF_VAR"),
    ({"IOCHAR_MODULES": "POSIX,STDIO,HDF5", "IOCHAR_DISABLE_MODULES": "STDIO"}, ["POSIX"],
     "STDIO,MPIIO,NC_FILE,NC_VAR,PNETCDF_FILE,PNETCDF_VAR"),
])
def test_modules_on_and_off(tmp_path, env, kept, off):
    p, log = knobs(tmp_path, **env)
    assert log.modules == kept and log.job["modules_off"] == off
    if "POSIX" in kept:
        df = log.records("POSIX")
        assert names(log, "POSIX") == ["f0.dat", "f1.dat", "f2.dat"]
        assert df["POSIX_BYTES_WRITTEN"].tolist() == [100] * 3
        assert df["POSIX_OPENS"].tolist() == [1] * 3
    if "STDIO" in kept:
        s = one(log.records("STDIO"), "/s.dat")
        assert (s["STDIO_WRITES"], s["STDIO_BYTES_WRITTEN"]) == (3, 30)
    assert p.stderr == b""
    rep = report_text(log)
    assert f"modules turned off (IOCHAR_MODULES, IOCHAR_DISABLE_MODULES): {off}" in rep


def test_bad_module_name_is_ignored_with_one_warning(tmp_path):
    p, log = knobs(tmp_path, IOCHAR_MODULES="POSIX,BOGUS")
    assert log.modules == ["POSIX", "STDIO"] and "modules_off" not in log.job
    assert p.stderr.decode() == "iochar: IOCHAR_MODULES=POSIX,BOGUS is not valid; ignored\n"


@pytest.mark.parametrize("env, logged", [
    ({"IOCHAR_APP_EXCLUDE": "^knobs_"}, False),
    ({"IOCHAR_APP_EXCLUDE": "^posix_"}, True),
    ({"IOCHAR_APP_INCLUDE": "^posix_basic$"}, False),
    ({"IOCHAR_APP_INCLUDE": "workload"}, True),
    ({"IOCHAR_APP_EXCLUDE": ".*", "IOCHAR_APP_INCLUDE": "^knobs_workload$"}, True),
    ({"IOCHAR_APP_EXCLUDE": "knobs", "IOCHAR_APP_INCLUDE": "^nothing$"}, False),
])
def test_programs_included_and_excluded(tmp_path, env, logged):
    p = run([workload("knobs_workload"), str(tmp_path), "2"], tmp_path, env=env)
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b""
    assert (tmp_path / "f1.dat").stat().st_size == 100 and (tmp_path / "s.dat").stat().st_size == 30
    assert len(logs_in(tmp_path)) == (1 if logged else 0)
    assert not list(tmp_path.glob(".*.live"))


@pytest.mark.parametrize("pattern, logged", [(r"^writer\.py$", False), (r"^other\.py$", True),
                                             ("^python", False)])
def test_interpreter_matched_by_its_script(tmp_path, pattern, logged):
    script = tmp_path / "writer.py"
    script.write_text("import sys\nwith open(sys.argv[1], 'wb') as f:\n    f.write(b'x' * 1234)\n")
    p = run([sys.executable, "-S", str(script), str(tmp_path / "out.dat")], tmp_path,
            env={"IOCHAR_APP_EXCLUDE": pattern})
    assert p.returncode == 0 and (tmp_path / "out.dat").stat().st_size == 1234
    logs = logs_in(tmp_path)
    assert len(logs) == (1 if logged else 0)
    if logged:
        import iochar
        r = one(iochar.open(logs[0]).records("POSIX"), "/out.dat")
        assert r["POSIX_BYTES_WRITTEN"] == 1234


def test_record_limit_folds_like_the_memory_bound(tmp_path):
    p, log = knobs(tmp_path, n=12, IOCHAR_MAX_RECORDS="5")
    df = log.records("POSIX")
    assert len(df) == 6 and names(log, "POSIX").count("<AGGREGATE>") == 1
    agg = one(df, "<AGGREGATE>")
    assert (agg["POSIX_OPENS"], agg["POSIX_WRITES"], agg["POSIX_BYTES_WRITTEN"]) == (7, 7, 700)
    assert df["POSIX_BYTES_WRITTEN"].sum() == 1200
    assert one(log.records("STDIO"), "/s.dat")["STDIO_BYTES_WRITTEN"] == 30  # 1 of 5: kept
    j = log.job
    assert j["max_records"] == 5 and j["folded_files"] == 7 and j["folded.POSIX"] == 7
    assert j["partial"] & PARTIAL["FOLDED"]
    assert "record limit of 5 per module (IOCHAR_MAX_RECORDS) reached" in j["warnings"]
    assert p.stderr.decode().count("\n") == 1
    sub = tmp_path / "exact"  # as many files as the limit: nothing folded
    sub.mkdir()
    _, log = knobs(sub, n=5, IOCHAR_MAX_RECORDS="5")
    assert "<AGGREGATE>" not in names(log, "POSIX") and not log.job["partial"]


@pytest.mark.parametrize("value", ["-1", "3-1", "a", "1,,x", "0-2-4", "1-x"])
def test_bad_rank_lists_are_ignored(tmp_path, value):
    p, log = knobs(tmp_path, n=1, IOCHAR_RANKS=value)  # one warning, every rank kept
    assert p.stderr.decode() == f"iochar: IOCHAR_RANKS={value} is not valid; ignored\n"
    assert names(log, "POSIX") == ["f0.dat"] and "ranks_kept" not in log.job


def test_every_knob_from_a_config_file(tmp_path):
    conf = tmp_path / "site.conf"
    conf.write_text("IOCHAR_DISABLE_MODULES = stdio   # no STDIO\nIOCHAR_MODULES=POSIX,STDIO\n"
                    "IOCHAR_MAX_RECORDS=2\nIOCHAR_APP_EXCLUDE=^nothing$\n"
                    "IOCHAR_APP_INCLUDE=.\nIOCHAR_RANKS=0-7\nIOCHAR_RANKS_EXCLUDE=9\n")
    out = tmp_path / "out"
    out.mkdir()
    p, log = knobs(out, n=4, IOCHAR_CONFIG=str(conf))
    assert p.stderr.decode().count("\n") == 1  # the record limit's warning, no other
    assert "unknown setting" not in log.job["warnings"]
    assert log.modules == ["POSIX"]
    assert log.job["modules_off"] == "STDIO,MPIIO,H5F,H5D,NC_FILE,NC_VAR,PNETCDF_FILE,PNETCDF_VAR"
    assert names(log, "POSIX") == ["<AGGREGATE>", "f0.dat", "f1.dat"]
    assert "ranks_kept" not in log.job  # rank 0 of 1 is kept: nothing left out
    assert not log.job["partial"] & PARTIAL["RANKS_LEFT_OUT"]
    p = run([workload("knobs_workload"), str(tmp_path), "1"], tmp_path,
            env={"IOCHAR_CONFIG": str(conf), "IOCHAR_APP_INCLUDE": "^x$",
                 "IOCHAR_APP_EXCLUDE": "knobs"})  # the environment wins
    assert p.returncode == 0 and not logs_in(tmp_path)


@pytest.mark.parametrize("env", [{"IOCHAR_RANKS_EXCLUDE": "0"}, {"IOCHAR_RANKS": "1-"},
                                 {"IOCHAR_RANKS": "2-5 7", "IOCHAR_RANKS_EXCLUDE": "6"}])
def test_ranks_serial_process_left_out(tmp_path, env):
    p = run([workload("knobs_workload"), str(tmp_path), "2"], tmp_path, env=env)
    assert p.returncode == 0 and p.stderr == b"" and not logs_in(tmp_path)


OMPI_EXE = workload("mpi_workload", BUILD_OPENMPI)


@pytest.mark.parametrize("env, kept, left, flavor", [
    ({"IOCHAR_RANKS": "0-1,3"}, "0-1,3", [2], "mpich"),
    ({"IOCHAR_RANKS_EXCLUDE": "0"}, "1-3", [0], "mpich"),
    pytest.param({"IOCHAR_RANKS": "1-"}, "1-3", [0], "openmpi", marks=pytest.mark.skipif(
        not os.path.exists(OMPI_EXE), reason="no Open MPI workloads (build-openmpi/)"))])
def test_ranks_kept_in_an_mpi_job(tmp_path, env, kept, left, flavor):
    exe = OMPI_EXE if flavor == "openmpi" else workload("mpi_workload")
    _, log = run_log(mpiexec(4, flavor) + [exe], tmp_path, env=env)  # one library: both MPIs
    j = log.job
    assert j["nprocs"] == 4 and j["ranks_kept"] == kept
    assert j["partial"] & PARTIAL["RANKS_LEFT_OUT"]
    px = names(log, "POSIX")
    ours = sorted(f"posix.{r}.dat" for r in range(4) if r not in left)
    assert [n for n in px if n.startswith("posix.")] == ours
    assert one(log.records("POSIX"), "/posix_shared.dat")["POSIX_BYTES_WRITTEN"] == 3 * 4096
    fpp = {n: b for n, b in zip(log.records("MPIIO")["path"],
                                log.records("MPIIO")["MPIIO_BYTES_WRITTEN"]) if "/fpp." in n}
    assert sorted(fpp.values()) == sorted((r + 1) * 1000 for r in range(4) if r not in left)
    assert set(log.ranks("POSIX")["rank"]) == {r for r in range(4) if r not in left}
    rep = report_text(log)
    assert f"PARTIAL: only the records of ranks {kept} were kept (IOCHAR_RANKS)" in rep
