"""iochar-diff exit codes: 0 within thresholds (incl. timing noise), 1 regression, 2 bad input."""

import json

import pytest

from iochar.cli import diff
from report_frames import MiB, frame, job, write


def posix(writes=1000, size=4 * MiB, time=0.5, bin_="1M_4M", files=1):
    return frame([{"path": f"/s/out{i}", "rank": i % 4, "POSIX_OPENS": 1, "POSIX_WRITES": writes,
                   "POSIX_BYTES_WRITTEN": writes * size, f"POSIX_SIZE_WRITE_{bin_}": writes,
                   "POSIX_ACCESS1_ACCESS": size, "POSIX_ACCESS1_COUNT": writes,
                   "POSIX_SEQ_WRITES": writes - 1, "POSIX_F_WRITE_TIME": time}
                  for i in range(files)])


def logs(tmp_path, base, new):
    b, n = tmp_path / "base.iochar", tmp_path / "new.iochar"
    write(b, job(), {"POSIX": base})
    write(n, job(), {"POSIX": new})
    return str(b), str(n)


def test_same_log_is_ok(tmp_path, capsys):
    b, _ = logs(tmp_path, posix(), posix())
    assert diff.main([b, b]) == 0
    assert "verdict: ok" in capsys.readouterr().out


def test_timing_noise_is_not_a_regression(tmp_path):
    # +80% on a short time is below the 1 s floor; +40% on a long time is below 50%
    assert diff.main(list(logs(tmp_path, posix(time=0.5), posix(time=0.9)))) == 0
    assert diff.main(list(logs(tmp_path, posix(time=10.0), posix(time=14.0)))) == 0


def test_much_more_time_is_a_regression(tmp_path, capsys):
    assert diff.main(list(logs(tmp_path, posix(time=2.0), posix(time=10.0)))) == 1
    assert "io time (slowest rank)" in capsys.readouterr().out


def test_smaller_accesses_more_ops_is_a_regression(tmp_path, capsys):
    # 100 s of writing on one rank of a 4 x 100 s run: small-io costs up to a quarter of
    # it (one access size in the log: bounded, not fitted, so WARN: docs/advice.md)
    b, n = logs(tmp_path, posix(1000, 4 * MiB, time=100.0),
                posix(1_024_000, 4096, bin_="1K_10K", time=100.0))
    assert diff.main([b, n, "--json"]) == 1
    res = json.loads(capsys.readouterr().out)
    bad = {r["metric"] for r in res["rows"] if r["verdict"] == "REGRESSION"}
    assert {"read+write ops", "mean access size", "most common access size"} <= bad
    assert any(a["id"] == "small-io" and a["severity"] == "warn"
               for a in res["advice_appeared"])


def test_threshold_option(tmp_path):
    b, n = logs(tmp_path, posix(1000), posix(1150))  # +15% ops, +15% bytes
    assert diff.main([b, n]) == 1
    assert diff.main([b, n, "--threshold", "20"]) == 0


def test_improvement_is_ok(tmp_path, capsys):
    assert diff.main(list(logs(tmp_path, posix(time=10.0), posix(time=2.0)))) == 0
    assert "better" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["{d}/nope.iochar", "{d}/nope.iochar"],
                                  ["{d}/junk.iochar", "{d}/junk.iochar"],
                                  ["{d}/junk.iochar", "--threshold", "lots", "{d}/junk.iochar"]])
def test_bad_input_exit_2(tmp_path, capsys, argv):
    (tmp_path / "junk.iochar").write_bytes(b"IOCHARLG" + b"\0" * 40)
    args = [a.format(d=tmp_path) for a in argv]
    try:
        rc = diff.main(args)
    except SystemExit as e:
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err
    assert err.startswith("iochar-diff: error: ") and len(err.strip().splitlines()) == 1
