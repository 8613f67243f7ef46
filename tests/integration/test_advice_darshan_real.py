"""Advice on real production and test logs that no one here wrote: the public Darshan
logs of tests/corpus/darshan-real/ (sources and each log's judgement with its counter
evidence: docs/advice-corpus.md). A quiet log gets no WARN-or-worse finding; a log with
a problem gets that problem ranked first, at WARN or worse, with the remedy named."""

import re
from pathlib import Path

import pytest

pytest.importorskip("darshan")

from iochar import darshan as D  # noqa: E402
from iochar import summary as S  # noqa: E402
from iochar.jobreport import build  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "darshan-real"
ALARM = ("warn", "high")

# log -> None (quiet) or (rank-1 id, severities, text the remedy or message must hold)
JUDGED = {
    "apmpi__darshan-apmpi-2nodes-64mpi.darshan": None,
    "apmpi_apxc__mpi-io-test.darshan": None,
    "dlio_logs__snyder_python3_id3116902-2110365_12-19-66957-188958432683465822_1.darshan": None,
    "dlio_logs__snyder_python3_id3116902-2110483_12-19-66980-15861026832475351160_1.darshan": None,
    "dlio_logs__snyder_python3_id3116902-2111564_12-19-67036-13133151762238833090_1.darshan": None,
    "e3sm_io_heatmaps_and_dxt__e3sm_io_heatmap_only.darshan": None,
    "empty_log__empty_log.darshan": None,
    "hdf5_diagonal_write_only__hdf5_diagonal_write_1_byte_dxt.darshan": None,
    "hdf5_diagonal_write_only__hdf5_file_opens_only.darshan": None,
    "hdf5_orthogonality__treddy_h5d_no_h5f.darshan": None,
    "ior_daos__snyder_ior-DFS_id4681120-53379_5-8-15060-3270540599978592154_1.darshan": None,
    "ior_daos__snyder_ior-POSIX_id1057716-202103_11-8-64415-6936117869459351096_1.darshan": None,
    "ior_pnetcdf_hdf5__shane_ior-HDF5_id438090-438090_11-9-41522-17417065676046418211_1.darshan":
        None,
    "ior_pnetcdf_hdf5__shane_ior-PNETCDF_id438100-438100_11-9-41525-10280033558448664385_1"
    ".darshan": None,
    "mpi_io_test_with_dxt__treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan":
        None,
    "nonmpi_dxt_anonymized__nonmpi_dxt_anonymized.darshan": None,
    "partial_data_stdio__partial_data_stdio.darshan": None,
    "release_logs__mpi-io-test-ppc64-3.0.0.darshan": None,
    "release_logs__mpi-io-test-x86_64-3.4.7.darshan": None,
    "runtime_heatmap_inactive_ranks__treddy_runtime_heatmap_inactive_ranks.darshan": None,
    "skew_io__skew-autobench-ior.darshan": None,
    "stdio_no_posix__laytonjb_test1_id28730_6-7-43012-2131301613401632697_1.darshan": None,
    "wheel__dxt.darshan": None,
    "wheel__noposix.darshan": None,
    "wheel__noposixopens.darshan": None,
    "wheel__pq_app_readAB_writeC_id71326_7-31-5658-2037904274838284930_55623.darshan": None,
    "wheel__sample-goodost.darshan": None,
    # ---- logs with a problem worth the user's time
    "imbalanced_io__imbalanced-io.darshan": ("lustre", ("high",), "lfs setstripe -c 32"),
    "skew_io__skew-app.darshan": ("lustre", ALARM, "striping_factor=16"),
    "wheel__sample-badost.darshan": ("lustre", ("high",), "OST 14"),
    "wheel__example.darshan": ("misaligned", ("warn",), "H5Pset_alignment"),
    "wheel__shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158.darshan":
        ("data-sieving", ("high",), "H5Pset_dxpl_mpio"),
    "partial_data_dxt__partial_data_dxt.darshan": ("small-io", ALARM, "MPI_File_read"),
}


def report(name):
    log = D.DarshanLog(CORPUS / name)
    return build(S.gather(log) | {"observed": None, "truncated": set()})


def test_the_corpus_is_the_judged_set():
    assert {p.name for p in CORPUS.glob("*.darshan")} == set(JUDGED)
    assert sum(v is None for v in JUDGED.values()) >= 20


@pytest.mark.parametrize("name", list(JUDGED))
def test_real_log(name):
    rep = report(name)
    adv = rep["advice"]
    msgs = [f"{a['severity']} {a['id']}: {a['message']}" for a in adv]
    for a in adv:  # costs are real numbers, never Darshan's -1 shown as a time
        assert all(v is None or v >= 0 for v in a["cost"].values()), a
        assert not re.search(r"-\d[\d.,]* (us|ms|s)\b", a["message"]), a["message"]
        assert a["id"] != "fsync-storm" or a["module"] != "STDIO"  # fflush is not a sync
    want = JUDGED[name]
    if want is None:
        assert not [a for a in adv if a["severity"] in ALARM], msgs
        return
    fid, sevs, text = want
    assert adv and adv[0]["id"] == fid and adv[0]["severity"] in sevs, msgs
    assert text in adv[0]["message"] + adv[0]["recommendation"], adv[0]
    assert adv[0]["example"], adv[0]  # the remedy as code or a command


def test_files_that_are_not_files():
    """Named pipes that block for 24 minutes in open() (COMPSs workers), and <STDOUT>
    written by rank 0, are not a metadata storm or a rank imbalance."""
    rep = report("wheel__dxt.darshan")
    meta = [a for a in rep["advice"] if a["id"] == "metadata-heavy"]
    assert meta and not any("pipe_" in p for a in meta for p in a["files"])
    assert meta[0]["cost"]["seconds"] < 60  # not the pipes' 3 h of waiting
    rep = report("apmpi__darshan-apmpi-2nodes-64mpi.darshan")
    assert "rank-imbalance" not in {a["id"] for a in rep["advice"]}


def test_collective_open_is_not_an_open_storm():
    """One MPI_File_open by 65,536 ranks: 65,537 POSIX opens of one file are the
    library's, one per rank."""
    rep = report("skew_io__skew-app.darshan")
    assert "metadata-heavy" not in {a["id"] for a in rep["advice"]}


def test_large_binary_fwrites_are_not_stdio_heavy():
    rep = report("partial_data_stdio__partial_data_stdio.darshan")
    s = rep["modules"]["STDIO"]
    assert s["bytes_written"] > 15 << 30 and s["bytes_written"] / s["writes"] > 16e6
    assert "stdio-heavy" not in {a["id"] for a in rep["advice"]}


def test_severity_states_the_share_of_the_run():
    from iochar.cli.report import text
    out = text(report("skew_io__skew-app.darshan"), verbose=True)
    assert re.search(r"\[WARN\] lustre: .*, 2\.0% of the run\)", out), out
    assert "e.g. lfs setstripe -c 16 -S 4M /lus/theta-fs0" in out
    assert "e.g. lfs setstripe" not in text(report("skew_io__skew-app.darshan"))


def test_html_shows_the_remedy_example():
    from iochar import html
    page = html.render(report("skew_io__skew-app.darshan"), {}, {}, None)
    assert '<pre class="example">lfs setstripe -c 16 -S 4M /lus/theta-fs0\nMPI_Info_set' in page
    assert "2.0% of the run)" in page
