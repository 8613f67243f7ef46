"""iochar-report on logs written by the exact Python writer: text, JSON, errors."""

import json

import pytest

from iochar.cli import report
from report_frames import good_pattern, job, small_writes, write


@pytest.fixture
def bad_log(tmp_path):
    p = tmp_path / "bad.iochar"
    write(p, job(run=2.0), {"POSIX": small_writes()})  # 3 s of small writes in 4 x 2 s
    return p


def test_text_has_job_modules_and_advice(bad_log, capsys):
    assert report.main([str(bad_log)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("iochar: /home/u/app\n")
    assert "4 processes" in out and "POSIX   files 1" in out
    # one access size in the log: the cost is bounded, printed "up to", WARN at most
    assert "[WARN] small-io: POSIX: 100% of writes (20,000 of 20,000)" in out
    assert "(up to " in out and "of the run)" in out
    assert len(out.splitlines()) < 40  # about one screen


def test_json_schema(bad_log, capsys):
    assert report.main([str(bad_log), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["job"]["nprocs"] == 4
    p = doc["modules"]["POSIX"]
    for k in ("files", "reads", "writes", "bytes_read", "bytes_written", "time_read",
              "time_write", "time_meta", "slowest_rank", "share_of_runtime", "top_files"):
        assert k in p
    assert p["writes"] == 20000
    a = doc["advice"][0]
    assert set(a) >= {"id", "severity", "message", "evidence"} and a["id"] == "small-io"


def test_good_log_has_no_advice(tmp_path, capsys):
    j, frames, ranks = good_pattern()
    p = tmp_path / "good.iochar"
    write(p, j, frames, ranks)
    assert report.main([str(p), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["advice"] == []


def test_directory_of_logs(tmp_path, capsys):
    write(tmp_path / "r0.iochar", job(), {"POSIX": small_writes()})
    assert report.main([str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["modules"]["POSIX"]["writes"] == 20000


@pytest.mark.parametrize("make,needle", [
    (lambda d: d / "missing.iochar", "missing.iochar"),
    (lambda d: (d / "junk.iochar").write_bytes(b"not a log at all" * 4) and d / "junk.iochar",
     "junk.iochar"),
    (lambda d: d, "no *.iochar"),
])
def test_bad_input_one_line_exit_2(tmp_path, capsys, make, needle):
    assert report.main([str(make(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert err.startswith("iochar-report: error: ") and needle in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_truncated_log(bad_log, capsys):
    data = bad_log.read_bytes()
    bad_log.write_bytes(data[: len(data) // 2])
    assert report.main([str(bad_log)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_bad_config_and_args(bad_log, tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[small-io]\nnope = 1\n")
    assert report.main([str(bad_log), "--config", str(cfg)]) == 2
    assert "unknown key 'nope'" in capsys.readouterr().err
    assert report.main([str(bad_log), "--config", str(tmp_path / "none.toml")]) == 2
    assert "none.toml" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        report.main([])
    assert e.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
