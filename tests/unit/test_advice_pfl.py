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
