"""The reports' one copy of C-declared tables agrees with the C headers, and the roles
and bins derived from a schema are the ones the C counter lists mean."""

import math
import re
from pathlib import Path

from iochar import flags as F
from iochar import schema as R

ROOT = Path(__file__).resolve().parents[2]


def c_text() -> str:
    return "\n".join(p.read_text() for d in ("runtime", "reducer", "wrappers")
                     for p in sorted((ROOT / d).glob("*.h")))


def test_ops_match_c_enum():
    enum = dict(re.findall(r"IOCHAR_OP_([A-Z_]+)\s*=\s*(\d+)", c_text()))
    assert {k: int(v) for k, v in enum.items()} == R.OP


def test_partial_bits_match_c_macros():
    text = c_text()
    declared = {k: int(v) for k, v in re.findall(r"#define IOCHAR_PARTIAL_([A-Z_]+)\s+(\d+)", text)}
    declared |= {k: int(v) for k, v in re.findall(r"X\(([A-Z_]+), (\d+)\)\s*/\*", text)
                 if "IOCHAR_PARTIAL_FLAGS" in text}
    assert declared  # the C side declares at least the truncated-paths bit
    for name, bit in declared.items():
        name = {"TRUNCATED": "TRUNCATED_PATHS"}.get(name, name)  # the older macro's name
        assert F.PARTIAL[name] == bit, name
    assert sorted(F.PARTIAL.values()) == [1 << i for i in range(8)] + [512]  # 256: taken
    assert F.partial_names(8 | 128 | 1024) == ["RECOVERED", "TRUNCATED_PATHS", "1024"]


def test_roles_from_ops_and_names():
    schema = [("POSIX_OPENS", R.OP["SUM"]), ("POSIX_BYTES_READ", R.OP["BYTES"]),
              ("POSIX_SIZE_READ_0_100", R.OP["SUM"]), ("POSIX_SIZE_WRITE_1G_PLUS", R.OP["SUM"]),
              ("POSIX_MAX_BYTE_READ", R.OP["MAX"]), ("POSIX_ACCESS1_ACCESS", R.OP["TOPK_VAL"]),
              ("POSIX_ACCESS1_COUNT", R.OP["TOPK_CNT"]), ("POSIX_F_READ_TIME", R.OP["TIME"]),
              ("POSIX_F_OPEN_START_TIMESTAMP", R.OP["TS_START"]),
              ("POSIX_FASTEST_RANK", R.OP["FAST_RANK"]), ("POSIX_MODE", R.OP["ANY"]),
              ("H5D_CHUNK_SIZE_D1", R.OP["ANY"]), ("POSIX_F_VARIANCE_RANK_TIME", R.OP["VAR_TIME"]),
              ("POSIX_NEW", 99)]
    assert list(R.roles(schema).values()) == [
        R.TOTAL, R.TOTAL, R.BIN, R.BIN, R.MAX, R.TOPK_VALUE, R.TOPK_COUNT, R.TIME,
        R.TIMESTAMP, R.RANK, R.SETTING, R.SETTING, R.RANK_STAT, R.RANK_STAT]
    assert R.with_role(schema, R.TOTAL) == ["POSIX_OPENS", "POSIX_BYTES_READ"]
    # a log that names its roles: the named role wins over the derived one
    assert R.with_role([("X_A", R.OP["SUM"], R.SETTING), ("X_B", R.OP["MAX"], R.TOTAL)],
                       R.TOTAL) == ["X_B"]


def test_role_names_match_c_enum():
    enum = re.findall(r"IOCHAR_ROLE_([A-Z_]+)\s*=\s*\d+", c_text())
    for name in enum:  # once the C lists declare roles (runtime/counters.h)
        assert getattr(R, name) == name


def test_size_bins_in_order_with_bounds():
    names = ["MPIIO_SIZE_WRITE_1G_PLUS", "MPIIO_SIZE_READ_100_1K", "MPIIO_SIZE_READ_0_100",
             "MPIIO_SIZE_WRITE_1M_4M", "POSIX_SIZE_READ_1K_10K", "MPIIO_VIEWS"]
    assert R.size_bins(names, "MPIIO") == ["0_100", "100_1K", "1M_4M", "1G_PLUS"]
    assert R.bin_bounds("0_100") == (0, 100)
    assert R.bin_bounds("1K_10K") == (1024, 10240)
    assert R.bin_bounds("100M_1G") == (100 << 20, 1 << 30)
    assert R.bin_bounds("1G_PLUS") == (1 << 30, math.inf)


def test_every_c_histogram_bin_parses():
    # the bins the C lists declare, as the log will carry them
    labels = re.findall(r"X\(M##_SIZE_##D##_([0-9A-Z_]+), (?:SUM|BIN)\)", c_text())
    assert len(labels) == 10
    names = [f"POSIX_SIZE_READ_{b}" for b in labels]
    assert R.size_bins(names, "POSIX") == labels  # declared smallest first
    uppers = [R.bin_bounds(b)[1] for b in labels]
    assert uppers == sorted(uppers) and uppers[-1] == math.inf
