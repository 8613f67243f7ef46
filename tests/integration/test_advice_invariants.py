"""What holds for the advice on every log of the corpora (the real Darshan logs of
tests/corpus/darshan-real, iochar's own logs of tests/corpus) and on constructed jobs:
nothing folded under a finding is more severe or costlier than it, the first finding is
the costliest of its severity, and a remedy names calls of the accesses' direction only
(a read-only pattern's read calls, a write-only one's write calls)."""

import functools
import re
from pathlib import Path

import pytest

from iochar import advice
from iochar import summary as S
from iochar.jobreport import build, load
from report_frames import MiB, frame
from report_frames import job as run_job

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
REAL = sorted((CORPUS / "darshan-real").glob("*.darshan"))
OWN = sorted(CORPUS.glob("*.iochar"))
RANK = {"high": 0, "warn": 1, "info": 2}

# Calls (and hints) that name one direction; prose ("reads, locks and rewrites") is not
# a call. A remedy for read-only accesses names none of WRITES, and the other way round.
WRITES = re.compile(r"\b(pwrite|pwritev|fwrite|fprintf|fputs|H5Dwrite|to_parquet|to_csv|"
                    r"MPI_File_i?write\w*|nc_put\w*|ncmpi_i?put\w*|romio_cb_write|"
                    r"romio_ds_write|H5Pset_coll_metadata_write)\b|\bwrite\(\)")
READS = re.compile(r"\b(pread|preadv|fread|fgets|fscanf|H5Dread|read_table|read_parquet|"
                   r"read_csv|MPI_File_i?read\w*|nc_get\w*|ncmpi_i?get\w*|romio_cb_read|"
                   r"romio_ds_read)\b|\bread\(\)")


@functools.cache
def real_report(path):
    from iochar import darshan as D
    return build(S.gather(D.DarshanLog(path)) | {"observed": None, "truncated": set()})


def reports():
    out = []
    if REAL:
        try:
            import darshan  # noqa: F401
            out += [(p.name, lambda p=p: real_report(p)) for p in REAL]
        except ImportError:
            pass
    out += [(p.name, lambda p=p: build(load([str(p)]))) for p in OWN]
    return out


def cost(d):
    """(what the cost is a share of, the share): the run's time, else the I/O time, else
    the bytes (a finding priced in bytes is compared with those priced in bytes only)."""
    c = d.get("cost") or {}
    for k in ("run_share", "io_time_share", "bytes_share"):
        if k in c:
            return k, c[k]
    return None, 0.0


def check_folds(adv):
    """Nothing folded outranks its parent; within a severity the costlier comes first
    (among findings priced alike)."""
    for a in adv:
        for f in a["folded"]:
            assert RANK[f["severity"]] >= RANK[a["severity"]], (a["id"], f)
            (ka, ca), (kf, cf) = cost(a), cost(f)
            assert kf is None or kf != ka or cf <= ca * (1 + 1e-9), (a["id"], a["cost"], f)
    for i, a in enumerate(adv):
        for b in adv[i + 1:]:
            (ka, ca), (kb, cb) = cost(a), cost(b)
            assert RANK[a["severity"]] <= RANK[b["severity"]], (a, b)
            if a["severity"] == b["severity"] and ka == kb and ka is not None:
                assert ca >= cb * (1 - 1e-9), (a["id"], a["cost"], b["id"], b["cost"])


def direction(a):
    """'read' or 'write' when the finding's files saw accesses of one direction only."""
    r = sum(v.get("reads", 0) for v in a["layers"].values())
    w = sum(v.get("writes", 0) for v in a["layers"].values())
    return "read" if r and not w else "write" if w and not r else None


def check_direction(adv):
    for a in adv:
        text = a["recommendation"] + "\n" + a["example"]
        d = direction(a)
        if d == "read":
            assert not WRITES.search(text), (a["id"], WRITES.search(text), text)
        elif d == "write":
            assert not READS.search(text), (a["id"], READS.search(text), text)


@pytest.mark.parametrize("name,rep", reports(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_corpus_log(name, rep):
    adv = rep()["advice"]
    check_folds(adv)
    check_direction(adv)


# ---- every pattern rule, on constructed jobs read-only and write-only

KiB = 1 << 10


def posix(d, n=5000, size=4 * KiB, consec=True, path="/s/a.dat", rank=0, t=1.0, extra=None):
    D = "READ" if d == "read" else "WRITE"
    row = {"path": path, "rank": rank, "POSIX_OPENS": 1, f"POSIX_{D}S": n,
           f"POSIX_BYTES_{'READ' if d == 'read' else 'WRITTEN'}": n * size,
           f"POSIX_SIZE_{D}_1K_10K": n, "POSIX_ACCESS1_ACCESS": size, "POSIX_ACCESS1_COUNT": n,
           f"POSIX_CONSEC_{D}S": n - 1 if consec else 0,
           f"POSIX_SEQ_{D}S": n - 1 if consec else n // 2,
           "POSIX_FILE_ALIGNMENT": 4096, "POSIX_FILE_NOT_ALIGNED": 0 if consec else n,
           f"POSIX_F_{D}_TIME": t}
    row.setdefault("POSIX_CONSEC_READS", 0)  # the columns a log always has
    row.setdefault("POSIX_CONSEC_WRITES", 0)
    row.update(extra or {})
    return row


def jobs(d):
    """Constructed jobs with one direction: small, random and misaligned POSIX accesses;
    the same through STDIO; strided pieces of a shared file; independent MPI-IO."""
    D = "READ" if d == "read" else "WRITE"
    yield "posix", {"POSIX": frame([posix(d, consec=False)])}, 1
    yield "stdio", {"STDIO": frame([{"path": "/s/t.txt", "rank": 0, "STDIO_OPENS": 1,
                                     f"STDIO_{D}S": 200000,
                                     f"STDIO_BYTES_{'READ' if d == 'read' else 'WRITTEN'}":
                                     200000 * 40, f"STDIO_F_{D}_TIME": 2.0}])}, 1
    rows = [posix(d, n=2000, path="/s/shared.dat", rank=r, t=0.5,
                  extra={"POSIX_STRIDE1_STRIDE": 12 * KiB, "POSIX_STRIDE1_COUNT": 1999})
            for r in range(4)]
    yield "strided", {"POSIX": frame(rows)}, 4
    mp = frame([{"path": "/s/shared.dat", "rank": r, "MPIIO_INDEP_OPENS": 1,
                 f"MPIIO_INDEP_{D}S": 2000,
                 f"MPIIO_BYTES_{'READ' if d == 'read' else 'WRITTEN'}": 2000 * 4 * KiB,
                 f"MPIIO_SIZE_{D}_AGG_1K_10K": 2000, f"MPIIO_F_{D}_TIME": 0.6}
                for r in range(4)])
    rows = [posix(d, n=2000, path="/s/shared.dat", rank=r, t=0.5, consec=False)
            for r in range(4)]
    yield "mpiio", {"MPIIO": mp, "POSIX": frame(rows)}, 4


@pytest.mark.parametrize("d", ["read", "write"])
def test_every_rule_follows_the_direction(d):
    fired = set()
    for _name, frames, nprocs in jobs(d):
        ctx = advice.Context(run_job(nprocs, 1, 4.0), frames)
        found = advice.evaluate(ctx)
        adv = [a.to_dict() for a in found]
        for a in adv:
            fired.add(a["id"])
            fired |= {f["id"] for f in a["folded"]}
            text = a["recommendation"] + "\n" + a["example"]
            other = WRITES if d == "read" else READS
            assert not other.search(text), (d, a["id"], other.search(text), text)
        check_folds(adv)
    # the pattern rules all had their say in this direction
    assert {"small-io", "random-access", "misaligned", "strided-shared", "no-collective",
            "stdio-heavy"} <= fired, fired


def test_a_mib_is_a_mib():
    assert MiB == 1 << 20
