"""pandas DataFrames from a log's decoded columns: the types every reader of a log
shares (names as Python str objects, counters int64/float64), built cheaply."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from pandas.api.internals import create_dataframe_from_blocks  # pandas >= 3.0

from .logformat import RANKS_DTYPE

SCHEMA_CACHE = 256  # payloads kept (each a few KiB): the logs of one tool version share one


def text_column(values, index=None) -> pd.Series:
    """A column of names as Python str objects (dtype object). Names from a log may hold
    bytes that are not UTF-8 (kept by surrogateescape), which pandas' Arrow-backed str
    dtype cannot store: every column or Series of paths is built through here."""
    arr = np.empty(len(values), dtype=object)
    arr[:] = list(values) if not isinstance(values, np.ndarray) else values
    return pd.Series(arr, index=index, dtype=object)


# ---- DataFrames from decoded columns ---------------------------------------------
# A small log's cost is mostly pandas building frames, and most of that is building
# each frame's column Index from a list of names (a str Index, ~100 us for a module's
# counters). The frames below are made from a few 2-D blocks with an Index made once
# per schema; their contents, dtypes and column names are what the plain
# constructors give.

@functools.lru_cache(maxsize=SCHEMA_CACHE)
def _columns(names: tuple) -> pd.Index:
    """column names -> pd.Index (the logs of one tool version share them)."""
    return pd.Index(list(names))


def records_frame(ranks: np.ndarray, ids: np.ndarray, paths, ints: np.ndarray,
                  floats: np.ndarray, counters: list) -> pd.DataFrame:
    """rank, record_id, path, then the counters: ints (n_int, rows) int64 and floats
    (n_float, rows) float64, in `counters` order (ints first). One frame from its
    blocks, the arrays as they are (pandas' public low-level constructor): the columns
    and dtypes pd.concat of the parts gives, at a fraction of its cost."""
    path = np.empty((1, len(ids)), dtype=object)
    path[0, :] = list(paths) if not isinstance(paths, np.ndarray) else paths
    n_int = len(ints)
    blocks = [(ranks.reshape(1, -1), np.array([0])), (ids.reshape(1, -1), np.array([1])),
              (path, np.array([2])), (ints, np.arange(3, 3 + n_int)),
              (floats, np.arange(3 + n_int, 3 + n_int + len(floats)))]
    return create_dataframe_from_blocks(
        [b for b in blocks if len(b[1])], pd.RangeIndex(len(ids)),
        _columns(("rank", "record_id", "path", *counters)))


_RANK_INTS = [k for k in RANKS_DTYPE.names if RANKS_DTYPE[k].kind == "i"]
_RANK_FLOATS = [k for k in RANKS_DTYPE.names if RANKS_DTYPE[k].kind == "f"]
_RANK_COLUMNS = pd.Index([*_RANK_INTS, *_RANK_FLOATS])
assert list(_RANK_COLUMNS) == list(RANKS_DTYPE.names)  # ints first in the record


def ranks_frame(arr: np.ndarray) -> pd.DataFrame:
    """A RANKS structured array as a frame, one column per field."""
    ints = np.stack([arr[k] for k in _RANK_INTS]) if len(arr) else \
        np.empty((len(_RANK_INTS), 0), np.int64)
    floats = np.stack([arr[k] for k in _RANK_FLOATS]) if len(arr) else \
        np.empty((len(_RANK_FLOATS), 0), np.float64)
    return create_dataframe_from_blocks(
        [(ints, np.arange(len(ints))), (floats, np.arange(len(ints), len(_RANK_COLUMNS)))],
        pd.RangeIndex(len(arr)), _RANK_COLUMNS)


@functools.lru_cache(maxsize=SCHEMA_CACHE)
def _mounts(rows: tuple) -> pd.DataFrame:
    """MOUNTS rows -> frame: the jobs of one cluster share their table."""
    return pd.DataFrame({"mount_point": text_column([r[0] for r in rows]),
                         "fs_type": text_column([r[1] for r in rows]),
                         "block_size": np.array([r[2] for r in rows], dtype=np.int64)})


def mounts_frame(rows: list) -> pd.DataFrame:
    """mount_point, fs_type (str objects), block_size (int64): one row per mount."""
    return _mounts(tuple(rows)).copy(deep=False)  # copy-on-write: a caller's change stays its own
