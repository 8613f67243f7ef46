"""Install routes: `meson install` (DESTDIR) puts the preload library, iochar.pc and
the report tools in the prefix and the installed library works; a wheel built from
reports/ (no network) gives working report tools without the C side."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tool import BUILD, LIB, ROOT, run_log, workload

pytestmark = pytest.mark.skipif(not LIB.exists(), reason="build/libiochar.so not built")


def a_log(tmp_path, lib=LIB):
    d = tmp_path / "job"
    d.mkdir(exist_ok=True)
    _, log = run_log([workload("posix_basic"), str(d / "basic.dat")], d, lib=lib)
    posix = log.records("POSIX")
    (row,) = posix[posix["path"].str.endswith("/basic.dat")].itertuples()
    assert (row.POSIX_WRITES, row.POSIX_READS) == (100, 100)
    (path,) = d.glob("*.iochar")
    return path


def meson_install(dest, *tags):
    cmd = ["meson", "install", "-C", str(BUILD), "--no-rebuild", "--destdir", str(dest)]
    if tags:
        cmd += ["--tags", ",".join(tags)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    return sorted(q for q in dest.rglob("*") if q.is_file())


def prefix_of():
    out = subprocess.run(["meson", "introspect", "--buildoptions", str(BUILD)],
                         capture_output=True, text=True, check=True).stdout
    return next(o["value"] for o in json.loads(out) if o["name"] == "prefix")


@pytest.mark.skipif(shutil.which("meson") is None or shutil.which("pkg-config") is None
                    or not (BUILD / "build.ninja").exists(), reason="needs meson, pkg-config")
def test_meson_install_destdir_library_and_pc(tmp_path):
    dest = tmp_path / "dest"
    files = meson_install(dest, "runtime", "devel")
    names = sorted(f.name for f in files)
    assert names == ["iochar.pc", "libiochar.so"], files
    (pc,) = [f for f in files if f.name == "iochar.pc"]
    text = pc.read_text()
    assert "Name: iochar" in text and "preload=${libdir}/libiochar.so" in text
    prefix = prefix_of()
    env = dict(os.environ, PKG_CONFIG_PATH=str(pc.parent))
    preload = subprocess.run(["pkg-config", f"--define-variable=prefix={dest}{prefix}",
                              "--variable=preload", "iochar"], env=env, capture_output=True,
                             text=True, check=True).stdout.strip()
    (lib,) = [f for f in files if f.name == "libiochar.so"]
    assert Path(preload) == lib
    a_log(tmp_path, lib=lib)  # the installed library records


@pytest.mark.skipif(shutil.which("meson") is None or not (BUILD / "build.ninja").exists()
                    or importlib.util.find_spec("wheel") is None, reason="needs meson, wheel")
def test_meson_install_tools(tmp_path):
    dest = tmp_path / "dest"
    files = meson_install(dest, "tools")
    bins = sorted(f.name for f in files if f.parent.name == "bin")
    assert {"iochar-report", "iochar-parser", "iochar-diff"} <= set(bins), bins
    (site,) = [f.parent.parent for f in files if f.match("iochar/__init__.py")]
    log = a_log(tmp_path)
    out = subprocess.run([str(dest / prefix_of().lstrip("/") / "bin" / "iochar-parser"),
                          str(log)], env=dict(os.environ, PYTHONPATH=str(site)),
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert [ln for ln in out.stdout.splitlines() if " POSIX_WRITES 100 " in ln]


@pytest.mark.skipif(importlib.util.find_spec("wheel") is None, reason="needs wheel")
def test_wheel_gives_report_tools_without_c_side(tmp_path):
    src = tmp_path / "reports"
    shutil.copytree(ROOT / "reports", src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    subprocess.run(pip + ["wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
                          "-w", str(tmp_path / "dist"), str(src)], check=True,
                   capture_output=True)
    (whl,) = (tmp_path / "dist").glob("iochar-*.whl")
    target = tmp_path / "t"
    subprocess.run(pip + ["install", "--no-deps", "--no-index", "-q", "--target", str(target),
                          str(whl)], check=True, capture_output=True)
    log = a_log(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "PYTHONPATH")}
    env["PYTHONPATH"] = str(target)
    # the report tools run from the wheel's copy, not from this checkout
    rep = subprocess.run([str(target / "bin" / "iochar-report"), str(log), "--json"],
                         env=env, cwd=tmp_path, capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    posix = json.loads(rep.stdout)["modules"]["POSIX"]
    assert (posix["writes"], posix["bytes_written"]) == (100, 409600)
    page = tmp_path / "r.html"  # the page's template is package data of the wheel
    rep = subprocess.run([str(target / "bin" / "iochar-report"), str(log), "--html", str(page)],
                         env=env, cwd=tmp_path, capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    assert (target / "iochar" / "templates" / "report.html.j2").is_file()
    assert page.read_text().startswith("<!DOCTYPE html>") and "<h2>Modules</h2>" in page.read_text()
    h = subprocess.run([str(target / "bin" / "iochar-diff"), "--help"], env=env,
                       cwd=tmp_path, capture_output=True, text=True)
    assert h.returncode == 0 and "usage" in h.stdout.lower(), h.stderr
    assert (target / "iochar" / "cli" / "report.py").is_file()
