"""The runtime leaves out what is not the job's I/O: iochar's own tools never
trace themselves (runtime/config.c), and a Python job's interpreter tree and
byte-code are not recorded while its data files are; IOCHAR_EXCLUDE_PATTERN
excludes more by regular expression (runtime/exclude.c)."""

import os
import stat
import sys

import pytest

import iochar
from tool import LIB, ROOT, logs_in, one, run, run_log, workload

pytestmark = pytest.mark.skipif(not LIB.exists(), reason="build/libiochar.so not built")

PYENV = {"PYTHONPATH": str(ROOT / "reports"), "PYTHONDONTWRITEBYTECODE": ""}


def a_log(tmp_path):
    d = tmp_path / "job"
    d.mkdir()
    run_log([workload("posix_basic"), str(d / "basic.dat")], d)
    (log,) = logs_in(d)
    return log


def test_tools_never_trace_themselves(tmp_path):
    log = a_log(tmp_path)
    out = tmp_path / "logs"
    out.mkdir()
    # A console script as pip writes it (the kernel runs `python iochar-... args`);
    # it also starts a child, which inherits the tool's quiet.
    script = tmp_path / "bin" / "iochar-selfcheck"
    script.parent.mkdir()
    child = [sys.executable, "-c", f"open({str(log)!r}, 'rb').read()"]
    script.write_text(f"#!{sys.executable}\nimport subprocess, sys\n"
                      "from iochar.cli.parser import main\n"
                      f"subprocess.run({child!r}, check=True)\nsys.exit(main())\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    py = sys.executable
    for cmd in ([py, "-m", "iochar.cli.report", str(log)],
                [py, "-X", "utf8", "-B", "-m", "iochar.cli.parser", str(log)],
                [py, "-Bm", "iochar.cli.report", "--json", str(log)],
                [str(script), str(log)]):
        p = run(cmd, out, env=PYENV)
        assert p.returncode == 0, (cmd, p.stderr.decode(errors="replace"))
        assert b"iochar:" not in p.stderr, p.stderr
        assert logs_in(out) == [], cmd
    # The same reads from a program that is not a tool are recorded.
    p = run([py, "-c", f"open({str(log)!r}, 'rb').read()"], out, env=PYENV)
    assert p.returncode == 0
    (own,) = logs_in(out)
    assert one(iochar.open(str(own)).records("POSIX"), log.name)["POSIX_BYTES_READ"] == \
        log.stat().st_size


JOB = """
import json, email.mime.text, mymod
with open("data.bin", "wb") as f:
    f.write(b"x" * 1000)
with open("scratch.tmp", "wb") as f:
    f.write(b"y" * 10)
"""


def python_job(tmp_path, **env):
    d = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
    d.mkdir()
    (d / "job.py").write_text(JOB)
    (d / "mymod.py").write_text("VALUE = 1\n")
    e = {"PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": ""}
    e.update(env)
    p, log = run_log([sys.executable, "job.py"], d, env=e)
    assert (d / "__pycache__").is_dir()  # the job wrote byte-code: it is not recorded
    return d, log.records("POSIX")


def prefixes():
    return tuple(os.path.realpath(p) + "/lib" for p in {sys.prefix, sys.base_prefix})


def test_python_job_data_files_lead_the_report(tmp_path):
    d, posix = python_job(tmp_path)
    assert one(posix, "/data.bin")["POSIX_BYTES_WRITTEN"] == 1000
    assert one(posix, "/scratch.tmp")["POSIX_BYTES_WRITTEN"] == 10
    paths = list(posix["path"])
    assert not [p for p in paths if p.endswith((".pyc", ".pyo")) or "/__pycache__" in p]
    assert not [p for p in paths if p.startswith(prefixes())], paths
    assert str(d / "mymod.py") in paths  # the job's own code is the job's
    # The exclusions are the reason: with the interpreter's tree included back,
    # its modules (.py, and json's C part when it is a .so) are there.
    _, posix = python_job(tmp_path, IOCHAR_INCLUDE=":".join(
        os.path.realpath(p) for p in {sys.prefix, sys.base_prefix}))
    assert [p for p in posix["path"] if p.startswith(prefixes()) and p.endswith("/json/__init__.py")]


def test_exclude_pattern(tmp_path):
    _, posix = python_job(tmp_path, IOCHAR_EXCLUDE_PATTERN=r"\.tmp$|/nothing/")
    assert one(posix, "/data.bin")["POSIX_BYTES_WRITTEN"] == 1000
    assert not posix["path"].str.endswith("/scratch.tmp").any()
    assert not posix["path"].str.endswith(".pyc").any()  # the default still applies


def test_bad_pattern_one_line_program_unchanged(tmp_path):
    d = tmp_path / "bad"
    d.mkdir()
    p = run([workload("posix_basic"), str(d / "b.dat")], d, env={"IOCHAR_EXCLUDE_PATTERN": "a(b"})
    bare = run([workload("posix_basic"), str(d / "b.dat")], d, preload=False)
    assert p.returncode == bare.returncode == 0 and p.stdout == bare.stdout
    lines = [ln for ln in p.stderr.decode().splitlines() if ln.startswith("iochar:")]
    assert len(lines) == 1 and "IOCHAR_EXCLUDE_PATTERN" in lines[0], lines
