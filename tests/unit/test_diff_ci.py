"""iochar-diff for CI: warnings on runs that are not comparable, --changes-only, --json,
--junit (JUnit XML a CI system reads), jobs picked out of directories."""

import json
import xml.etree.ElementTree as ET

from iochar.cli import diff
from report_frames import MiB, job, write
from test_diff_cli import posix


def pair(tmp_path, base_job, new_job, base=None, new=None):
    b, n = tmp_path / "base.iochar", tmp_path / "new.iochar"
    write(b, base_job, {"POSIX": base if base is not None else posix()})
    write(n, new_job, {"POSIX": new if new is not None else posix()})
    return str(b), str(n)


def test_warns_on_other_program_nprocs_and_version(tmp_path, capsys):
    b, n = pair(tmp_path, job(), {**job(nprocs=8), "exe": "/home/u/other", "version": "0.2.0"})
    assert diff.main([b, n]) == 0  # warnings do not change the verdict
    cap = capsys.readouterr()
    err = cap.err.splitlines()
    assert err == ["iochar-diff: warning: different programs: app (base) vs other (new)",
                   "iochar-diff: warning: different process counts: 4 (base) vs 8 (new)",
                   "iochar-diff: warning: different iochar versions: 0.1.0 (base) vs 0.2.0 (new)"]
    assert "warning: different process counts: 4 (base) vs 8 (new)" in cap.out
    assert diff.main([b, n, "--json"]) == 0
    w = json.loads(capsys.readouterr().out)["warnings"]
    assert [(x["kind"], x["base"], x["new"]) for x in w] == [
        ("exe", "app", "other"), ("nprocs", 4, 8), ("version", "0.1.0", "0.2.0")]


def test_same_program_elsewhere_is_not_a_warning(tmp_path, capsys):
    # last night's build and tonight's live in different directories
    b, n = pair(tmp_path, job(), {**job(), "exe": "/builds/42/app"})
    assert diff.main([b, n]) == 0
    assert capsys.readouterr().err == ""


def test_changes_only_and_json(tmp_path, capsys):
    b, n = pair(tmp_path, job(), job(), posix(1000), posix(1150))  # ops +15%, bytes +15%
    assert diff.main([b, n, "--changes-only"]) == 1
    out = capsys.readouterr().out.splitlines()
    rows = [ln for ln in out[2:] if ln.startswith("POSIX")]
    assert [ln.split()[1:3] for ln in rows] == [["read+write", "ops"], ["bytes", "moved"]]
    assert all(ln.endswith("REGRESSION") for ln in rows)
    assert out[-1] == "verdict: 2 regression(s)"
    assert diff.main([b, n, "--changes-only", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [(r["metric"], r["base"], r["new"]) for r in doc["rows"]] == [
        ("read+write ops", 1000, 1150), ("bytes moved", 1000 * 4 * MiB, 1150 * 4 * MiB)]
    assert doc["regressions"] == 2 and doc["warnings"] == []
    assert diff.main([b, n, "--json"]) == 1  # without the flag: every metric
    assert len(json.loads(capsys.readouterr().out)["rows"]) == 7


def test_junit_xml(tmp_path, capsys):
    # 1000 x 4 MiB -> 1,024,000 x 4 KiB: ops, mean size, top size regress: 3 failures;
    # small-io appears as a case that does not fail: one access size in the whole log,
    # so its cost is bounded ("up to" a quarter of the 4 x 100 s run), WARN at most
    # (docs/advice.md), and only a HIGH finding fails the build
    b, n = pair(tmp_path, job(), job(), posix(1000, 4 * MiB, time=100.0),
                posix(1_024_000, 4096, bin_="1K_10K", time=100.0))
    out = tmp_path / "ci" / "diff.xml"
    out.parent.mkdir()
    assert diff.main([b, n, "--junit", str(out)]) == 1
    root = ET.parse(out).getroot()
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    assert root.tag == "testsuites" and root.get("failures") == "3"
    assert suite.get("tests") == str(len(cases)) and suite.get("failures") == "3"
    assert sorted(c.get("name") for c in failed) == [
        "mean access size", "most common access size", "read+write ops"]
    (small,) = [c for c in cases if c.get("name") == "advice small-io"]
    assert small.find("failure") is None and "[WARN] small-io" in small.find("system-out").text
    ops = next(c for c in failed if c.get("name") == "read+write ops")
    assert ops.get("classname") == "iochar-diff.POSIX"
    assert ops.find("failure").get("message") == "1,000 -> 1,024,000 (+102300%)"
    assert len([c for c in cases if c.get("name") != "advice small-io"]) == 7
    assert list(out.parent.iterdir()) == [out]  # the temporary file was renamed away
    capsys.readouterr()
    assert diff.main([b, b, "--junit", str(out)]) == 0
    assert ET.parse(out).getroot().get("failures") == "0"


def test_junit_unwritable_is_exit_2(tmp_path, capsys):
    b, n = pair(tmp_path, job(), job())
    assert diff.main([b, n, "--junit", str(tmp_path / "no" / "dir" / "x.xml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("iochar-diff: error: ") and len(err.splitlines()) == 1


def test_jobs_picked_from_directories(tmp_path, capsys):
    d = tmp_path / "night"
    d.mkdir()
    write(d / "a.iochar", job() | {"jobid": "1", "pid": 1}, {"POSIX": posix(1000)})
    write(d / "b.iochar", job() | {"jobid": "2", "pid": 2, "start_time": 1700000200.0,
                                   "end_time": 1700000300.0}, {"POSIX": posix(2000)})
    assert diff.main([str(d), str(d)]) == 2
    assert "holds 2 jobs: pick one with --base-job (jobs: 1, 2)" in capsys.readouterr().err
    assert diff.main([str(d), str(d), "--base-job", "1", "--new-job", "2"]) == 1
    assert diff.main([str(d), str(d), "--base-job", "2", "--new-job", "2"]) == 0
