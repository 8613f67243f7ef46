"""The cost model (advice/cost.py, docs/advice.md "The cost model") on constructed
counters: times made from a known latency and bandwidth, so the fit must find them and
the bounds must hold them; and a finding priced by it in the whole advice."""

import pytest

from iochar import advice
from iochar.advice.cost import estimate, fit
from report_frames import frame
from report_frames import job as run_job

KiB, MiB = 1 << 10, 1 << 20
LAT, BW = 1e-3, 1e9  # the truth the times are made from: 1 ms an access, 1 GB/s


def t(n, b):
    return n * LAT + b / BW


def test_fit_finds_latency_and_bandwidth():
    n = [100, 400, 10, 50]
    b = [100 * 4 * KiB, 400 * 4 * KiB, 10 * 64 * MiB, 50 * 1 * MiB]
    lat, spb, err = fit(n, b, [t(x, y) for x, y in zip(n, b)])
    assert lat == pytest.approx(LAT, rel=1e-9) and 1 / spb == pytest.approx(BW, rel=1e-9)
    assert err < 1e-9


def test_huge_aligned_and_tiny_misaligned():
    """Each rank reads 8 aligned 256 MiB blocks and some hundreds of 512-byte pieces: the
    pieces are 97% of the accesses, 0.04% of the bytes. Counting would charge them 97% of
    the time; the fit charges each its latency (1 ms) and one 4 KiB block."""
    tiny = [300, 500, 700, 900]
    n = [8 + k for k in tiny]
    b = [8 * 256 * MiB + k * 512 for k in tiny]
    ts = [t(8, 8 * 256 * MiB) + t(k, k * 512) for k in tiny]
    k = sum(tiny)
    e = estimate((sum(n), sum(b), sum(ts)), k, (k * 4096, k * 4096), (n, b, ts))
    assert e.how == "model" and e.latency == pytest.approx(LAT)
    assert e.bandwidth == pytest.approx(BW)
    assert e.seconds == pytest.approx(k * (LAT + 4096 / BW), rel=1e-6)  # 2.41 s
    assert e.low <= e.seconds <= e.high
    assert e.high < 0.25 * sum(ts)  # not the 97% the counts would say
    # without the fit (one observation: no spread), only the bounds: by bytes, by count
    b_only = estimate((sum(n), sum(b), sum(ts)), k, (k * 4096, k * 4096))
    assert b_only.how == "bounds" and b_only.seconds is None
    assert b_only.low == pytest.approx(sum(ts) * k * 4096 / sum(b))
    assert b_only.high == pytest.approx(sum(ts) * k / sum(n))


def test_all_equal_rows_give_bounds_only():
    """Every rank the same: nothing separates latency from bandwidth."""
    n, b, ts = [1000] * 4, [1000 * 8 * KiB] * 4, [2.0] * 4
    assert fit(n, b, ts) is None
    e = estimate((4000, sum(b), 8.0), 1000, (0.0, 0.0), (n, b, ts))
    assert (e.how, e.seconds, e.low, e.high) == ("bounds", None, 0.0, 2.0)


def test_only_one_size():
    """One access size everywhere: the count and bytes bounds are one number, so a
    finding charged its own bytes has an exact cost even without a fit."""
    n = [100, 200, 300]
    b = [x * 4 * KiB for x in n]
    ts = [0.1, 0.2, 0.3]
    assert fit(n, b, ts) is None  # mean sizes do not spread
    e = estimate((600, sum(b), 0.6), 150, (150 * 4 * KiB, 150 * 4 * KiB), (n, b, ts))
    assert e.low == pytest.approx(0.15) and e.high == pytest.approx(0.15)
    # charged nothing at the bandwidth (latency only): from 0 up to the count share
    e = estimate((600, sum(b), 0.6), 150, (0.0, 0.0), (n, b, ts))
    assert e.low == 0.0 and e.high == pytest.approx(0.15)


def test_nothing_to_charge():
    assert estimate((0, 0, 0), 0, (0, 0)).high == 0.0
    assert estimate((10, 100, 1.0), 0, (0, 0)).high == 0.0


def test_fit_is_not_negative():
    """Rows whose times fall with more accesses (noise): a coefficient clamps at 0."""
    lat, spb, _ = fit([10, 1000], [10 * MiB, 1000 * KiB], [1.0, 0.5])
    assert lat >= 0 and spb >= 0


def posix_rows(tiny, misaligned=True):
    rows = []
    for r, k in enumerate(tiny):
        rows.append({"path": "/s/in.dat", "rank": r, "POSIX_OPENS": 1, "POSIX_READS": 8 + k,
                     "POSIX_BYTES_READ": 8 * 256 * MiB + k * 512,
                     "POSIX_SIZE_READ_0_100": 0, "POSIX_SIZE_READ_100_1K": k,
                     "POSIX_SIZE_READ_100M_1G": 8,
                     "POSIX_ACCESS1_ACCESS": 512, "POSIX_ACCESS1_COUNT": k,
                     "POSIX_ACCESS2_ACCESS": 256 * MiB, "POSIX_ACCESS2_COUNT": 8,
                     "POSIX_CONSEC_READS": 7 + k, "POSIX_SEQ_READS": 7 + k,
                     "POSIX_FILE_NOT_ALIGNED": k if misaligned else 0,
                     "POSIX_FILE_ALIGNMENT": 4096,
                     "POSIX_F_READ_TIME": t(8, 8 * 256 * MiB) + t(k, k * 512)})
    return frame(rows)


def test_tiny_misaligned_reads_beside_huge_ones_are_info():
    """The whole advice on those counters, run 60 s on 4 ranks: the pieces (smaller than
    the block: small first, the misalignment folded under them) cost ~2.4 s over all
    ranks, 1% of the run: INFO, and the text says it is a fitted estimate."""
    from iochar.html import cost_note
    ctx = advice.Context(run_job(4, 1, 60.0), {"POSIX": posix_rows([300, 500, 700, 900])})
    out = advice.evaluate(ctx)
    assert not [a for a in out if a.severity != "info"], [a.message for a in out]
    (a,) = [a for a in out if a.id == "small-io"]
    assert [f["id"] for f in a.folded] == ["misaligned"]
    mis = a.folded[0]
    # (4 of the 2,400 are end-of-file probes; a 512-byte piece off the block crosses a
    # boundary one time in 8: charged 512 bytes to a block, the middle as the value)
    assert mis["seconds"] == pytest.approx(2396 * (LAT + (512 + 4096) / 2 / BW), rel=1e-6)
    assert a.cost["seconds"] == pytest.approx(mis["seconds"])  # the cause carries it
    assert a.cost["fitted"] == 1.0
    assert cost_note(a.cost).startswith(" (about 2.40 s: 2.40 s to 2.41 s over all ranks"), \
        cost_note(a.cost)


def test_a_trace_gives_the_times_directly():
    """With iochar's trace (one row per access: length, start, end), latency and
    bandwidth are fitted on the accesses themselves, even where the counters' rows are
    all alike: "traced"."""
    import numpy as np
    import pandas as pd
    lengths = np.array([512] * 50 + [4 * MiB] * 10, dtype=np.int64)
    dur = 1e-3 + lengths / 1e9
    start = np.cumsum(np.r_[0.0, dur[:-1]])
    tr = pd.DataFrame({"module": ["POSIX"] * 60, "op": ["read"] * 60, "rank": 0,
                       "length": lengths, "start": start, "end": start + dur})
    rows = posix_rows([500, 500, 500, 500])  # every rank alike: no fit from counters
    ctx = advice.Context(run_job(4, 1, 60.0), {"POSIX": rows}, trace=tr)
    obs, timed = ctx.fit_obs("POSIX")
    assert timed and len(obs[0]) == 60
    e = ctx.estimate("POSIX", (4032, float(rows["POSIX_BYTES_READ"].sum()),
                               float(rows["POSIX_F_READ_TIME"].sum())), 2000, (0.0, 0.0))
    assert e.how == "trace" and e.latency == pytest.approx(1e-3)
    assert e.bandwidth == pytest.approx(1e9)
    assert advice.Context(run_job(4, 1, 60.0), {"POSIX": rows}).fit_obs("POSIX")[1] is False


def mixed_rows(lat, bw, noise, rng):
    """The planted huge-and-tiny workload's counters (advice_corpus mixed): each of 4
    ranks reads 64 aligned 4 MiB blocks and 500, 1,000, 1,500, 2,000 misaligned 100-byte
    pieces; its read time made from latency lat and bandwidth bw, plus `noise` seconds
    of a loaded machine (the other ranks and processes take its core: a time only
    grows), drawn per rank."""
    rows = []
    for r in range(4):
        k = 500 * (r + 1)
        secs = (64 + k) * lat + (64 * 4 * MiB + 100 * k) / bw + rng.exponential(noise)
        rows.append({"path": f"/s/mixed.{r}", "rank": r, "POSIX_OPENS": 1,
                     "POSIX_READS": 64 + k, "POSIX_BYTES_READ": 64 * 4 * MiB + 100 * k,
                     "POSIX_SIZE_READ_0_100": k, "POSIX_SIZE_READ_4M_10M": 64,
                     "POSIX_ACCESS1_ACCESS": 100, "POSIX_ACCESS1_COUNT": k,
                     "POSIX_ACCESS2_ACCESS": 4 * MiB, "POSIX_ACCESS2_COUNT": 64,
                     "POSIX_SEQ_READS": 63 + k, "POSIX_CONSEC_READS": 63,
                     "POSIX_FILE_NOT_ALIGNED": k, "POSIX_FILE_ALIGNMENT": 4096,
                     "POSIX_F_READ_TIME": secs})
    return frame(rows)




def corpus_cfg():
    from iochar.advice import config
    cfg = config.load()
    cfg["severity"] = dict(cfg["severity"], short_seconds=0.005)
    return cfg


def test_tiny_reads_beside_huge_ones_stay_info_under_load():
    """The mixed workload's counters with the times a loaded 2-core machine gives (up to
    tens of ms more per rank, at random, on reads of ~60 ms a rank in a 0.5 s run): the
    tiny reads cost ~1 us each, 1-3% of the read time. The four rows fit latency and
    bandwidth with 2 degrees of freedom; a latency the rows cannot tell from 0 is priced
    as 0 (cost.estimate: the smallest share inside the fit's margins), so no draw of the
    noise makes the pieces WARN (before, one in several did: 1,500 more pieces on one
    rank and 20 ms more time there is a 13 us "latency")."""
    import numpy as np
    rng = np.random.default_rng(40)
    cfg = corpus_cfg()
    worst = 0.0
    for _ in range(300):
        rows = mixed_rows(1e-6, 5e9, 0.02, rng)
        ctx = advice.Context(run_job(4, 1, 0.5), {"POSIX": rows})
        for a in advice.evaluate(ctx, cfg):
            if a.id in ("small-io", "misaligned"):
                assert a.severity == "info", (a.message, a.cost)
                worst = max(worst, a.cost.get("run_share", 0.0))
    # under the share at which even a short run's finding is WARN (severity short_share);
    # the worst draw is one whose noise grows with the pieces' count, rank by rank: rows
    # no fit can tell from a latency of ~30 us
    assert worst < 0.10
    # quiet (no noise): the model's value, fitted: ~0.5% of the run
    ctx = advice.Context(run_job(4, 1, 0.5), {"POSIX": mixed_rows(1e-6, 5e9, 0.0, rng)})
    got = [a for a in advice.evaluate(ctx, cfg) if a.id in ("small-io", "misaligned")]
    assert got and all(a.severity == "info" and a.cost["fitted"] == 1.0 for a in got)
    assert max(a.cost["run_share"] for a in got) < 0.01


def test_a_latency_the_rows_do_show_is_still_charged():
    """The same rows with 200 us a piece (the pieces ~80% of the read time): under the
    same noise the fit tells the latency from 0 and the pieces (their random-access
    finding, small-io folded under it, and the misalignment) are HIGH or WARN in all but
    a few draws (rows whose noise hides the latency: the margin charges what the rows
    support, no more)."""
    import numpy as np
    rng = np.random.default_rng(41)
    cfg = corpus_cfg()
    found = 0
    for _ in range(100):
        ctx = advice.Context(run_job(4, 1, 0.5), {"POSIX": mixed_rows(2e-4, 5e9, 0.02, rng)})
        found += any(a.severity in ("warn", "high") for a in advice.evaluate(ctx, cfg)
                     if a.id in ("random-access", "small-io", "misaligned"))
    assert found >= 90
    # quiet: found, and the latency fitted
    ctx = advice.Context(run_job(4, 1, 0.5), {"POSIX": mixed_rows(2e-4, 5e9, 0.0, rng)})
    a = advice.evaluate(ctx, cfg)[0]
    assert a.severity == "high" and a.cost["latency_s"] == pytest.approx(2e-4, rel=0.01)


def test_margins_of_a_noisy_fit():
    """fit(margins=True): the exact rows have none; noisy rows a margin larger than the
    latency they hint at; as many observations as coefficients: nothing to measure by."""
    n = [100, 400, 10, 50]
    b = [100 * 4 * KiB, 400 * 4 * KiB, 10 * 64 * MiB, 50 * 1 * MiB]
    *_, d_lat, d_spb = fit(n, b, [t(x, y) for x, y in zip(n, b)], margins=True)
    assert d_lat < 1e-9 * LAT and d_spb < 1e-9 / BW
    n = [564, 1064, 1564, 2064]
    b = [64 * 4 * MiB + 100 * (k - 64) for k in n]
    ts = [0.061, 0.052, 0.080, 0.064]  # one loaded run's rows: noise, not latency
    lat, _, _, d_lat, _ = fit(n, b, ts, margins=True)
    assert d_lat > lat
    e = estimate((sum(n), sum(b), sum(ts)), 5000, (0.0, 0.0), (n, b, ts))
    assert e.how == "model" and e.seconds == pytest.approx(e.low)
    assert e.seconds < 0.01 * sum(ts)
    assert fit([10, 1000], [10 * MiB, 1000 * KiB], [1.0, 0.5], margins=True)[3:] == (0.0, 0.0)
