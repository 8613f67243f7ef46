"""Call sites in stripped code (reports/iochar/callsites.py): a stripped library's
frames are named by the nearest exported function with the library's name
(libfoo.so!foo_write+0x1c), and the C runtime's start-up frames are never the
site, whatever the path of the library they are in."""

import shutil
import subprocess

import numpy as np
import pytest

from iochar import callsites
from tool import LIB, run_log

LIBFOO = r"""
#include <fcntl.h>
#include <unistd.h>
static char buf[4096];
__attribute__((noinline)) static int write_block(int fd, int n) {
  int w = 0;
  for (int i = 0; i < n; i++) w += write(fd, buf, sizeof buf) == sizeof buf;
  return w;
}
int foo_write(const char *path, int n) {
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) return -1;
  int w = write_block(fd, n);
  close(fd);
  return w;
}
"""
PROG = r"""
int foo_write(const char *path, int n);
int main(int argc, char **argv) { return foo_write(argv[1], 5) == 5 ? 0 : 1; }
"""


@pytest.mark.skipif(not LIB.exists() or shutil.which("cc") is None
                    or shutil.which("strip") is None, reason="needs cc, strip, build/")
def test_stripped_library_named_by_nearest_export(tmp_path):
    pytest.importorskip("elftools")
    (tmp_path / "foo.c").write_text(LIBFOO)
    (tmp_path / "main.c").write_text(PROG)
    lib, prog = tmp_path / "libfoo.so", tmp_path / "prog"
    subprocess.run(["cc", "-O1", "-g", "-fPIC", "-shared", "-o", str(lib),
                    str(tmp_path / "foo.c")], check=True)
    subprocess.run(["strip", "--strip-all", str(lib)], check=True)
    subprocess.run(["cc", "-O1", "-o", str(prog), str(tmp_path / "main.c"), f"-L{tmp_path}",
                    "-lfoo", f"-Wl,-rpath,{tmp_path}"], check=True)
    _, log = run_log([str(prog), str(tmp_path / "out.dat")], tmp_path,
                     env={"IOCHAR_CALLSITES": "1"})
    tab = callsites.table(callsites.from_log(log))
    (w,) = [s for s in tab if s["module"] == "POSIX" and s["writes"]]
    assert (w["writes"], w["bytes_written"]) == (5, 5 * 4096)
    assert w["site"].startswith("libfoo.so!foo_write+0x") and w["function"] == "foo_write"
    meta = [s for s in tab if s["module"] == "POSIX" and s["meta"]]
    assert sum(s["meta"] for s in meta) == 2  # open and close, both in foo_write
    assert all(s["site"].startswith("libfoo.so!foo_write+0x") for s in meta)
    for s in tab:
        assert "__libc_start" not in s["site"] and "_start" not in s["site"], s


def test_start_frames_never_the_site(monkeypatch):
    """An unnamed application frame beats named start-up frames in a libc that
    is not under a system prefix (a Spack or Nix glibc)."""
    e = np.zeros(1, dtype=callsites.ENTRY_DTYPE)
    e["hash"], e["nframes"], e["nranks"], e["writes"] = 7, 4, 1, 3
    objs = {1: "/lib/x86_64-linux-gnu/libc.so.6", 2: "/opt/app/prog",
            3: "/nix/store/glibc/lib/libc.so.6"}
    e["frames"][0, :4] = [(1, 0x100), (2, 0x200), (3, 0x300), (2, 0x50)]
    names = {(1, 0x100): "write", (3, 0x300): "__libc_start_call_main", (2, 0x50): "_start"}

    def resolve(self, frames):
        for k, a in frames:
            fn = names.get((k, a))
            self.cache[(k, a)] = {"function": fn, "file": None, "line": None} if fn else None

    monkeypatch.setattr(callsites.Symbolizer, "resolve", resolve)
    obs = callsites.Observed([("CALLSITE", "POSIX", 1, e.tobytes())])
    obs.objects = {k: {"path": p, "base": 0, "build_id": ""} for k, p in objs.items()}
    (site,) = callsites.table(obs)
    assert site["site"] == "prog+0x200"
    assert site["stack"][2] == "__libc_start_call_main in libc.so.6"
