"""The finding model on hand-built frames: severity from measured cost, symptoms folded
under their cause, POSIX traffic attributed to the layer that opened the file, the
rules that read STRIDE tables, MOUNTS and several layers, and the JSON fields."""

import numpy as np
import pandas as pd

from iochar import advice
from iochar import summary as S
from report_frames import MiB, frame, run_advice
from report_frames import job as run_job


def job(nprocs=4, nnodes=1, run=0.0):
    """A job of unknown run time: severity from the share of the I/O time, so each rule
    is judged on its own (the run's share is tested with run_job)."""
    return run_job(nprocs, nnodes, run)

KiB = 1 << 10


def small(path, n, t, rank=0):
    return {"path": path, "rank": rank, "POSIX_OPENS": 1, "POSIX_WRITES": n,
            "POSIX_BYTES_WRITTEN": n * 4 * KiB, "POSIX_SIZE_WRITE_1K_10K": n,
            "POSIX_ACCESS1_ACCESS": 4 * KiB, "POSIX_ACCESS1_COUNT": n,
            "POSIX_CONSEC_WRITES": n - 1, "POSIX_SEQ_WRITES": n - 1,
            "POSIX_FILE_ALIGNMENT": 4096, "POSIX_F_WRITE_TIME": t}


def large(path, t, rank=0):
    return {"path": path, "rank": rank, "POSIX_OPENS": 1, "POSIX_WRITES": 100,
            "POSIX_BYTES_WRITTEN": 100 * 4 * MiB, "POSIX_SIZE_WRITE_1M_4M": 100,
            "POSIX_CONSEC_WRITES": 99, "POSIX_SEQ_WRITES": 99, "POSIX_FILE_ALIGNMENT": 4096,
            "POSIX_F_WRITE_TIME": t}


def test_severity_follows_the_share_of_io_time():
    # the same 5000 small writes: all of the I/O time, 10%, then 0.5% of it (one access
    # size in the small file: the cost is bounded, not fitted, so at most WARN)
    for t_big, sev in ((0.0, "warn"), (9.0, "warn"), (199.0, "info")):
        df = frame([small("/s/a.dat", 5000, 1.0), large("/s/b.dat", t_big)])
        (a,) = run_advice(job(1), {"POSIX": df})["small-io"]
        assert a.severity == sev, (t_big, a.cost)
        assert a.cost["io_time_s"] == 1.0 + t_big
        # the small writes' latency, at most their 1 s (the two files' sizes fit it)
        assert a.cost["seconds"] <= 1.0
        assert a.cost["io_time_share"] == a.cost["seconds"] / (1.0 + t_big)


def test_json_keeps_the_contract_and_adds_the_model():
    df = frame([small("/s/a.dat", 5000, 1.0)])
    ctx = advice.Context(job(1), {"POSIX": df})
    (d,) = [a.to_dict() for a in advice.evaluate(ctx)]
    assert {"id", "severity", "message", "evidence"} <= set(d)
    assert d["rank"] == 1 and d["remedy"] == d["recommendation"]
    assert d["cost"] == {"seconds": 1.0, "io_time_s": 1.0, "io_time_share": 1.0,
                         "low_s": 0.0, "high_s": 1.0, "fitted": 0.0, "traced": 0.0}
    assert d["layers"]["POSIX"]["writes"] == 5000 and d["folded"] == []
    assert d["files"] == ["/s/a.dat"]


def h5_tiny():
    h5d = frame([{"path": "/s/x.h5:/grid", "rank": 0, "H5D_WRITES": 1, "H5D_LAYOUT": 3,
                  "H5D_DATASPACE_NDIMS": 2, "H5D_CHUNK_SIZE_D1": 1, "H5D_CHUNK_SIZE_D2": 100,
                  "H5D_DATATYPE_SIZE": 8, "H5D_DATASPACE_NPOINTS": 2000 * 100,
                  "H5D_BYTES_WRITTEN": 1600000, "H5D_F_WRITE_TIME": 2.0}])
    h5f = frame([{"path": "/s/x.h5", "rank": 0, "H5F_OPENS": 1}])
    px = small("/s/x.h5", 2000, 1.9)
    px.update({"POSIX_FILE_NOT_ALIGNED": 1990, "POSIX_SIZE_WRITE_1K_10K": 0,
               "POSIX_SIZE_WRITE_100_1K": 2000, "POSIX_ACCESS1_ACCESS": 800,
               "POSIX_BYTES_WRITTEN": 2000 * 800})
    return {"H5D": h5d, "H5F": h5f, "POSIX": frame([px])}


def test_tiny_chunks_fold_the_misalignment_they_cause():
    got = run_advice(job(1), h5_tiny())
    assert set(got) == {"hdf5-chunking"}  # no POSIX small-io: the file is HDF5's
    (a,) = got["hdf5-chunking"]
    assert a.rank == 1 and [f["id"] for f in a.folded] == ["misaligned"]
    assert "H5Pset_alignment" in a.folded[0]["message"] or "HDF5" in a.folded[0]["message"]
    assert "H5Pset_chunk(dcpl, 2, {1310, 100})" in a.recommendation
    assert a.layers["HDF5"]["writes"] == 1 and a.layers["POSIX"]["writes"] == 2000


def test_posix_traffic_of_a_library_file_is_not_the_applications():
    fr = h5_tiny()
    fr["H5D"]["H5D_LAYOUT"] = 2  # contiguous: no chunking finding
    got = run_advice(job(1), fr)
    # the misalignment is reported for HDF5, with HDF5's call, not as POSIX small-io
    assert set(got) == {"misaligned"}
    (a,) = got["misaligned"]
    assert a.module == "H5F" and a.message.startswith("HDF5:")
    assert "H5Pset_alignment(fapl, threshold, 4 KiB)" in a.recommendation


def strided_shared(nprocs=4):
    n = 2000
    return frame([{"path": "/s/sh.dat", "rank": -1, "POSIX_OPENS": nprocs, "POSIX_WRITES": n,
                   "POSIX_BYTES_WRITTEN": n * 4 * KiB, "POSIX_SIZE_WRITE_1K_10K": n,
                   "POSIX_ACCESS1_ACCESS": 4 * KiB, "POSIX_ACCESS1_COUNT": n,
                   "POSIX_SEQ_WRITES": n - nprocs, "POSIX_STRIDE1_STRIDE": 12 * KiB,
                   "POSIX_STRIDE1_COUNT": n - nprocs, "POSIX_FILE_ALIGNMENT": 4096,
                   "POSIX_F_WRITE_TIME": 2.0}])


def test_strided_shared_from_the_stride_table():
    got = run_advice(job(4), {"POSIX": strided_shared()})
    assert set(got) == {"strided-shared"}
    (a,) = got["strided-shared"]
    assert a.evidence == {"POSIX_WRITES": 2000, "POSIX_STRIDE1_STRIDE": 12 * KiB,
                          "strided_ops": 1996, "mean_access_bytes": 4 * KiB, "nranks": 4}
    assert "interleaved: stride = 3 x piece" in a.message
    assert "MPI_File_set_view" in a.recommendation and "MPI_File_write_all" in a.recommendation
    assert [f["id"] for f in a.folded] == ["small-io"]


def test_data_sieving_read_modify_write():
    mp = frame([{"path": "/s/v.dat", "rank": -1, "MPIIO_INDEP_OPENS": 4, "MPIIO_INDEP_WRITES": 32,
                 "MPIIO_BYTES_WRITTEN": 8 * MiB, "MPIIO_VIEWS": 4, "MPIIO_F_WRITE_TIME": 3.0}])
    px = frame([{"path": "/s/v.dat", "rank": -1, "POSIX_OPENS": 4, "POSIX_READS": 32,
                 "POSIX_WRITES": 32, "POSIX_BYTES_READ": 24 * MiB,
                 "POSIX_BYTES_WRITTEN": 32 * MiB, "POSIX_F_READ_TIME": 1.0,
                 "POSIX_F_WRITE_TIME": 1.5}])
    (a,) = run_advice(job(4), {"MPIIO": mp, "POSIX": px})["data-sieving"]
    assert a.evidence["POSIX_BYTES_READ"] == 24 * MiB and a.evidence["MPIIO_BYTES_WRITTEN"] == 8 * MiB
    assert "MPI_File_write_all" in a.recommendation and "romio_ds_write=disable" in a.recommendation
    # (24 + 32 - 8) of 56 MiB moved were not asked for: that share of the file's 3 s
    assert round(a.cost["seconds"], 6) == round(3.0 * 48 / 56, 6)


def test_layer_amplification_of_a_netcdf4_file():
    var = frame([{"path": "/s/o.nc:v", "rank": 0, "NC_VAR_PUTS": 10,
                  "NC_VAR_BYTES_WRITTEN": 4 * MiB, "NC_VAR_F_WRITE_TIME": 1.0}])
    fil = frame([{"path": "/s/o.nc", "rank": 0, "NC_FILE_CREATES": 1, "NC_FILE_FORMAT": 4}])
    px = frame([{"path": "/s/o.nc", "rank": 0, "POSIX_OPENS": 1, "POSIX_WRITES": 40,
                 "POSIX_READS": 30, "POSIX_BYTES_WRITTEN": 8 * MiB, "POSIX_BYTES_READ": 6 * MiB,
                 "POSIX_SIZE_WRITE_100K_1M": 40, "POSIX_F_WRITE_TIME": 0.9}])
    got = run_advice(job(1), {"NC_VAR": var, "NC_FILE": fil, "POSIX": px})
    assert set(got) == {"layer-amplification"}
    (a,) = got["layer-amplification"]
    assert a.evidence["factor"] == 3.5 and a.module == "NC_VAR"
    assert "nc_put_vara" in a.recommendation


def test_file_per_process_at_scale():
    rows = [{"path": f"/s/out.{i}", "rank": i % 64, "POSIX_OPENS": 1, "POSIX_WRITES": 1,
             "POSIX_BYTES_WRITTEN": 8 * MiB, "POSIX_SIZE_WRITE_4M_10M": 1,
             "POSIX_F_META_TIME": 0.01, "POSIX_F_WRITE_TIME": 0.01} for i in range(2048)]
    (a,) = run_advice(job(64), {"POSIX": frame(rows)})["file-per-process"]
    assert a.evidence["files_unique"] == 2048 and "MPI_File_write_at_all" in a.recommendation
    assert round(a.cost["io_time_share"], 6) == 0.5


def test_the_aggregate_record_feeds_no_pattern_rule():
    row = {"path": "<AGGREGATE>", "rank": 0, "POSIX_READS": 50000, "POSIX_SEQ_READS": 100,
           "POSIX_SEEKS": 50000, "POSIX_RW_SWITCHES": 20000, "POSIX_WRITES": 100,
           "POSIX_SIZE_READ_1M_4M": 50000, "POSIX_BYTES_READ": 50000 * 2 * MiB,
           "POSIX_F_READ_TIME": 5.0}
    df = frame([row])
    df["record_id"] = np.array([S.AGGREGATE_ID], dtype=np.uint64)
    got = run_advice(job(1), {"POSIX": df})
    assert not {"random-access", "many-seeks", "rw-switches"} & set(got)


def test_block_size_from_mounts_when_the_record_has_none():
    row = {"path": "/lus/a.dat", "rank": 0, "POSIX_WRITES": 400, "POSIX_FILE_NOT_ALIGNED": 400,
           "POSIX_BYTES_WRITTEN": 400 * 300 * KiB, "POSIX_SIZE_WRITE_100K_1M": 400,
           "POSIX_ACCESS1_ACCESS": 300 * KiB, "POSIX_ACCESS1_COUNT": 400,
           "POSIX_F_WRITE_TIME": 1.0}
    mounts = pd.DataFrame({"mount_point": ["/", "/lus"], "fs_type": ["ext4", "lustre"],
                           "block_size": [4096, MiB]})
    ctx = advice.Context(job(1), {"POSIX": frame([row])}, mounts=mounts)
    (a,) = advice.evaluate(ctx)
    assert a.id == "misaligned" and "(1 MiB)" in a.message
    assert "300 KiB, is not a multiple of 1 MiB" in a.message
    # nothing known to align to: no finding rather than a guess
    assert advice.evaluate(advice.Context(job(1), {"POSIX": frame([row])})) == []


def test_one_direction_change_per_open_is_a_phase_not_a_problem():
    rows = [{"path": f"/s/f{i}", "rank": 0, "POSIX_OPENS": 1, "POSIX_WRITES": 2,
             "POSIX_READS": 2, "POSIX_RW_SWITCHES": 1, "POSIX_SIZE_WRITE_1M_4M": 2,
             "POSIX_SIZE_READ_1M_4M": 2} for i in range(3000)]
    assert "rw-switches" not in run_advice(job(1), {"POSIX": frame(rows)})


def test_serial_classic_netcdf_gets_no_parallel_remedy():
    var = frame([{"path": f"/s/o.nc:v{i}", "rank": 0, "NC_VAR_PUTS": 50,
                  "NC_VAR_IS_RECORD_VAR": 1, "NC_VAR_BYTES_WRITTEN": 50 * 4096}
                 for i in range(6)])
    fil = frame([{"path": "/s/o.nc", "rank": 0, "NC_FILE_CREATES": 1, "NC_FILE_FORMAT": 1}])
    (a,) = run_advice(job(1), {"NC_VAR": var, "NC_FILE": fil})["netcdf-record-vars"]
    assert "NC_COLLECTIVE" not in a.recommendation and "count[0] > 1" in a.recommendation
    assert "6 record variable(s) in 1 classic-format file(s)" in a.message


def test_collective_calls_are_not_suggested_to_one_process():
    mp = frame([{"path": "/s/m.dat", "rank": 0, "MPIIO_INDEP_OPENS": 1,
                 "MPIIO_INDEP_WRITES": 5000, "MPIIO_SIZE_WRITE_1K_10K": 5000,
                 "MPIIO_BYTES_WRITTEN": 5000 * 4 * KiB, "MPIIO_F_WRITE_TIME": 1.0}])
    got = run_advice(job(1), {"MPIIO": mp})
    assert set(got) == {"small-io"}
    assert "_all" not in got["small-io"][0].recommendation


def test_stripe_size_from_the_lustre_layout_when_the_log_has_it():
    row = {"path": "/lus/a.dat", "rank": 0, "POSIX_WRITES": 400, "POSIX_FILE_NOT_ALIGNED": 400,
           "POSIX_FILE_ALIGNMENT": 4096, "POSIX_LUSTRE_STRIPE_SIZE": 4 * MiB,
           "POSIX_BYTES_WRITTEN": 400 * 3 * MiB, "POSIX_SIZE_WRITE_1M_4M": 400,
           "POSIX_ACCESS1_ACCESS": 3 * MiB, "POSIX_ACCESS1_COUNT": 400,
           "POSIX_F_WRITE_TIME": 1.0}
    (a,) = run_advice(job(1), {"POSIX": frame([row])})["misaligned"]
    assert "the stripe unit (4 MiB)" in a.message and "3 MiB, is not a multiple" in a.message


def test_collective_buffer_smaller_than_an_aggregators_share():
    # 16 ranks x 64 collective writes of 8 MiB: 128 MiB per call over 2 aggregators
    # with 4 MiB buffers: 16 rounds per call
    mp = frame([{"path": "/s/c.dat", "rank": -1, "MPIIO_COLL_OPENS": 16,
                 "MPIIO_COLL_WRITES": 16 * 64, "MPIIO_BYTES_WRITTEN": 16 * 64 * 8 * MiB,
                 "MPIIO_SIZE_WRITE_4M_10M": 16 * 64, "MPIIO_HINT_CB_BUFFER_SIZE": 4 * MiB,
                 "MPIIO_HINT_CB_NODES": 2, "MPIIO_F_WRITE_TIME": 10.0}])
    (a,) = run_advice(job(16, 2), {"MPIIO": mp})["hints"]
    assert a.evidence == {"MPIIO_HINT_CB_BUFFER_SIZE": 4 * MiB, "MPIIO_HINT_CB_NODES": 2,
                          "bytes_per_call": 128 * MiB, "rounds_per_call": 16}
    assert 'MPI_Info_set(info, "cb_buffer_size", "67108864")' in a.recommendation
    mp["MPIIO_HINT_CB_BUFFER_SIZE"] = 64 * MiB
    assert "hints" not in run_advice(job(16, 2), {"MPIIO": mp})


def test_no_collective_remedy_for_a_file_one_rank_uses():
    # 4 processes, but the MPI-IO file is rank 2's alone (MPI_COMM_SELF)
    mp = frame([{"path": "/s/own.dat", "rank": 2, "MPIIO_INDEP_OPENS": 1,
                 "MPIIO_INDEP_WRITES": 5000, "MPIIO_SIZE_WRITE_1K_10K": 5000,
                 "MPIIO_BYTES_WRITTEN": 5000 * 4 * KiB, "MPIIO_F_WRITE_TIME": 1.0}])
    got = run_advice(job(4), {"MPIIO": mp})
    assert set(got) == {"small-io"}
    assert "_all" not in got["small-io"][0].recommendation


def test_severity_is_judged_against_the_run():
    """The same 5000 small writes taking 1 s: WARN in a 2 s serial run (up to half of it:
    bounds only), INFO in a 100 s one (1%), INFO in a 2 s run of 64 ranks where each rank
    bears 16 ms of it."""
    df = frame([small("/s/a.dat", 5000, 1.0)])
    (a,) = run_advice(run_job(1, run=2.0), {"POSIX": df})["small-io"]
    assert a.severity == "warn" and a.cost["run_share"] == 0.5
    assert a.cost["rank_seconds"] == 1.0 and a.cost["run_s"] == 2.0
    (a,) = run_advice(run_job(1, run=100.0), {"POSIX": df})["small-io"]
    assert a.severity == "info" and a.cost["run_share"] == 0.01
    # a test-sized job: a quarter of the run, but 16 ms on each of the 64 ranks
    rows = [small(f"/s/a{i}.dat", 5000, 1.0 / 64, rank=i) for i in range(64)]
    (a,) = run_advice(run_job(64, run=1.0 / 16), {"POSIX": frame(rows)})["small-io"]
    assert round(a.cost["run_share"], 6) == 0.25 and a.severity == "info"


def test_files_that_are_not_regular_stay_out_of_pattern_rules():
    """A FIFO (POSIX_FILE_TYPE 1) read in 4 KiB pieces is not small-io; the same counters
    on a regular file (8) are."""
    row = small("/s/pipe", 5000, 1.0)
    row["POSIX_FILE_TYPE"] = 1
    assert "small-io" not in run_advice(job(1), {"POSIX": frame([row])})
    row["POSIX_FILE_TYPE"] = 8
    assert "small-io" in run_advice(job(1), {"POSIX": frame([row])})


def test_fill_values_of_an_hdf5_file_under_collective_writes():
    """POSIX writes 1.5x what MPI-IO was given and reads it back, on a file named .h5
    with no HDF5 records: the HDF5 fill-value remedy, named at HDF5."""
    mp = frame([{"path": "/s/out.h5", "rank": -1, "MPIIO_COLL_OPENS": 4,
                 "MPIIO_COLL_WRITES": 64, "MPIIO_BYTES_WRITTEN": 64 * MiB,
                 "MPIIO_F_WRITE_TIME": 4.0}])
    px = frame([{"path": "/s/out.h5", "rank": -1, "POSIX_OPENS": 4, "POSIX_WRITES": 96,
                 "POSIX_READS": 5000, "POSIX_BYTES_WRITTEN": 96 * MiB,
                 "POSIX_BYTES_READ": 32 * MiB, "POSIX_SIZE_READ_0_100": 4000,
                 "POSIX_F_WRITE_TIME": 2.0, "POSIX_F_READ_TIME": 1.0}])
    (a,) = run_advice(job(4), {"MPIIO": mp, "POSIX": px})["data-sieving"]
    assert a.message.startswith("HDF5 (by the file name")
    assert "H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER)" in a.recommendation
    assert a.evidence["POSIX_SIZE_READ_0_100"] == 4000 and a.module == "H5D"


def test_a_read_only_job_gets_read_remedies():
    """2048 files each read by one rank: the remedy reads (MPI_File_read_at_all), and a
    misaligned reader is told to start each read()/pread(), never a write call."""
    rows = [{"path": f"/s/in.{i}", "rank": i % 64, "POSIX_OPENS": 1, "POSIX_READS": 1,
             "POSIX_BYTES_READ": 8 * MiB, "POSIX_SIZE_READ_4M_10M": 1,
             "POSIX_F_META_TIME": 0.01, "POSIX_F_READ_TIME": 0.01} for i in range(2048)]
    (a,) = run_advice(job(64), {"POSIX": frame(rows)})["file-per-process"]
    assert "MPI_File_read_at_all" in a.recommendation and "write" not in a.recommendation
    row = {"path": "/s/in.dat", "rank": 0, "POSIX_OPENS": 1, "POSIX_READS": 500,
           "POSIX_BYTES_READ": 500 * 200 * KiB, "POSIX_SIZE_READ_100K_1M": 500,
           "POSIX_FILE_NOT_ALIGNED": 500, "POSIX_FILE_ALIGNMENT": 4096,
           "POSIX_F_READ_TIME": 1.0}
    (a,) = run_advice(job(1), {"POSIX": frame([row])})["misaligned"]
    assert "start each read()/pread()" in a.recommendation and "write" not in a.recommendation


def test_stripe_size_against_the_access_size():
    """16 ranks write a shared Lustre file independently in 3 MiB pieces on 4 MiB
    stripes: two ranks write in one stripe. The stripe-size finding names -S 3M and the
    striping_unit hint, and folds the misalignment it causes; 3 MiB stripes, or the same
    writes made collectively, are quiet. 4 MiB reads on 64 KiB stripes are cut into 64
    pieces each: -S 4M."""
    row = {"path": "/lus/run/s.dat", "rank": -1, "POSIX_OPENS": 16, "POSIX_WRITES": 4000,
           "POSIX_BYTES_WRITTEN": 4000 * 3 * MiB, "POSIX_SIZE_WRITE_1M_4M": 4000,
           "POSIX_ACCESS1_ACCESS": 3 * MiB, "POSIX_ACCESS1_COUNT": 4000,
           "POSIX_FILE_NOT_ALIGNED": 3000, "POSIX_FILE_ALIGNMENT": 4096,
           "POSIX_LUSTRE_STRIPE_COUNT": 8, "POSIX_LUSTRE_STRIPE_SIZE": 4 * MiB,
           "POSIX_F_WRITE_TIME": 40.0}
    got = run_advice(run_job(16, run=10.0), {"POSIX": frame([row])})
    (a,) = got["stripe-size"]
    assert set(got) == {"stripe-size"} and a.severity == "high"
    assert a.evidence == {"LUSTRE_STRIPE_SIZE": 4 * MiB, "common_size": 3 * MiB,
                          "writes": 4000, "kind": "straddle",
                          "suggested_stripe_size": 3 * MiB}
    assert "lfs setstripe -S 3M" in a.recommendation
    assert a.example == 'lfs setstripe -S 3M /lus/run\nMPI_Info_set(info, "striping_unit", ' \
        '"3145728");'
    assert [f["id"] for f in a.folded] == ["misaligned"] and a.cost["seconds"] == 40.0
    row["POSIX_LUSTRE_STRIPE_SIZE"] = 3 * MiB
    assert "stripe-size" not in run_advice(run_job(16, run=10.0), {"POSIX": frame([row])})
    row["POSIX_LUSTRE_STRIPE_SIZE"] = 4 * MiB
    mp = frame([{"path": "/lus/run/s.dat", "rank": -1, "MPIIO_COLL_OPENS": 16,
                 "MPIIO_COLL_WRITES": 4000, "MPIIO_BYTES_WRITTEN": 4000 * 3 * MiB}])
    assert "stripe-size" not in run_advice(run_job(16, run=10.0),
                                           {"POSIX": frame([row]), "MPIIO": mp})
    rd = {"path": "/lus/run/in.dat", "rank": 0, "POSIX_OPENS": 1, "POSIX_READS": 2000,
          "POSIX_BYTES_READ": 2000 * 4 * MiB, "POSIX_SIZE_READ_4M_10M": 2000,
          "POSIX_CONSEC_READS": 1999, "POSIX_SEQ_READS": 1999,
          "POSIX_ACCESS1_ACCESS": 4 * MiB, "POSIX_ACCESS1_COUNT": 2000,
          "POSIX_LUSTRE_STRIPE_COUNT": 1, "POSIX_LUSTRE_STRIPE_SIZE": 64 * KiB,
          "POSIX_F_READ_TIME": 5.0}
    (a,) = run_advice(run_job(1, run=10.0), {"POSIX": frame([rd])})["stripe-size"]
    assert a.evidence["kind"] == "large" and "cut into 64 stripe pieces" in a.message
    assert "lfs setstripe -S 4M" in a.recommendation and a.severity == "high"


def random_indep(rank, size=4 * KiB, bins="1K_10K"):
    """8000 independent MPI-IO reads at random offsets; POSIX sees the same."""
    mp = {"path": "/s/db.dat", "rank": rank, "MPIIO_INDEP_OPENS": 4, "MPIIO_INDEP_READS": 8000,
          "MPIIO_BYTES_READ": 8000 * size, f"MPIIO_SIZE_READ_{bins}": 8000,
          "MPIIO_ACCESS1_ACCESS": size, "MPIIO_ACCESS1_COUNT": 8000,
          "MPIIO_F_READ_TIME": 4.0}
    px = {"path": "/s/db.dat", "rank": rank, "POSIX_OPENS": 4, "POSIX_READS": 8000,
          "POSIX_BYTES_READ": 8000 * size, f"POSIX_SIZE_READ_{bins}": 8000,
          "POSIX_ACCESS1_ACCESS": size, "POSIX_ACCESS1_COUNT": 8000,
          "POSIX_SEQ_READS": 4000, "POSIX_CONSEC_READS": 100, "POSIX_FILE_ALIGNMENT": 4096,
          "POSIX_F_READ_TIME": 3.5}
    return {"MPIIO": frame([mp]), "POSIX": frame([px])}


def test_random_reads_under_independent_mpiio():
    """The jumps POSIX sees under independent MPI-IO are named at MPI-IO (file view,
    collective read), never dropped: on their own when the reads are large (256 KiB),
    folded under the small requests when small (4 KiB: one remedy, bigger requests),
    under the missing collective calls on a file all 4 ranks share."""
    got = run_advice(run_job(1, run=10.0), random_indep(0, 256 * KiB, "100K_1M"))
    (a,) = got["random-access"]
    # one access size: bounds only, at most WARN (cost.estimate)
    assert set(got) == {"random-access"} and a.module == "MPIIO" and a.severity == "warn"
    assert a.message.startswith("MPIIO (independent calls): 99% of reads of 256 KiB (7,899")
    assert a.evidence["random_reads"] == 7899 and a.evidence["backward_reads"] == 3999
    assert "MPI_File_read_at call" in a.recommendation and "write" not in a.recommendation
    assert "MPI_File_read_all" in a.example
    got = run_advice(run_job(1, run=10.0), random_indep(0))
    (a,) = got["small-io"]
    assert set(got) == {"small-io"} and a.module == "MPIIO"
    assert [f["id"] for f in a.folded] == ["random-access"]
    assert a.folded[0]["message"].startswith("MPIIO (independent calls): 99% of reads of 4 KiB")
    got = run_advice(run_job(4, run=10.0), random_indep(-1))
    (a,) = got["no-collective"]
    assert set(got) == {"no-collective"} and "MPI_File_read_at_all" in a.recommendation
    assert {f["id"] for f in a.folded} == {"random-access", "small-io"}


def test_hdf5_metadata_writes_and_chunk_rereads_get_the_hdf5_calls():
    """A Darshan-like log without the H5 module: 5000 independent writes of 512 bytes by
    4 ranks to out.h5 are HDF5's metadata flushes (H5Pset_coll_metadata_write first);
    a .h5 file read 8x over needs a larger chunk cache (H5Pset_chunk_cache)."""
    mp = frame([{"path": "/s/out.h5", "rank": -1, "MPIIO_INDEP_OPENS": 4,
                 "MPIIO_INDEP_WRITES": 5000, "MPIIO_BYTES_WRITTEN": 5000 * 512,
                 "MPIIO_SIZE_WRITE_100_1K": 5000, "MPIIO_ACCESS1_ACCESS": 512,
                 "MPIIO_ACCESS1_COUNT": 5000, "MPIIO_F_WRITE_TIME": 4.0}])
    (a,) = run_advice(job(4), {"MPIIO": mp})["no-collective"]  # shared: the root cause
    assert a.message.startswith("HDF5 (by the file name): 5,000 independent operations")
    assert a.recommendation.startswith("HDF5 metadata") and a.module == "H5D"
    assert "H5Pset_dxpl_mpio" in a.recommendation
    assert "H5Pset_coll_metadata_write(fapl, 1)" in a.recommendation
    assert a.example.startswith("H5Pset_coll_metadata_write(fapl, 1);")
    assert a.folded[0]["message"].startswith("MPIIO on an HDF5 file (by its name)")
    mp["rank"] = 0  # one rank's file: the small writes stand, no collective remedy
    (a,) = run_advice(job(4), {"MPIIO": mp})["small-io"]
    assert a.message.startswith("MPIIO on an HDF5 file (by its name): 100% of writes")
    assert "H5P" not in a.recommendation
    mp["path"], mp["rank"] = "/s/out.dat", -1  # not HDF5: the MPI-IO remedy as before
    (a,) = run_advice(job(4), {"MPIIO": mp})["no-collective"]
    assert "H5P" not in a.recommendation and a.message.startswith("MPIIO: 5,000")
    px = frame([{"path": "/s/grid.h5", "rank": 0, "POSIX_OPENS": 1, "POSIX_READS": 4000,
                 "POSIX_BYTES_READ": 512 * MiB, "POSIX_MAX_BYTE_READ": 64 * MiB - 1,
                 "POSIX_SIZE_READ_100K_1M": 4000, "POSIX_F_READ_TIME": 2.0}])
    (a,) = run_advice(job(1), {"POSIX": px})["redundant-reads"]
    assert a.recommendation.startswith("HDF5: a chunk cache") and \
        "H5Pset_chunk_cache(dapl" in a.recommendation and "H5Pset_cache" in a.recommendation
    assert a.example.startswith("H5Pset_chunk_cache(dapl,")
