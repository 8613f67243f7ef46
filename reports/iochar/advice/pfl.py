"""Lustre composite (PFL) layouts as the LUSTRE frame lists them (LUSTRE_COMPS): which
component holds the bytes a file's accesses fell in."""

from __future__ import annotations

import math

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


def covering(comps: list[tuple], hi: float) -> tuple | None:
    """The OST data component holding most of the bytes [0, hi) (hi: one past the highest
    byte the job accessed): not DOM, not a stale, parity or extension placeholder, with
    a known stripe size; of mirrors, the lowest id. None when hi is unknown or no
    component covers any of it."""
    if not hi or hi <= 0 or not comps:
        return None
    best, most = None, 0.0
    for c in comps:
        start, end, size, count, flags, mirror, pattern = c
        if size <= 0 or flags >= 0 and flags & (STALE | EXTENSION | PARITY) or \
                pattern >= 0 and pattern & PATTERN_MDT:
            continue
        got = min(end, hi) - start
        if got > most or got == most and best is not None and got > 0 and mirror < best[5]:
            best, most = c, got
    return best if most > 0 else None
