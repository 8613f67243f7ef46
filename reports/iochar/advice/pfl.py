"""Lustre composite (PFL) layouts: each file's components as the LUSTRE frame lists
them (LUSTRE_COMP<N>_*: an iochar log's LUSTRE module, Darshan's counters in a Darshan
log's frame, or its LUSTRE_COMPS text: docs/log-format.md), the bytes of the file's
accesses attributed to them from the size and offset evidence, and which component
holds most (the one the stripe advice judges)."""

from __future__ import annotations

import math
import re

import numpy as np

# lcme_flags and lmm_pattern bits (Lustre's public lustre_user.h; docs/log-format.md)
STALE, EXTENSION, PARITY = 0x01, 0x40, 0x80  # not the file's current data
PATTERN_MDT = 0x100  # Data-on-MDT: no OST stripes


def parse(text) -> list[tuple]:
    """(start, end, stripe size, stripe count, flags, mirror id, pattern) per component;
    end is math.inf for "to the end of the file" (-1); entries that are not seven
    integers are left out."""
    out = []
    for part in str(text or "").split(";"):
        try:
            v = [int(x) for x in part.split(":")]
        except ValueError:
            continue
        if len(v) != 7:
            continue
        start, end = v[0], math.inf if v[1] < 0 else v[1]
        out.append((max(start, 0), end, *v[2:]))
    return out


# a component's counters, in the order of parse's tuples; the columns are
# <prefix>COMP<N>_<field> (LUSTRE_COMP<N>_*: wrappers/lustre_counters.h, Darshan's names)
FIELDS = ("EXT_START", "EXT_END", "STRIPE_SIZE", "STRIPE_COUNT", "FLAGS", "MIRROR_ID",
          "STRIPE_PATTERN")
_SLOT = re.compile(r"COMP(\d+)_EXT_END$")


def slots(columns, prefix: str) -> list[int]:
    """The component numbers N that have all of <prefix>COMP<N>_<field> in columns."""
    cols = set(columns)
    ns = sorted({int(m.group(1)) for c in cols if c.startswith(prefix)
                 and (m := _SLOT.search(c[len(prefix):]))})
    return [n for n in ns if all(f"{prefix}COMP{n}_{f}" in cols for f in FIELDS)]


def from_columns(df, prefix: str) -> list[list[tuple]]:
    """Per row of df, its components from the <prefix>COMP<N>_* columns, as parse gives
    them. A slot with EXT_END 0 or NaN holds none (iochar writes 0s, a Darshan frame
    NaN past a file's last component: no component ends at 0)."""
    ns = slots(df.columns, prefix)
    out = [[] for _ in range(len(df))]
    for n in ns:
        vals = np.column_stack([np.asarray(df[f"{prefix}COMP{n}_{f}"], dtype=np.float64)
                                for f in FIELDS])
        for i, v in enumerate(vals):
            if not np.isfinite(v[1]) or v[1] == 0:
                continue
            v = [int(x) if np.isfinite(x) else -1 for x in v]
            out[i].append((max(v[0], 0), math.inf if v[1] < 0 else v[1], *v[2:]))
    return out


def _data(c) -> bool:
    """A component holding the file's current data: not stale, parity or an extension
    placeholder (flags -1: unknown, taken as data)."""
    flags = c[4]
    return not (flags >= 0 and flags & (STALE | EXTENSION | PARITY))


def _ost(c) -> bool:
    """Data on OSTs, with a known stripe size: what the stripe advice can judge."""
    return c[2] > 0 and not (c[6] >= 0 and c[6] & PATTERN_MDT)


def extent(hi: float, nbytes: float) -> tuple[float, float, float]:
    """Where a row's bytes are taken to lie, from its evidence: the highest byte
    accessed (hi: one past it) and the bytes moved. The counters give no lowest
    offset, so: the nbytes just below hi, [hi - nbytes, hi), when they fit (the
    tightest extent that ends at hi: a rank's block of a shared file, or the whole
    file read or written once from its start); else [0, hi) read or written nbytes/hi
    times over. -> (start, end, bytes per byte of extent)."""
    if hi <= 0 or nbytes <= 0:
        return 0.0, 0.0, 0.0
    if nbytes <= hi:
        return hi - nbytes, hi, 1.0
    return 0.0, hi, nbytes / hi


def attribute(comps: list[tuple], rows) -> list[float]:
    """Bytes per component (in comps' order): each row (hi, nbytes) lays its bytes over
    its extent (extent), and each part of it goes to the data component covering it, of
    mirrors the lowest id (the others are copies: a read is served by one, a write
    copies later); a part no data component covers (an extent past a partly
    instantiated layout) is left out."""
    got = [0.0] * len(comps)
    live = sorted((i for i, c in enumerate(comps) if _data(c)),
                  key=lambda i: (comps[i][5], i))
    if not live:
        return got
    for hi, nbytes in rows:
        lo, top, per = extent(float(hi), float(nbytes))
        if top <= lo:
            continue
        cuts = sorted({lo, top, *(x for i in live for x in comps[i][:2] if lo < x < top)})
        for a, b in zip(cuts, cuts[1:]):
            for i in live:  # the lowest mirror covering [a, b)
                if comps[i][0] <= a and b <= comps[i][1]:
                    got[i] += (b - a) * per
                    break
    return got


def holding(comps: list[tuple], rows) -> tuple | None:
    """The OST component holding most of the bytes the rows moved (attribute): the one
    the stripe advice judges; of equal shares the lowest mirror id, then the first
    listed. None when no OST component holds any (nothing accessed, or all on the MDT)."""
    got = attribute(comps, rows)
    best = None
    for i, c in enumerate(comps):
        if _ost(c) and got[i] > 0 and (best is None or got[i] > got[best] or
                                       got[i] == got[best] and c[5] < comps[best][5]):
            best = i
    return comps[best] if best is not None else None


def covering(comps: list[tuple], hi: float) -> tuple | None:
    """The OST data component holding most of the bytes [0, hi) (hi: one past the highest
    byte the job accessed): holding for the file read or written once from its start.
    None when hi is unknown or no component covers any of it."""
    if not hi or hi <= 0 or not comps:
        return None
    return holding(comps, [(hi, hi)])
