"""Lustre composite (PFL) layouts on the report side: Darshan's LUSTRE_COMP_* counters
listed per component (darshan._components), and the stripe advice judged on the
component the accesses fell in (advice/pfl.py, Context.stripe_unit), on constructed
frames (no Lustre here)."""

import math

import numpy as np
import pandas as pd

from iochar import advice
from iochar.advice import pfl
from iochar.darshan import COMP_COUNTERS, _components, _lustre
from report_frames import MiB, fnv1a64, frame, run_advice
from report_frames import job as run_job

GiB = 1 << 30
INIT, STALE = 0x10, 0x01
# a progressive layout: 1 MiB on one stripe, up to 1 GiB on 4, then 4 MiB stripes on 16
PFL = [(0, MiB, MiB, 1, INIT, 0, 1), (MiB, GiB, MiB, 4, INIT, 0, 1),
       (GiB, -1, 4 * MiB, 16, INIT, 0, 1)]


def text(comps):
    return ";".join(":".join(str(v) for v in c) for c in comps)


def test_components_from_darshan_counters():
    """PyDarshan gives each component's LUSTRE_COMP_* counters in its order; the frame
    lists them as start:end:size:count:flags:mirror:pattern."""
    names = list(COMP_COUNTERS)
    comps = [{"counters": np.array([MiB, 1, 1, INIT, 0, MiB, 0])},
             {"counters": np.array([4 * MiB, 16, 1, INIT, MiB, -1, 0]),
              "ost_ids": np.arange(16)}]
    assert _components(comps, names) == \
        f"0:{MiB}:{MiB}:1:{INIT}:0:1;{MiB}:-1:{4 * MiB}:16:{INIT}:0:1"
    df = _lustre([{"id": 7, "rank": -1, "components": comps}], {7: "/lus/f"}, names)
    assert df["LUSTRE_COMPONENTS"].iat[0] == 2 and df["LUSTRE_OSTS"].iat[0] == 16
    assert df["LUSTRE_STRIPE_SIZE"].iat[0] == MiB  # the first component's, as before
    assert pfl.parse(df["LUSTRE_COMPS"].iat[0])[1][:4] == (MiB, math.inf, 4 * MiB, 16)


def test_the_component_holding_most_of_the_accessed_bytes():
    comps = pfl.parse(text(PFL))
    assert pfl.covering(comps, 512 << 10)[3] == 1  # all within the first MiB
    assert pfl.covering(comps, 512 * MiB)[3] == 4  # 511 of 512 MiB in the second
    assert pfl.covering(comps, 8 * GiB)[3] == 16  # 7 of 8 GiB in the third
    assert pfl.covering(comps, 0) is None  # nothing accessed: nothing to choose
    # DOM, a stale mirror and an extension placeholder hold no OST data
    odd = [(0, MiB, MiB, 0, INIT, 0, 0x100), (MiB, -1, MiB, 2, INIT | STALE, 0, 1),
           (MiB, -1, 2 * MiB, 8, INIT, 1, 1), (MiB, -1, 8 * MiB, 1, 0x40, 0, 1)]
    assert pfl.covering(pfl.parse(text(odd)), 4 * GiB)[2:4] == (2 * MiB, 8)
    # mirrors covering the same bytes: the lowest id
    both = [(0, -1, MiB, 2, INIT, 3, 1), (0, -1, 2 * MiB, 4, INIT, 1, 1)]
    assert pfl.covering(pfl.parse(text(both)), GiB)[5] == 1
    assert pfl.parse("1:2:3;x:1:2:3:4:5:6") == []  # not seven integers: left out


def lustre_frame(path, comps):
    return pd.DataFrame({"rank": np.array([-1]), "record_id": np.array([fnv1a64(path)],
                                                                         dtype=np.uint64),
                         "path": [path], "LUSTRE_STRIPE_SIZE": [float(comps[0][2])],
                         "LUSTRE_STRIPE_COUNT": [float(comps[0][3])],
                         "LUSTRE_COMPONENTS": [len(comps)], "LUSTRE_OSTS": [21.0],
                         "LUSTRE_OST_IDS": [""], "LUSTRE_COMPS": [text(comps)]})


def test_stripe_advice_uses_the_component_the_accesses_fell_in():
    """3 MiB writes up to 6 GiB of a PFL file: they fall in the 4 MiB-stripe component
    (the first component's 1 MiB stripe would make every write span three stripes):
    the misalignment is judged against 4 MiB, and the stripe-size finding names 4 MiB."""
    path = "/lus/run/pfl.dat"
    n = 2048
    px = frame([{"path": path, "rank": -1, "POSIX_OPENS": 16, "POSIX_WRITES": n,
                 "POSIX_BYTES_WRITTEN": n * 3 * MiB, "POSIX_SIZE_WRITE_1M_4M": n,
                 "POSIX_ACCESS1_ACCESS": 3 * MiB, "POSIX_ACCESS1_COUNT": n,
                 "POSIX_FILE_NOT_ALIGNED": 1500, "POSIX_FILE_ALIGNMENT": 4096,
                 "POSIX_MAX_BYTE_WRITTEN": n * 3 * MiB - 1, "POSIX_MAX_BYTE_READ": -1,
                 "POSIX_F_WRITE_TIME": 40.0}])
    frames = {"POSIX": px, "LUSTRE": lustre_frame(path, PFL)}
    ctx = advice.Context(run_job(16, run=10.0), frames)
    assert ctx.stripe_unit([path]) == 4 * MiB
    assert ctx.lustre_components[fnv1a64(path)][:2] == (4 * MiB, 16)
    got = run_advice(run_job(16, run=10.0), frames)
    found = {a.id: a for a in got.get("stripe-size", []) + got.get("misaligned", [])}
    assert found, got
    a = next(iter(found.values()))
    assert "4 MiB" in a.message and "1 MiB" not in a.message, a.message
    # the same writes within the first GiB: the 4-stripe 1 MiB component
    px["POSIX_MAX_BYTE_WRITTEN"] = 512 * MiB
    ctx = advice.Context(run_job(16, run=10.0), {"POSIX": px,
                                                 "LUSTRE": lustre_frame(path, PFL)})
    assert ctx.stripe_unit([path]) == MiB


def comp_columns(prefix, comps, slots=4):
    """<prefix>COMP<N>_* counters of these components (iochar's POSIX_LUSTRE_, the
    LUSTRE frame's LUSTRE_): 0 past the last, as the runtime writes them."""
    out = {}
    for n in range(slots):
        c = comps[n] if n < len(comps) else (0,) * 7
        for field, v in zip(pfl.FIELDS, c):
            out[f"{prefix}COMP{n + 1}_{field}"] = v
    return out


# two mirrors of a two-component PFL, the second mirror's components listed first
# (mirror ids 2, 1); the file's 4 components as the runtime keeps them: extent order
FLR = [(0, GiB, MiB, 1, INIT, 1, 1), (0, GiB, 2 * MiB, 2, INIT, 2, 1),
       (GiB, -1, 8 * MiB, 8, INIT, 1, 1), (GiB, -1, 16 * MiB, 4, INIT, 2, 1)]


def posix_rows(path, per_rank, size, comps):
    """A 16-rank job, each rank writing its own contiguous block of a shared file in
    `size` pieces (per_rank bytes at rank * per_rank): per-rank POSIX rows."""
    rows = []
    for k in range(16):
        hi = (k + 1) * per_rank
        n = per_rank // size
        mine = [c for c in comps if c[0] < hi]
        rows.append({"path": path, "rank": k, "POSIX_OPENS": 1, "POSIX_WRITES": n,
                     "POSIX_BYTES_WRITTEN": per_rank, "POSIX_SIZE_WRITE_1M_4M": n,
                     "POSIX_ACCESS1_ACCESS": size, "POSIX_ACCESS1_COUNT": n,
                     "POSIX_MAX_BYTE_WRITTEN": hi - 1, "POSIX_MAX_BYTE_READ": 0,
                     "POSIX_FILE_NOT_ALIGNED": n, "POSIX_FILE_ALIGNMENT": 4096,
                     "POSIX_F_WRITE_TIME": 4.0, "POSIX_LUSTRE_STRIPE_SIZE": mine[-1][2],
                     "POSIX_LUSTRE_STRIPE_COUNT": mine[-1][3],
                     "POSIX_LUSTRE_COMPONENTS": len(comps)})
    return rows


def lustre_rows(path, per_rank, comps):
    """The LUSTRE module's records of that job: per rank, the components its accesses
    covered (a rank that wrote lower lists fewer: the first of the others')."""
    return [{"path": path, "rank": k, "LUSTRE_COMPONENTS": len(comps),
             "LUSTRE_COMPS_LISTED": len(mine), **comp_columns("LUSTRE_", mine)}
            for k in range(16) for mine in [[c for c in comps if c[0] < (k + 1) * per_rank]]]


def test_bytes_per_component_from_the_size_and_offset_evidence():
    comps = pfl.parse(text(PFL))
    # one rank's block [3 GiB, 4 GiB): all in the 16-stripe component
    assert pfl.attribute(comps, [(4 * GiB, GiB)]) == [0.0, 0.0, float(GiB)]
    # the file written once from its start: each component its own extent
    assert pfl.attribute(comps, [(2 * GiB, 2 * GiB)]) == [MiB, GiB - MiB, GiB]
    # read three times over [0, 2 MiB): 3x each part
    assert pfl.attribute(comps, [(2 * MiB, 6 * MiB)]) == [3 * MiB, 3 * MiB, 0.0]
    # mirrors: each byte counted once, in the lowest mirror id
    flr = pfl.parse(text(FLR))
    assert pfl.attribute(flr, [(2 * GiB, 2 * GiB)]) == [GiB, 0.0, GiB, 0.0]
    # partly instantiated (the runtime lists instantiated components only): bytes past
    # the last listed one are left out, not given to it
    assert pfl.attribute(comps[:2], [(2 * GiB, 2 * GiB)]) == [MiB, GiB - MiB]
    # the columns' form gives the same components
    df = pd.DataFrame([comp_columns("LUSTRE_", FLR), comp_columns("LUSTRE_", [])])
    assert pfl.from_columns(df, "LUSTRE_") == [flr, []]


def test_the_columns_are_the_runtime_list():
    """The LUSTRE module's counters are the C list's (wrappers/lustre_counters.h): the
    fields pfl reads, N = 1..4."""
    import re
    from pathlib import Path
    src = (Path(__file__).resolve().parents[2] / "wrappers" / "lustre_counters.h").read_text()
    fields = re.findall(r"X\(LUSTRE_COMP##N##_(\w+), ANY\)", src)
    assert sorted(fields) == sorted(pfl.FIELDS)  # read by name: the order is free
    assert re.findall(r"LUSTRE_COMP\(X, (\d)\)", src) == ["1", "2", "3", "4"]


def test_stripe_advice_from_the_components_an_iochar_log_carries(tmp_path):
    """An iochar log (written, then read back) whose shared file has a mirrored PFL
    layout: 16 ranks write 256 MiB blocks in 3 MiB writes, 3 GiB of the 4 past 1 GiB.
    The bytes fall mostly in mirror 1's 8 MiB-stripe component: the stripe the advice
    judges, not the open's first component (1 MiB) nor mirror 2's copies."""
    import iochar
    from report_frames import write

    path = "/lus/run/flr.dat"
    per = 256 * MiB
    px = frame(posix_rows(path, per, 3 * MiB, FLR))
    out = tmp_path / "flr.iochar"
    write(out, run_job(16, run=10.0), {"POSIX": px, "LUSTRE": frame(lustre_rows(path, per, FLR))})
    log = iochar.open(str(out))
    rd, lu = log.records("POSIX"), log.records("LUSTRE")
    assert lu["LUSTRE_COMP4_STRIPE_SIZE"].max() == 16 * MiB  # carried and read back
    assert lu["LUSTRE_COMP3_EXT_END"].min() == -1  # to the end of the file
    ctx = advice.Context(log.job, {"POSIX": rd, "LUSTRE": lu})
    got = ctx.lustre_components[fnv1a64(path)]
    assert got[:4] == (8 * MiB, 8, GiB, math.inf)
    assert got[4:] == (3 * GiB, 4 * GiB)  # bytes in it, of the file's
    assert ctx.stripe_unit([path]) == 8 * MiB
    found = run_advice(log.job, {"POSIX": rd, "LUSTRE": lu})
    msgs = [a.message for a in found.get("stripe-size", [])]
    assert any("into 8 MiB stripes" in m for m in msgs), msgs
    # the same job writing 32 MiB blocks (512 MiB in all): mirror 1's 1 MiB component
    px = frame(posix_rows(path, 32 * MiB, 3 * MiB, FLR))
    ctx = advice.Context(run_job(16, run=10.0),
                         {"POSIX": px, "LUSTRE": frame(lustre_rows(path, 32 * MiB, FLR))})
    assert ctx.stripe_unit([path]) == MiB


def test_darshan_comp_columns_give_the_same_choice():
    """A Darshan log's LUSTRE frame (one shared row, float columns, no LUSTRE_COMPS
    text): the same component as from an iochar log's LUSTRE records."""
    path = "/lus/run/flr.dat"
    px = frame(posix_rows(path, 256 * MiB, 3 * MiB, FLR))
    px = px[[c for c in px.columns if not c.startswith("POSIX_LUSTRE_")]]
    lu = pd.DataFrame({"rank": np.array([-1]),
                       "record_id": np.array([fnv1a64(path)], dtype=np.uint64),
                       "path": [path], "LUSTRE_STRIPE_SIZE": [float(MiB)],
                       "LUSTRE_STRIPE_COUNT": [1.0], "LUSTRE_COMPONENTS": [4],
                       **{k: [float(v)] for k, v in comp_columns("LUSTRE_", FLR).items()}})
    ctx = advice.Context(run_job(16, run=10.0), {"POSIX": px, "LUSTRE": lu})
    assert ctx.lustre_components[fnv1a64(path)][:2] == (8 * MiB, 8)
    assert ctx.stripe_unit([path]) == 8 * MiB
