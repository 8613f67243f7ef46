"""File names are bytes: a real program under the tool creates files named with ESC
sequences, a newline and bytes that are not UTF-8; every output shows them escaped
(`\\x1b`, `\\n`, `\\xff`) and never raw, and the DataFrame keeps the exact bytes."""

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import iochar
from iochar.cli import diff, parser, report
from iochar.safetext import escape
from tool import LIB, ROOT, logs_in, run, workload

pytestmark = pytest.mark.skipif(not LIB.exists(), reason="build/libiochar.so not built")

NAMES = {b"esc\x1b[31mred\x1b[0m.dat": "esc\\x1b[31mred\\x1b[0m.dat",
         b"new\nline.dat": "new\\nline.dat",
         b"bad\xff\xfe.dat": "bad\\xff\\xfe.dat"}
RAW = ["\x1b", "new\nline"]  # what must never reach an output


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """One log per name: tests/posix_basic writes and reads 100 x 4 KiB of it."""
    out = []
    for i, (name, shown) in enumerate(NAMES.items()):
        d = tmp_path_factory.mktemp(f"names{i}")
        target = os.fsencode(d) + b"/" + name
        p = run([workload("posix_basic"), target], d)
        assert p.returncode == 0, p.stderr
        (log,) = logs_in(d)
        out.append((target, shown, log))
    return out


def call(main, argv):
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        code = main([str(a) for a in argv])
    return code, o.getvalue(), e.getvalue()


def clean(text: str):
    """No raw control character but newlines, no undecodable byte, no raw name."""
    assert not any(0xDC80 <= ord(c) <= 0xDCFF for c in text)
    assert not any(not c.isprintable() and c != "\n" for c in text)
    for raw in RAW:
        assert raw not in text


def test_records_path_round_trips_the_bytes(logs):
    for target, _, log in logs:
        df = iochar.open(log).records("POSIX")
        assert target in [os.fsencode(p) for p in df["path"]]


def test_report_text_json_html(logs, tmp_path):
    for _, shown, log in logs:
        code, out, err = call(report.main, [log])
        assert code == 0 and err == ""
        clean(out)
        assert shown in out  # the top-files line
        code, out, _ = call(report.main, [log, "--json"])
        assert code == 0 and "\\u001b" not in out and "\\udc" not in out
        paths = [f["path"] for f in json.loads(out)["modules"]["POSIX"]["top_files"]]
        assert any(p.endswith(shown) for p in paths), paths
        page = tmp_path / "r.html"
        code, _, _ = call(report.main, [log, "--html", page])
        body = page.read_bytes()
        assert code == 0 and b"\x1b" not in body and b"new\nline" not in body
        assert shown.encode() in body
        body.decode("utf-8")  # valid UTF-8: no raw 0xff


def test_parser_lines_cannot_be_forged(logs):
    for _, shown, log in logs:
        code, out, _ = call(parser.main, [log])
        assert code == 0
        clean(out)
        rows = [line for line in out.split("\n") if line and not line.startswith("#")]
        assert rows and all(re.match(r"[A-Z_0-9]+ -?\d+ \d+ \w+ \S+ \S", r) for r in rows)
        assert sum(r.endswith(shown) for r in rows) > 10


def test_diff_header_escapes_log_names(logs, tmp_path):
    (_, _, a), (_, _, b), _ = logs
    odd = tmp_path / os.fsdecode(b"run\x1b[1m\nX\xff")
    odd.mkdir()
    shutil.copy(a, odd / "a.iochar")
    shutil.copy(b, odd / "b.iochar")
    code, out, _ = call(diff.main, [odd / "a.iochar", odd / "b.iochar"])
    assert code in (0, 1)
    clean(out)
    assert out.startswith("iochar-diff: " + escape(str(odd / "a.iochar")))
    assert "run\\x1b[1m\\nX\\xff/a.iochar" in out


def test_console_script_bytes(logs):
    """Through a real process and pipe: the bytes written are the escaped text."""
    target, shown, log = logs[0]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "reports"))
    p = subprocess.run([sys.executable, "-m", "iochar.cli.parser", str(log)], env=env,
                       capture_output=True, check=True)
    assert b"\x1b" not in p.stdout and shown.encode() in p.stdout


def test_truncated_names_and_warnings_are_shown(tmp_path):
    """A name the runtime cut at its path limit (NAMES marker) shows as the prefix and
    '[truncated]'; JOB warnings are listed, escaped (tests/corpus/names.iochar)."""
    log = str(ROOT / "tests" / "corpus" / "names.iochar")
    lg = iochar.open(log)
    (cut,) = lg.truncated_paths()
    assert cut.endswith("d" * 100) and "\0" not in cut
    _, out, _ = call(report.main, [log])
    clean(out)
    assert "d... [truncated]" in out and "WARNING: iochar: \\x1b[2Jwarning one" in out
    assert "WARNING: iochar: warning two" in out
    _, out, _ = call(parser.main, [log])
    assert out.count("d... [truncated]\n") == len(lg.schema("POSIX"))
    _, out, _ = call(report.main, [log, "--json"])
    rep = json.loads(out)
    assert rep["job"]["warnings"] == ["iochar: \\x1b[2Jwarning one", "iochar: warning two"]
    assert [f for f in rep["modules"]["POSIX"]["top_files"] if f.get("truncated")]
    call(report.main, [log, "--html", tmp_path / "r.html"])
    page = (tmp_path / "r.html").read_text()
    assert "d... [truncated]" in page and "iochar: \\x1b[2Jwarning one" in page
