"""Counter roles: the C lists declare them, the log carries them (ROLES), the
reader returns them, and logs without ROLES get the same roles derived."""

import numpy as np
import pandas as pd
import pytest

from iochar import log as L
from iochar.writer import encode_log
from tool import run_log, workload


def test_roles_written_by_the_runtime(tmp_path):
    _, log = run_log([workload("posix_workload"), "consec", str(tmp_path)], tmp_path)
    roles = dict((n, r) for n, _, r in log.schema_roles("POSIX"))
    assert roles["POSIX_OPENS"] == "TOTAL"
    assert roles["POSIX_BYTES_READ"] == "TOTAL"
    assert roles["POSIX_SIZE_READ_1K_10K"] == "BIN"
    assert roles["POSIX_MAX_BYTE_READ"] == "MAX"
    assert roles["POSIX_MODE"] == "SETTING"
    assert roles["POSIX_ACCESS_APPROX"] == "SETTING"
    assert roles["POSIX_ACCESS1_ACCESS"] == "TOPK_VALUE"
    assert roles["POSIX_ACCESS1_COUNT"] == "TOPK_COUNT"
    assert roles["POSIX_FASTEST_RANK"] == "RANK"
    assert roles["POSIX_F_VARIANCE_RANK_TIME"] == "RANK_STAT"
    assert roles["POSIX_F_READ_TIME"] == "TIME"
    assert roles["POSIX_F_OPEN_START_TIMESTAMP"] == "TIMESTAMP"
    assert sum(r == "BIN" for r in roles.values()) == 20
    # an older log (no ROLES) would get the same roles from op and name
    for m in log.modules:
        assert [(n, L.derive_role(n, op)) for n, op, _ in log.schema_roles(m)] == \
            [(n, r) for n, _, r in log.schema_roles(m)]


def _log(tmp_path, roles=None):
    schema = [("X_OPENS", L.OP["SUM"]), ("X_SIZE_READ_0_100", L.OP["SUM"]),
              ("X_NDIMS", L.OP["MAX"]), ("X_F_READ_TIME", L.OP["TIME"])]
    recs = {"record_id": np.array([1], np.uint64), "rank": [0], "X_OPENS": [2],
            "X_SIZE_READ_0_100": [3], "X_NDIMS": [2], "X_F_READ_TIME": [0.5]}
    spec = {"schema": schema, "records": pd.DataFrame(recs)}
    if roles is not None:
        spec["roles"] = roles
    p = tmp_path / "x.iochar"
    p.write_bytes(encode_log({"nprocs": 1, "format": L.FORMAT_VERSION}, {"X": spec},
                             names={1: "/f"}))
    return L.open(str(p))


def test_old_log_roles_derived(tmp_path):
    assert [r for _, _, r in _log(tmp_path).schema_roles("X")] == ["TOTAL", "BIN", "SETTING", "TIME"]


def test_roles_section_wins(tmp_path):
    got = _log(tmp_path, ["TOTAL", "TOTAL", "MAX", "TIME"]).schema_roles("X")
    assert [r for _, _, r in got] == ["TOTAL", "TOTAL", "MAX", "TIME"]


def test_roles_of_the_wrong_size_rejected(tmp_path):
    with pytest.raises(L.LogError, match="ROLES"):
        _log(tmp_path, ["TOTAL", "BIN"])
