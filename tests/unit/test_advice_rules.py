"""Advice rules on hand-built frames: which fire, which do not, with exact evidence."""

import pytest

from iochar import advice
from iochar.advice import config
from report_frames import MiB, frame, good_pattern, ranks_frame, run_advice, small_writes
from report_frames import job as run_job


def job(nprocs=4, nnodes=1, run=0.0):
    """A job of unknown run time: severity from the share of the I/O time, so each rule
    is judged on its own (the run's share is tested with run_job)."""
    return run_job(nprocs, nnodes, run)


def test_good_pattern_fires_nothing():
    j, frames, ranks = good_pattern()
    assert run_advice(j, frames, ranks) == {}


def test_every_rule_is_registered_with_a_config_entry():
    ids = [r.ID for r in advice.RULES]
    assert len(ids) == len(set(ids)) == 19
    assert set(ids) == set(config.DEFAULTS) - {"severity"}


def test_small_io_fires_with_exact_evidence():
    got = run_advice(job(), {"POSIX": small_writes()})
    (a,) = got["small-io"]
    # one access size: the log bounds what larger writes save, it cannot fit it (WARN)
    assert a.severity == "warn" and a.module == "POSIX" and a.cost["fitted"] == 0
    assert a.evidence == {"POSIX_WRITES": 20000, "small_writes": 20000, "small_size": 64 << 10,
                          "POSIX_SIZE_WRITE_1K_10K": 20000, "common_size": 4096}
    assert "100% of writes (20,000 of 20,000)" in a.message and "4 KiB" in a.message
    assert a.files == ["/scratch/a.dat"]
    assert set(got) == {"small-io"}


def test_exact_1mib_accesses_are_not_small():
    # 1 MiB lands in the 100K_1M bin; the top-4 table shows they are not below 1 MiB.
    got = run_advice(job(), {"POSIX": small_writes(5000, "100K_1M", MiB)})
    assert "small-io" not in got


def test_small_io_below_min_ops_is_quiet():
    assert "small-io" not in run_advice(job(), {"POSIX": small_writes(999)})


def test_small_io_uses_stripe_unit_when_known():
    mp = frame([{"path": "/scratch/b.dat", "rank": 0, "MPIIO_COLL_WRITES": 1,
                 "MPIIO_HINT_STRIPING_UNIT": 16 * 1024}])
    got = run_advice(job(), {"POSIX": small_writes(), "MPIIO": mp})
    assert got["small-io"][0].evidence["small_size"] == 16 * 1024


def test_random_access():
    df = frame([{"path": "/scratch/r.dat", "rank": 0, "POSIX_READS": 10000,
                 "POSIX_SEQ_READS": 2000, "POSIX_CONSEC_READS": 1000,
                 "POSIX_SIZE_READ_1M_4M": 10000, "POSIX_BYTES_READ": 10000 * 2 * MiB}])
    (a,) = run_advice(job(), {"POSIX": df})["random-access"]
    assert a.severity == "high"
    # forward jumps are as random as backward ones: only consecutive reads are not
    assert a.evidence == {"POSIX_READS": 10000, "POSIX_SEQ_READS": 2000,
                          "POSIX_CONSEC_READS": 1000, "random_reads": 8999,
                          "backward_reads": 7999}


def test_sequential_file_per_process_is_not_random():
    # every rank's first access is neither sequential nor consecutive: not "random"
    rows = [{"path": f"/s/f{i}", "rank": i % 4, "POSIX_WRITES": 1,
             "POSIX_SIZE_WRITE_1M_4M": 1} for i in range(5000)]
    assert "random-access" not in run_advice(job(), {"POSIX": frame(rows)})


def test_misaligned_with_hdf5_recommendation():
    df = frame([{"path": "/s/x.h5", "rank": 0, "POSIX_WRITES": 1000, "POSIX_FILE_NOT_ALIGNED": 600,
                 "POSIX_FILE_ALIGNMENT": 4096, "POSIX_SIZE_WRITE_1M_4M": 1000}])
    h5 = frame([{"path": "/s/x.h5", "rank": 0, "H5F_OPENS": 1}])
    (a,) = run_advice(job(), {"POSIX": df, "H5F": h5})["misaligned"]
    assert a.evidence == {"POSIX_FILE_NOT_ALIGNED": 600, "POSIX_FILE_ALIGNMENT": 4096,
                          "accesses": 1000, "eof_probes_not_counted": 0}
    assert a.severity == "high" and "H5Pset_alignment(fapl, threshold, 4 KiB)" in \
        a.recommendation and a.module == "H5F"


def mpiio_indep(n, size_bin, views, nprocs=8):
    return frame([{"path": "/s/shared.dat", "rank": -1, "MPIIO_INDEP_OPENS": nprocs,
                   "MPIIO_INDEP_WRITES": n, f"MPIIO_SIZE_WRITE_{size_bin}": n,
                   "MPIIO_VIEWS": views, "MPIIO_BYTES_WRITTEN": n * 50000}])


def test_no_collective_small_independent():
    (a,) = run_advice(job(8, 2), {"MPIIO": mpiio_indep(5000, "10K_100K", 8)})["no-collective"]
    assert a.severity == "high"  # no timing in the frame: the rule's own severity
    assert a.evidence["MPIIO_INDEP_ops"] == 5000 and a.evidence["large_share"] == 0
    assert "MPI_File_write_at_all" in a.recommendation and "(2)" in a.recommendation


def test_no_collective_large_contiguous_is_fine_with_cb_nuance():
    (a,) = run_advice(job(8, 2), {"MPIIO": mpiio_indep(2000, "4M_10M", 0)})["no-collective"]
    assert a.severity == "info"
    assert "fine" in a.recommendation and "romio_cb_write=disable" in a.recommendation
    assert a.evidence["large_share"] == 1.0


def test_no_collective_needs_a_shared_file_and_many_ops():
    assert "no-collective" not in run_advice(job(8), {"MPIIO": mpiio_indep(999, "10K_100K", 1)})
    df = mpiio_indep(5000, "10K_100K", 1)
    df["rank"] = 3  # one rank's own file
    assert "no-collective" not in run_advice(job(8), {"MPIIO": df})


def test_stdio_heavy_but_not_for_stdout_nor_large_calls():
    st = frame([{"path": "/s/out.txt", "rank": 0, "STDIO_WRITES": 102400,
                 "STDIO_BYTES_WRITTEN": 100 * MiB}])
    px = frame([{"path": "/s/b.dat", "rank": 0, "POSIX_WRITES": 10, "POSIX_BYTES_WRITTEN": 10 * MiB,
                 "POSIX_SIZE_WRITE_100K_1M": 10}])
    (a,) = run_advice(job(), {"STDIO": st, "POSIX": px})["stdio-heavy"]
    assert a.evidence["STDIO_BYTES"] == 100 * MiB and a.evidence["mean_call_bytes"] == 1024
    assert round(a.evidence["stdio_bytes_share"], 4) == round(100 / 110, 4)
    assert "calls of 1 KiB on average" in a.message
    # the same bytes in 16 MiB binary fwrite calls: nothing to fix
    big = st.copy()
    big.loc[0, "STDIO_WRITES"] = 100 // 16
    assert "stdio-heavy" not in run_advice(job(), {"STDIO": big, "POSIX": px})
    st.loc[0, "path"] = "<STDOUT>"
    assert "stdio-heavy" not in run_advice(job(), {"STDIO": st, "POSIX": px})


def test_metadata_heavy_with_hdf5_collective_metadata():
    px = frame([{"path": f"/s/f{i}", "rank": i % 4, "POSIX_OPENS": 10, "POSIX_STATS": 10,
                 "POSIX_READS": 1, "POSIX_BYTES_READ": 100, "POSIX_SIZE_READ_0_100": 1,
                 "POSIX_F_META_TIME": 0.01, "POSIX_F_READ_TIME": 0.0001} for i in range(1000)])
    h5 = frame([{"path": "/s/f0", "rank": -1, "H5F_OPENS": 4, "H5F_COLL_METADATA_OPS": 0}])
    (a,) = run_advice(job(), {"POSIX": px, "H5F": h5})["metadata-heavy"]
    # /s/f0 is HDF5's file: its opens are the library's, not judged here
    assert a.evidence["POSIX_OPENS"] == 9990 and a.evidence["POSIX_STATS"] == 9990
    assert a.evidence["files"] == 999 and a.evidence["repeated_opens"] == 9 * 999
    assert "8,991 repeated opens and 9,990 stats" in a.message
    assert "H5Pset_all_coll_metadata_ops" in a.recommendation


def test_rank_imbalance_from_ranks():
    px = frame([{"path": f"/s/f{i}", "rank": i, "POSIX_WRITES": 10,
                 "POSIX_SIZE_WRITE_1M_4M": 10} for i in range(4)])
    uneven = ranks_frame([10.0, 1.0, 1.0, 2.0])
    uneven["bytes_written"] = [100 * MiB, MiB, MiB, 2 * MiB]
    got = run_advice(job(), {"POSIX": px}, {"POSIX": uneven})
    (a,) = got["rank-imbalance"]
    assert a.evidence == {"slowest_rank": 0, "slowest_rank_time": 10.0, "fastest_rank": 1,
                          "fastest_rank_time": 1.0, "mean_rank_time": 3.5, "ranks": 4,
                          "max_rank_bytes": 100 * MiB, "min_rank_bytes": MiB}
    balanced = run_advice(job(), {"POSIX": px}, {"POSIX": ranks_frame([2.0, 2.1, 1.9, 2.0])})
    assert "rank-imbalance" not in balanced
    # uneven time for even work is contention or noise, nothing the program can change
    noisy = run_advice(job(), {"POSIX": px}, {"POSIX": ranks_frame([10.0, 1.0, 1.0, 2.0])})
    assert "rank-imbalance" not in noisy


def test_shared_file_straggler():
    px = frame([{"path": "/s/sh.dat", "rank": -1, "POSIX_WRITES": 40, "POSIX_SIZE_WRITE_1M_4M": 40,
                 "POSIX_SLOWEST_RANK": 2, "POSIX_SLOWEST_RANK_BYTES": 10 * MiB,
                 "POSIX_FASTEST_RANK": 1, "POSIX_FASTEST_RANK_BYTES": MiB,
                 "POSIX_F_SLOWEST_RANK_TIME": 8.0, "POSIX_F_FASTEST_RANK_TIME": 1.0}])
    (a,) = run_advice(job(), {"POSIX": px})["rank-imbalance"]
    assert a.evidence["POSIX_F_SLOWEST_RANK_TIME"] == 8.0
    assert a.evidence["POSIX_SLOWEST_RANK"] == 2 and a.files == ["/s/sh.dat"]


def test_redundant_reads():
    px = frame([{"path": "/s/in.dat", "rank": -1, "POSIX_READS": 64,
                 "POSIX_BYTES_READ": 64 * 100 * MiB, "POSIX_MAX_BYTE_READ": 100 * MiB - 1,
                 "POSIX_SIZE_READ_10M_100M": 64, "POSIX_SEQ_READS": 64}])
    (a,) = run_advice(job(64), {"POSIX": px})["redundant-reads"]
    assert a.evidence == {"POSIX_BYTES_READ": 6400 * MiB, "POSIX_MAX_BYTE_READ": 100 * MiB - 1,
                          "read_factor": 64.0, "files": 1, "excess_bytes": 6300 * MiB,
                          "excess_read_time_s": 0}
    # priced by the bytes read again: all but 100 MiB of the 6400 MiB the job moved
    assert a.cost["bytes_share"] == 6300 / 6400 and a.severity == "high"
    px.loc[0, "POSIX_BYTES_READ"] = 100 * MiB
    assert "redundant-reads" not in run_advice(job(64), {"POSIX": px})


def test_hints_cb_disabled_small_strided_and_ds_on_large():
    mp = frame([{"path": "/s/h.dat", "rank": -1, "MPIIO_COLL_WRITES": 4000,
                 "MPIIO_SIZE_WRITE_1K_10K": 4000, "MPIIO_VIEWS": 8,
                 "MPIIO_HINT_ROMIO_CB_WRITE": 2, "MPIIO_INDEP_READS": 500,
                 "MPIIO_SIZE_READ_10M_100M": 500, "MPIIO_HINT_ROMIO_DS_READ": 1}])
    got = run_advice(job(8), {"MPIIO": mp})["hints"]
    ev = {tuple(sorted(a.evidence)): a.evidence for a in got}
    assert len(got) == 2
    cb = next(a for a in got if "MPIIO_HINT_ROMIO_CB_WRITE" in a.evidence)
    assert cb.evidence == {"MPIIO_HINT_ROMIO_CB_WRITE": 2, "MPIIO_WRITES": 4000,
                           "small_writes": 4000, "MPIIO_COLL_WRITES": 4000, "MPIIO_VIEWS": 8}
    assert '"romio_cb_write", "enable"' in cb.recommendation
    ds = next(a for a in got if "MPIIO_HINT_ROMIO_DS_READ" in a.evidence)
    assert ds.evidence == {"MPIIO_HINT_ROMIO_DS_READ": 1, "MPIIO_INDEP_READS": 500,
                           "large_reads": 500}
    assert ev


def test_hdf5_tiny_chunks():
    h5 = frame([{"path": "/s/x.h5:/grid", "rank": -1, "H5D_WRITES": 50, "H5D_LAYOUT": 3,
                 "H5D_DATASPACE_NDIMS": 2, "H5D_CHUNK_SIZE_D1": 16, "H5D_CHUNK_SIZE_D2": 16,
                 "H5D_DATATYPE_SIZE": 8, "H5D_DATASPACE_NPOINTS": 10000 * 10000,
                 "H5D_BYTES_WRITTEN": 800 * MiB, "H5D_SIZE_WRITE_10M_100M": 50}])
    (a,) = run_advice(job(), {"H5D": h5})["hdf5-chunking"]
    assert a.evidence["chunk_bytes"] == 2048 and a.evidence["H5D_CHUNK_SIZE_D1"] == 16
    h5["H5D_CHUNK_SIZE_D1"] = 512
    h5["H5D_CHUNK_SIZE_D2"] = 256
    assert "hdf5-chunking" not in run_advice(job(), {"H5D": h5})


def test_netcdf_record_vars_classic_only():
    var = frame([{"path": f"/s/o.nc:v{i}", "rank": 0, "NC_VAR_PUTS": 50, "NC_VAR_IS_RECORD_VAR": 1,
                  "NC_VAR_BYTES_WRITTEN": 50 * 4096, "NC_VAR_SIZE_WRITE_1K_10K": 50}
                 for i in range(6)])
    fil = frame([{"path": "/s/o.nc", "rank": 0, "NC_FILE_CREATES": 1, "NC_FILE_FORMAT": 1}])
    (a,) = run_advice(job(), {"NC_VAR": var, "NC_FILE": fil})["netcdf-record-vars"]
    assert a.evidence["record_vars"] == 6 and a.evidence["record_var_ops"] == 300
    fil["NC_FILE_FORMAT"] = 4
    assert "netcdf-record-vars" not in run_advice(job(), {"NC_VAR": var, "NC_FILE": fil})


def test_fsync_storm_rw_switches_many_seeks():
    px = frame([{"path": "/s/db", "rank": 0, "POSIX_WRITES": 5000, "POSIX_READS": 5000,
                 "POSIX_FSYNCS": 5000, "POSIX_RW_SWITCHES": 9999, "POSIX_SEEKS": 10000,
                 "POSIX_SIZE_WRITE_1M_4M": 5000, "POSIX_SIZE_READ_1M_4M": 5000,
                 "POSIX_SEQ_READS": 4999, "POSIX_SEQ_WRITES": 4999}])
    got = run_advice(job(), {"POSIX": px})
    assert got["fsync-storm"][0].evidence == {"POSIX_syncs": 5000, "POSIX_WRITES": 5000,
                                               "syncs_per_write": 1.0}
    assert got["rw-switches"][0].evidence == {"POSIX_RW_SWITCHES": 9999, "excess_switches": 9998,
                                              "accesses": 10000}
    assert got["many-seeks"][0].evidence == {"POSIX_SEEKS": 10000, "accesses": 10000}
    assert "pread()/pwrite()" in got["many-seeks"][0].recommendation


def test_order_is_most_severe_first():
    ctx = advice.Context(job(), {"POSIX": small_writes()})
    got = advice.evaluate(ctx)
    ranks = [advice.RANK[a.severity] for a in got]
    assert ranks == sorted(ranks)


def test_config_override_and_disable(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text("[small-io]\nmin_ops = 50000\n")
    assert "small-io" not in run_advice(job(), {"POSIX": small_writes()}, cfg=config.load(p))
    p.write_text("[small-io]\nenabled = false\n")
    assert "small-io" not in run_advice(job(), {"POSIX": small_writes()}, cfg=config.load(p))
    p.write_text("[small-io]\nsize = 2048\n")
    assert "small-io" not in run_advice(job(), {"POSIX": small_writes()}, cfg=config.load(p))


@pytest.mark.parametrize("text,msg", [("[nope]\nx=1\n", "unknown rule"),
                                      ("[small-io]\nsizee=1\n", "unknown key"),
                                      ("[small-io]\nsize='big'\n", "must be a number"),
                                      ("[small-io\n", "not valid TOML")])
def test_bad_config(tmp_path, text, msg):
    p = tmp_path / "c.toml"
    p.write_text(text)
    with pytest.raises(config.ConfigError, match=msg):
        config.load(p)


def _loader_files(n, size, epochs, rank_of=lambda i: i % 4, read=None):
    """n small files, each opened and read whole `epochs` times (a data loader's epochs),
    open/close far slower than the reads."""
    read = size if read is None else read
    return frame([{"path": f"/data/img{i:05d}.jpg", "rank": rank_of(i),
                   "POSIX_OPENS": epochs, "POSIX_STATS": epochs, "POSIX_READS": 2 * epochs,
                   "POSIX_BYTES_READ": read * epochs, "POSIX_MAX_BYTE_READ": read - 1,
                   "POSIX_F_META_TIME": 0.002 * epochs, "POSIX_F_READ_TIME": 0.0001 * epochs}
                  for i in range(n)])


@pytest.mark.parametrize("epochs", [1, 3])
def test_small_files_read_whole_get_the_shard_remedy(epochs):
    """A data pipeline: 2,000 files of 100 KB, each read whole once per epoch. Each is
    already opened once per pass: pack them into shards or stage them, not "keep it
    open"."""
    (a,) = run_advice(job(), {"POSIX": _loader_files(2000, 100_000, epochs)})["metadata-heavy"]
    ev = a.evidence
    assert (ev["small_files_read_whole"], ev["median_file_size"], ev["reads_per_file"]) == \
        (2000, 100_000.0, float(epochs))
    assert ev["POSIX_OPENS"] == 2000 * epochs and ev["files"] == 2000
    assert a.recommendation.startswith(
        f"2,000 small files (median 97.7 KiB) are each read whole "
        f"{'once' if epochs == 1 else '3 times'}: pack them into a few large shards")
    assert "HDF5 or Parquet" in a.recommendation and "node-local" in a.recommendation
    assert "keep it open" not in a.recommendation
    assert "h5py" in a.example


def test_files_read_in_part_keep_the_open_once_remedy():
    """The same opens on files read only in part (a header each): not the pipeline shape."""
    df = _loader_files(2000, 100_000, 3, read=512)
    df["POSIX_MAX_BYTE_READ"] = 100_000 - 1  # a byte near the end was read once
    (a,) = run_advice(job(), {"POSIX": df})["metadata-heavy"]
    assert "small_files_read_whole" not in a.evidence
    assert a.recommendation.startswith("open each file once and keep it open")


def test_few_small_files_keep_the_open_once_remedy():
    cfg = config.load(None)
    n = cfg["metadata-heavy"]["shard_min_files"] - 1
    (a,) = run_advice(job(), {"POSIX": _loader_files(n, 1000, 40)})["metadata-heavy"]
    assert "small_files_read_whole" not in a.evidence


def test_files_opened_once_are_not_told_to_keep_them_open():
    """8,000 small outputs, each created, written once and closed (a pool of workers
    writing one file per task): each is opened once already, so the remedy is fewer,
    larger files, not "open each file once and keep it open"."""
    df = frame([{"path": f"/out/r{i}.dat", "rank": i % 4, "POSIX_OPENS": 1, "POSIX_STATS": 1,
                 "POSIX_WRITES": 1, "POSIX_BYTES_WRITTEN": 10, "POSIX_SIZE_WRITE_0_100": 1,
                 "POSIX_F_META_TIME": 0.0015, "POSIX_F_WRITE_TIME": 0.00002}
                for i in range(8000)])
    (a,) = run_advice(job(4), {"POSIX": df})["metadata-heavy"]
    assert a.recommendation.startswith(
        "each of the 8,000 files opened is opened about once (8,000 opens): the cost is one "
        "open and close per file, not per access: write fewer, larger files")
    assert "keep it open" not in a.recommendation and a.example == ""
    # read in part (a header each), opened once: the read remedy, no write call named
    df = frame([{"path": f"/in/r{i}.dat", "rank": 0, "POSIX_OPENS": 1, "POSIX_STATS": 1,
                 "POSIX_READS": 1,
                 "POSIX_BYTES_READ": 512, "POSIX_MAX_BYTE_READ": 99_999,
                 "POSIX_F_META_TIME": 0.0015, "POSIX_F_READ_TIME": 0.00002}
                for i in range(8000)])
    (a,) = run_advice(job(), {"POSIX": df})["metadata-heavy"]
    assert ": pack the files into a few large shards" in a.recommendation
    assert "write" not in a.recommendation and "keep it open" not in a.recommendation
