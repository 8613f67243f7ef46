"""iochar-parser output: header, one line per counter, exact floats, --module, pipes."""

import subprocess
import sys

import pandas as pd

from iochar.cli import parser
from iochar.log import OP
from iochar.writer import fnv1a64, write_log
from logdata import make_job, posix_like_schema, random_records

STDIO = [("STDIO_OPENS", OP["SUM"]), ("STDIO_F_META_TIME", OP["TIME"])]
TINY = [1e-9, 0.1 + 0.2, 123456.78901234567, 5e-324]


def make(tmp_path, n=3):
    schema = posix_like_schema()
    path = tmp_path / "p.iochar"
    st = pd.DataFrame({"rank": [0] * 4, "record_id": [fnv1a64(f"/o {i}") for i in range(4)],
                       "path": [f"/o {i}" for i in range(4)], "STDIO_OPENS": [1, 2, 3, 4],
                       "STDIO_F_META_TIME": TINY})
    write_log(path, make_job(), {"POSIX": {"schema": schema,
                                           "records": random_records(schema, n)},
                                 "STDIO": {"schema": STDIO, "records": st}},
              mounts=[("/scratch", "lustre", 1 << 20)])
    return path, schema


def test_lines(tmp_path, capsys):
    path, schema = make(tmp_path)
    assert parser.main([str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "# nprocs: 4" in out and "# exe: /home/u/app" in out
    assert "# start_time: 1700000000.25" in out
    assert "# mount: /scratch lustre 1048576" in out
    body = [ln.split(" ", 5) for ln in out if ln and not ln.startswith("#")]
    assert len(body) == 3 * len(schema) + 4 * len(STDIO)
    meta = [b for b in body if b[3] == "STDIO_F_META_TIME"]
    assert [float(b[4]) for b in meta] == TINY  # repr-exact
    assert [b[5] for b in meta] == [f"/o {i}" for i in range(4)]  # paths with spaces last
    assert meta[0][:3] == ["STDIO", "0", str(fnv1a64("/o 0"))]
    assert [b[0] for b in body] == ["POSIX"] * 3 * len(schema) + ["STDIO"] * 8


def test_module_filter(tmp_path, capsys):
    path, _ = make(tmp_path)
    assert parser.main([str(path), "--module", "STDIO"]) == 0
    body = [ln for ln in capsys.readouterr().out.splitlines() if ln and ln[0] != "#"]
    assert len(body) == 8 and all(ln.startswith("STDIO ") for ln in body)


def test_broken_pipe_is_quiet(tmp_path):
    path, _ = make(tmp_path, n=3000)
    p = subprocess.run(f"{sys.executable} -m iochar.cli.parser {path} | head -3", shell=True,
                       capture_output=True, text=True, check=False)
    assert p.stdout.count("\n") == 3
    assert "Traceback" not in p.stderr and "Error" not in p.stderr
