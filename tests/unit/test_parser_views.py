"""iochar-parser --total's combination by op on a hand-built log (the same views on a
real MPI job: test_parser_views_mpi.py)."""

import re

import numpy as np
import pandas as pd

from iochar.cli import parser
from iochar.log import OP
from iochar.writer import fnv1a64, write_log
from logdata import make_job


def out_of(capsys, argv):
    assert parser.main(argv) == 0
    return capsys.readouterr().out


SCHEMA = [("X_OPENS", OP["SUM"]), ("X_MODE", OP["ANY"]), ("X_BYTES_READ", OP["BYTES"]),
          ("X_MAX_BYTE", OP["MAX"]), ("X_MINX", OP["MIN_NZ"]),
          ("X_MAX_READ_TIME_SIZE", OP["MAXT_SIZE"]),
          ("X_A1", OP["TOPK_VAL"]), ("X_A2", OP["TOPK_VAL"]),
          ("X_C1", OP["TOPK_CNT"]), ("X_C2", OP["TOPK_CNT"]),
          ("X_FASTEST_RANK", OP["FAST_RANK"]), ("X_SLOWEST_RANK", OP["SLOW_RANK"]),
          ("X_F_OPEN_START", OP["TS_START"]), ("X_F_CLOSE_END", OP["TS_END"]),
          ("X_F_READ_TIME", OP["TIME"]), ("X_F_MAX_READ_TIME", OP["MAXT"]),
          ("X_F_FASTEST_RANK_TIME", OP["FAST_TIME"]), ("X_F_SLOWEST_RANK_TIME", OP["SLOW_TIME"]),
          ("X_F_VARIANCE_RANK_TIME", OP["VAR_TIME"])]


def test_total_combines_by_op(tmp_path, capsys):
    rows = [  # three files: rank 1's own, a shared one, rank 3's own
        dict(rank=1, p="/a", X_OPENS=1, X_MODE=0, X_BYTES_READ=10, X_MAX_BYTE=9, X_MINX=0,
             X_MAX_READ_TIME_SIZE=10, X_A1=10, X_A2=0, X_C1=1, X_C2=0, X_FASTEST_RANK=1,
             X_SLOWEST_RANK=1, X_F_OPEN_START=0.5, X_F_CLOSE_END=1.0, X_F_READ_TIME=0.25,
             X_F_MAX_READ_TIME=0.25, X_F_FASTEST_RANK_TIME=0.25, X_F_SLOWEST_RANK_TIME=0.25,
             X_F_VARIANCE_RANK_TIME=0.0),
        dict(rank=-1, p="/s", X_OPENS=4, X_MODE=0o644, X_BYTES_READ=400, X_MAX_BYTE=399,
             X_MINX=7, X_MAX_READ_TIME_SIZE=100, X_A1=100, X_A2=10, X_C1=3, X_C2=1,
             X_FASTEST_RANK=2, X_SLOWEST_RANK=0, X_F_OPEN_START=0.125, X_F_CLOSE_END=3.0,
             X_F_READ_TIME=2.0, X_F_MAX_READ_TIME=1.5, X_F_FASTEST_RANK_TIME=0.125,
             X_F_SLOWEST_RANK_TIME=1.0, X_F_VARIANCE_RANK_TIME=0.5),
        dict(rank=3, p="/b", X_OPENS=2, X_MODE=0o600, X_BYTES_READ=20, X_MAX_BYTE=1000,
             X_MINX=3, X_MAX_READ_TIME_SIZE=20, X_A1=10, X_A2=0, X_C1=2, X_C2=0,
             X_FASTEST_RANK=3, X_SLOWEST_RANK=3, X_F_OPEN_START=0.0, X_F_CLOSE_END=2.0,
             X_F_READ_TIME=0.5, X_F_MAX_READ_TIME=0.5, X_F_FASTEST_RANK_TIME=0.5,
             X_F_SLOWEST_RANK_TIME=0.5, X_F_VARIANCE_RANK_TIME=0.0)]
    df = pd.DataFrame({"rank": [r["rank"] for r in rows],
                       "record_id": np.array([fnv1a64(r["p"]) for r in rows], np.uint64),
                       "path": [r["p"] for r in rows],
                       **{n: [r[n] for r in rows] for n, _ in SCHEMA}})
    path = tmp_path / "x.iochar"
    write_log(path, make_job(), {"X": {"schema": SCHEMA, "records": df}})
    out = out_of(capsys, [str(path), "--total"])
    tot = dict(re.findall(r"^total_(\w+): (\S+)$", out, re.M))
    assert tot == {
        "X_OPENS": "7", "X_MODE": str(0o644),  # ANY: first non-zero in rank order
        "X_BYTES_READ": "430", "X_MAX_BYTE": "1000", "X_MINX": "3",
        "X_MAX_READ_TIME_SIZE": "100",  # with the largest X_F_MAX_READ_TIME
        "X_A1": "10", "X_A2": "100", "X_C1": "4", "X_C2": "3",  # 10: 1+1+2, 100: 3
        "X_FASTEST_RANK": "2", "X_SLOWEST_RANK": "0",  # from the shared file's fields
        "X_F_OPEN_START": "0.125", "X_F_CLOSE_END": "3.0", "X_F_READ_TIME": "2.75",
        "X_F_MAX_READ_TIME": "1.5", "X_F_FASTEST_RANK_TIME": "0.125",
        "X_F_SLOWEST_RANK_TIME": "1.0"}  # VAR_* do not combine across files: left out
