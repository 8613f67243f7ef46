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

    def to_cost(self) -> dict:
        """Numbers only (a finding's cost is a table of numbers, docs/report-json.md):
        fitted 0 (bounds only) or 1, traced 1 when fitted on a trace's timed accesses."""
        out = {"low_s": self.low, "high_s": self.high,
               "fitted": float(self.how != "bounds"), "traced": float(self.how == "trace")}
        if self.latency is not None:
            out["latency_s"] = self.latency
        if self.bandwidth is not None:
            out["bandwidth_Bps"] = self.bandwidth
        return out


def fit(n, b, t) -> tuple | None:
    """(latency s, s per byte, relative error) of t ~ n*latency + b*s_per_byte fitted by
    non-negative least squares, each observation weighted by 1/t (relative errors: a
    slow row must not drown the rest); None when the observations' mean access sizes do
    not spread by SPREAD (nothing tells latency from bandwidth)."""
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
    coef, _ = best
    pred = n * coef[0] + b * coef[1]
    err = float(np.sqrt(np.mean(((pred - t) / t) ** 2)))
    return float(coef[0]), float(coef[1]), min(err, 1.0)


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
    the bounds. The fit fixes the split; its value comes with a range from the fit's
    relative error and the charged bytes' range, kept within the bounds."""
    n_all, b_all, t_all = (max(float(v), 0.0) for v in scope)
    k = min(max(float(k), 0.0), n_all)
    c_lo, c_hi = (min(max(float(c), 0.0), b_all) if b_all else 0.0 for c in charged)
    if t_all <= 0 or n_all <= 0 or k <= 0 and c_hi <= 0:
        return Estimate(0.0, 0.0, 0.0, "bounds")
    by_count = k / n_all
    lo_b, hi_b = (c_lo / b_all, c_hi / b_all) if b_all else (0.0, 0.0)
    low, high = t_all * min(by_count, lo_b), t_all * max(by_count, hi_b)
    f = fit(*fit_on) if fit_on is not None else None
    if f is None:
        return Estimate(low, high, None, "bounds")
    lat, spb, err = f
    whole = n_all * lat + b_all * spb
    if whole <= 0:
        return Estimate(low, high, None, "bounds")

    def share(c):
        return (k * lat + c * spb) / whole

    value = t_all * share((c_lo + c_hi) / 2)
    lo = max(low, t_all * share(c_lo) * (1 - err))
    hi = min(high, t_all * share(c_hi) * (1 + err))
    value = min(max(value, lo), hi) if lo <= hi else min(max(value, low), high)
    return Estimate(min(lo, value), max(hi, value), value, "trace" if timed else "model",
                    lat, 1.0 / spb if spb > 0 else None)
