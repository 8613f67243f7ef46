"""The cost model: what a finding's accesses cost, estimated from what the log supports.

One function, estimate() (docs/advice.md, "The cost model"): the seconds a finding
explains lie between bounds from counts and bytes alone, and, where the job's own
numbers separate a per-access latency from a bandwidth (or a trace times each access),
a fitted model gives one value inside them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# A fit needs observations whose mean access sizes differ by this factor at least: on
# rows that all move the same size per access, latency and bandwidth cannot be told apart
# (and on rows barely apart, noise decides the split).
SPREAD = 2.0
# Student's t, 97.5% (two-sided 95%), for 1..10 degrees of freedom; past 10 about
# 1.96 + 2.4 / dof (within 0.02). The fitted latency and seconds per byte are trusted
# to within t x their standard error: a fit on a few noisy rows (four ranks on a loaded
# machine) has 2 degrees of freedom and a t of 4.3.
_T975 = (12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23)


def t975(dof: int) -> float:
    return _T975[dof - 1] if dof <= len(_T975) else 1.96 + 2.4 / dof


@dataclass
class Estimate:
    """What a finding costs, in seconds summed over ranks.

    low..high always hold (bounds from counts and bytes); `seconds` is the model's value
    inside them, None when the log cannot separate latency from bandwidth."""

    low: float
    high: float
    seconds: float | None
    how: str  # "trace": fitted on timed accesses; "model": on counters; "bounds"
    latency: float | None = None  # fitted seconds per access
    bandwidth: float | None = None  # fitted bytes per second (None: unbounded)
    latency_margin: float | None = None  # the latency is known to within this (fit)

    def to_cost(self) -> dict:
        """Numbers only (a finding's cost is a table of numbers, docs/report-json.md):
        fitted 0 (bounds only) or 1, traced 1 when fitted on a trace's timed accesses."""
        out = {"low_s": self.low, "high_s": self.high,
               "fitted": float(self.how != "bounds"), "traced": float(self.how == "trace")}
        if self.latency is not None:
            out["latency_s"] = self.latency
        if self.latency_margin is not None:
            out["latency_margin_s"] = self.latency_margin
        if self.bandwidth is not None:
            out["bandwidth_Bps"] = self.bandwidth
        return out


def fit(n, b, t, margins: bool = False) -> tuple | None:
    """(latency s, s per byte, relative error) of t ~ n*latency + b*s_per_byte fitted by
    non-negative least squares, each observation weighted by 1/t (relative errors: a
    slow row must not drown the rest); None when the observations' mean access sizes do
    not spread by SPREAD (nothing tells latency from bandwidth). margins: also the two
    coefficients' margins, t975(dof) x their standard errors from the residuals (0 for a
    coefficient held at 0, and for both when the fit has no degree of freedom left: as
    many observations as coefficients, nothing to measure the noise by)."""
    n, b, t = (np.asarray(v, np.float64) for v in (n, b, t))
    ok = (n > 0) & (t > 0) & np.isfinite(t) & (b >= 0)
    n, b, t = n[ok], b[ok], t[ok]
    if len(n) < 2:
        return None
    mean = b / n
    if mean.max() < SPREAD * max(mean.min(), 1.0):
        return None
    w = 1.0 / np.sqrt(t)  # rows scaled by 1/sqrt(t): squared residuals weighted 1/t
    a = np.column_stack([n * w, b * w])
    y = t * w
    best = None
    for cols in ((0, 1), (0,), (1,)):  # the free solution, else one coefficient at 0
        sol, *_ = np.linalg.lstsq(a[:, cols], y, rcond=None)
        if (sol < 0).any():
            continue
        coef = np.zeros(2)
        coef[list(cols)] = sol
        res = float(np.sum((a @ coef - y) ** 2))
        if best is None or res < best[1]:
            best = (coef, res)
        if cols == (0, 1):
            break  # the unconstrained optimum is feasible: it is the best
    if best is None:
        return None
    coef, res = best
    pred = n * coef[0] + b * coef[1]
    err = float(np.sqrt(np.mean(((pred - t) / t) ** 2)))
    if not margins:
        return float(coef[0]), float(coef[1]), min(err, 1.0)
    margin = np.zeros(2)
    free = [i for i in (0, 1) if coef[i] > 0]
    dof = len(y) - len(free)
    if free and dof > 0:
        sub = a[:, free]
        cov = res / dof * np.linalg.pinv(sub.T @ sub)
        margin[free] = t975(dof) * np.sqrt(np.maximum(np.diag(cov), 0.0))
    return float(coef[0]), float(coef[1]), min(err, 1.0), float(margin[0]), float(margin[1])


def estimate(scope: tuple, k: float, charged: tuple, fit_on: tuple | None = None,
             timed: bool = False) -> Estimate:
    """The seconds a finding explains.

    scope: (accesses N, bytes B, seconds T) of the rows the finding is judged on (its
    files, in its direction), T measured. k: the finding's accesses among them.
    charged: (low, high) bytes the finding is charged for at the bandwidth: its own bytes
    when fixing it removes the accesses' whole time (re-reads), k x a block when it costs
    one block more per access (misalignment), 0 when a fix saves the per-access latency
    only (small or random accesses made large). fit_on: (n, b, t) arrays of observations
    to fit latency and bandwidth on (the module's rows, or a trace's accesses with
    timed=True); None: bounds only.

    T is split as N*latency + B/bandwidth with both terms >= 0, so the finding's share,
    (k*latency + c/bandwidth) / (N*latency + B/bandwidth), lies between k/N and c/B:
    the bounds. The fit fixes the split, to within its margins (fit): the value is the
    smallest share any latency and seconds per byte inside them give (what the evidence
    supports: a latency the rows cannot tell from 0 is charged as 0, so the noise of a
    few rows on a loaded machine cannot price tiny accesses at a large latency), the range
    the smallest and largest over the margins, the fit's relative error and the charged
    bytes' range, all kept within the bounds."""
    n_all, b_all, t_all = (max(float(v), 0.0) for v in scope)
    k = min(max(float(k), 0.0), n_all)
    c_lo, c_hi = (min(max(float(c), 0.0), b_all) if b_all else 0.0 for c in charged)
    if t_all <= 0 or n_all <= 0 or k <= 0 and c_hi <= 0:
        return Estimate(0.0, 0.0, 0.0, "bounds")
    by_count = k / n_all
    lo_b, hi_b = (c_lo / b_all, c_hi / b_all) if b_all else (0.0, 0.0)
    low, high = t_all * min(by_count, lo_b), t_all * max(by_count, hi_b)
    f = fit(*fit_on, margins=True) if fit_on is not None else None
    if f is None:
        return Estimate(low, high, None, "bounds")
    lat, spb, err, d_lat, d_spb = f
    if n_all * lat + b_all * spb <= 0:
        return Estimate(low, high, None, "bounds")
    # the corners of the margins' box (the share is monotone in each coefficient)
    box = [(max(lat + i * d_lat, 0.0), max(spb + j * d_spb, 0.0))
           for i in (-1, 1) for j in (-1, 1)]
    box = [(la, sp) for la, sp in box if n_all * la + b_all * sp > 0]

    def share(c, la, sp):
        return (k * la + c * sp) / (n_all * la + b_all * sp)

    mid = (c_lo + c_hi) / 2
    value = t_all * min(share(mid, la, sp) for la, sp in box)
    lo = max(low, t_all * min(share(c_lo, la, sp) for la, sp in box) * (1 - err))
    hi = min(high, t_all * max(share(c_hi, la, sp) for la, sp in box) * (1 + err))
    value = min(max(value, lo), hi) if lo <= hi else min(max(value, low), high)
    return Estimate(min(lo, value), max(hi, value), value, "trace" if timed else "model",
                    lat, 1.0 / spb if spb > 0 else None, d_lat)

