"""The live view's bulk walk (reports/iochar/livebulk.py, Candidates) against the
record-by-record one (livebulk.BULK = False) on a real live file: the same rows, names and
numbers; on damaged copies (an unknown module, a truncated name without its mark, a name
or a record running past the published end, a name's end wiped) the same one-line error.
And the numbers against the log recovered from the same file."""

import os
import shutil
import signal
import struct
import subprocess
import sys

import numpy as np
import pytest

from iochar import live, livebulk, liveview
from iochar.logformat import LogError
from tool import LIB

PROGRAM = r"""
import os, signal, sys
d = sys.argv[1]
for i in range(300):  # names of 2 to 125 bytes; 0 to 4 bytes written
    with open(os.path.join(d, f"f{i}" + "x" * (i % 7 * 20)), "w") as f:
        f.write("x" * (i % 5))
sub = os.path.join(d, "d" * 200, "e" * 200, "g" * 200)  # a name of more than 512 bytes
os.makedirs(sub)
with open(os.path.join(sub, "long"), "w") as f:
    f.write("y")
os.chdir(d)
for k in range(18):  # names past the path limit: recorded truncated, with their mark
    os.mkdir("q" * 250)
    os.chdir("q" * 250)
for k in range(2):
    with open(f"t{k}", "w") as f:
        f.write("z")
print("ready", flush=True)
os.kill(os.getpid(), signal.SIGSTOP)
"""


@pytest.fixture(scope="module")
def livefile(tmp_path_factory):
    """The live file of PROGRAM's process (killed once it stopped: its file stays)."""
    tmp = tmp_path_factory.mktemp("bulk")
    data, ld = tmp / "data", tmp / "live"
    data.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("IOCHAR_")}
    env.update(LD_PRELOAD=str(LIB), IOCHAR_LOGDIR=str(data), IOCHAR_LIVEDIR=str(ld))
    p = subprocess.Popen([sys.executable, "-c", PROGRAM, str(data)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert p.stdout.readline().startswith(b"ready"), p.stderr.read()
        (lv,) = list(ld.rglob(".*.live"))
        keep = tmp / "kept.live"
        shutil.copyfile(lv, keep)
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    return keep


def read(path, bulk, monkeypatch):
    """(the LiveFile after one read, its sample, _step's calls)."""
    monkeypatch.setattr(livebulk, "BULK", bulk)
    steps = {"n": 0}
    real = liveview.LiveFile._step

    def step(self, ctx, off):
        steps["n"] += 1
        return real(self, ctx, off)

    monkeypatch.setattr(liveview.LiveFile, "_step", step)
    lf = liveview.LiveFile(os.open(path, os.O_RDONLY), str(path))
    try:
        return lf, lf.read(), steps["n"]
    finally:
        lf.close()


@pytest.mark.parametrize("window", [liveview.WINDOW, 1 << 16, 4096])
def test_bulk_walk_gives_the_rows_of_the_record_by_record_walk(livefile, monkeypatch, window):
    """Read in windows of the file too: many (records across their edges), and smaller
    than a record with a name at the path limit (its window grows)."""
    monkeypatch.setattr(liveview, "WINDOW", window)
    a, sa, na = read(livefile, True, monkeypatch)
    monkeypatch.setattr(liveview, "WINDOW", 1 << 30)
    b, sb, nb = read(livefile, False, monkeypatch)
    assert len(sa.paths) == len(sb.paths) > 600
    if window > livebulk.BULK_MIN:  # the bulk walk took all but a few rows (each module's
        # first, a record at a window's edge...); in smaller windows, none
        assert na < 20 + 2 * (a.h["arena_used"] // window + 1) < nb
    for k in ("r_off", "r_mod", "r_entry", "n_len", "ids", "made", "full"):
        assert (getattr(a, k) == getattr(b, k)).all(), k
    assert list(sa.paths) == list(sb.paths) and list(sa.modules) == list(sb.modules)
    assert (sa.ints == sb.ints).all() and (sa.floats == sb.floats).all()
    long = [p for p in sa.paths if len(p) > 512]
    assert len([p for p in long if p.endswith("/long")]) == 2  # its entry and its record
    assert sum(len(p) == 4095 for p in sa.paths) == 4  # the truncated names, mark stripped


def test_numbers_are_the_recovered_logs(livefile, tmp_path, monkeypatch):
    """Every row of the live view against the log recovered from the same file: the
    entries made full count nothing (their records count them)."""
    _, s, _ = read(livefile, True, monkeypatch)
    copy = tmp_path / livefile.name
    shutil.copyfile(livefile, copy)
    import iochar
    lg = iochar.open(live.recover(copy, tmp_path / "r.iochar"))
    px = lg.records("POSIX")
    mine = s.ints[np.asarray([m == "POSIX" for m in s.modules])].sum(axis=0)
    got = dict(zip(liveview.INTS, (int(x) for x in mine)))
    assert got["bytes_written"] == px["POSIX_BYTES_WRITTEN"].sum() == \
        sum(i % 5 for i in range(300)) + 1 + 2
    assert (got["writes"], got["opens"], got["stats"]) == \
        (px["POSIX_WRITES"].sum(), px["POSIX_OPENS"].sum(), px["POSIX_STATS"].sum())


def damaged(src, dst, patch):
    shutil.copyfile(src, dst)
    buf = bytearray(dst.read_bytes())
    patch(buf)
    dst.write_bytes(bytes(buf))
    return dst


@pytest.mark.parametrize("window", [liveview.WINDOW, 1 << 16])
def test_damaged_files_give_the_same_one_line_error(livefile, tmp_path, monkeypatch, window):
    lf, s, _ = read(livefile, False, monkeypatch)
    monkeypatch.setattr(liveview, "WINDOW", window)
    h = lf.h
    arena = np.flatnonzero(lf.r_off >= h["arena_off"])
    mid = int(lf.r_off[arena[len(arena) // 2]])  # a record in the middle
    last = int(lf.r_off[-1])
    assert lf.mods[int(lf.r_mod[arena[-1]])].name == "POSIX"
    trunc = [int(lf.r_off[r]) for r in arena if lf.n_len[r] == 4095]
    plain = [int(lf.r_off[r]) for r in arena if 0 < lf.n_len[r] < 100 and not lf.r_entry[r]]
    m = lf.mods[int(lf.r_mod[arena[-1]])]
    head = h["rec_size"] + 8 * (m.n_int + m.n_flt)  # a POSIX record's bytes before its name
    used_at = 136  # the header's arena used (docs/log-format.md, "Live files")

    def used(n):
        return lambda b: struct.pack_into("<Q", b, used_at, n - h["arena_off"])

    def name_end(off):  # a record's name without its NUL: it runs into the next record
        def patch(b):
            z = b.index(b"\0", off + head)
            b[z] = ord("x")
        return patch

    cases = {
        "unknown module": (lambda b: struct.pack_into("<H", b, mid + h["rec_module_off"], 999),
                           "unknown module 999"),
        "truncated without mark": (lambda b: struct.pack_into(
            "<H", b, plain[5] + h["rec_flags_off"],
            struct.unpack_from("<H", b, plain[5] + h["rec_flags_off"])[0] | 1),
            "truncated name without its mark"),
        "mark wiped": (lambda b: b.__setitem__(slice(b.index(b"\0TRUNCATED", trunc[0]) + 1,
                                                     b.index(b"\0TRUNCATED", trunc[0]) + 2), b"X"),
                       "truncated name without its mark"),
        "record past the end": (used(last + 20), "runs past the published end"),
        "name past the end": (used(plain[-1] + head + 3), "name runs past"),
        "name's end wiped": (name_end(plain[10]), None),
    }
    for what, (patch, msg) in cases.items():
        bad = damaged(livefile, tmp_path / f"{what.replace(' ', '_')}.live", patch)
        errs = []
        for bulk in (True, False):
            try:
                _, sb, _ = read(bad, bulk, monkeypatch)
                errs.append(("ok", len(sb.paths), sb.ints.sum(), list(sb.paths)))
            except LogError as e:
                errs.append(("error", str(e)))
        assert errs[0] == errs[1], what
        if msg is not None:
            assert errs[0][0] == "error" and msg in errs[0][1], (what, errs[0])
        if errs[0][0] == "error":
            assert str(bad) in errs[0][1] and "\n" not in errs[0][1]


@pytest.mark.parametrize("window", [liveview.WINDOW, 1 << 16])
def test_a_file_read_again_after_more_records(livefile, tmp_path, monkeypatch, window):
    """The first read sees half the records (the header's `arena used` cut at a record's
    start), the second all: the rows added at the second read are the same both ways (an
    entry walked at the first read whose record comes later among them)."""
    lf, _, _ = read(livefile, False, monkeypatch)
    monkeypatch.setattr(liveview, "WINDOW", window)
    arena = np.flatnonzero(lf.r_off >= lf.h["arena_off"])
    cut = int(lf.r_off[arena[len(arena) // 2 + 1]])
    got = []
    for bulk in (True, False):
        monkeypatch.setattr(livebulk, "BULK", bulk)
        f = tmp_path / f"again{bulk}.live"
        shutil.copyfile(livefile, f)
        full = f.read_bytes()[136:144]
        with open(f, "r+b") as w:
            w.seek(136)
            w.write(struct.pack("<Q", cut - lf.h["arena_off"]))
        one = liveview.LiveFile(os.open(f, os.O_RDONLY), str(f))
        first = one.read()
        with open(f, "r+b") as w:
            w.seek(136)
            w.write(full)
        second = one.read()
        one.close()
        got.append((len(first.paths), list(second.paths), second.ints.tolist(),
                    one.r_off.tolist(), one.made.tolist(), one.full.tolist()))
    assert got[0] == got[1]
    assert got[0][0] < len(got[0][1]) == len(lf.r_off)
