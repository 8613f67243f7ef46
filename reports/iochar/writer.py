"""Exact Python writer of iochar logs (docs/log-format.md); mirror image of log.py (the
bytes: logformat.py and codec.py).

Used by tests, fuzzing and benchmarks; vectorized so million-record logs are quick.
"""

from __future__ import annotations

import os
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd

from . import codec
from .logformat import FORMAT_VERSION, HEADER, MAGIC, RANKS_DTYPE, SERIES_KEYS, record_dtype, section_head
from .schema import ROLE

FNV_OFFSET, FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3


def fnv1a64(path: str | bytes) -> int:
    """64-bit FNV-1a of the path's UTF-8 bytes: the record id."""
    h = FNV_OFFSET
    for b in path.encode("utf-8", "surrogateescape") if isinstance(path, str) else path:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def section(kind: str, module: str, count: int, payload: bytes, level: int = 1,
            version: int = FORMAT_VERSION) -> bytes:
    """One section: header (logformat.section_head: 48 bytes in formats 1-2, ~24 in 3)
    then the compressed payload (format 1: a zlib stream at `level`; 2 and 3: raw
    deflate against the preset dictionary)."""
    comp = (zlib.compress(payload, level) if version < 2
            else codec.compress(payload, runs=kind == "SERIES"))
    return section_head(kind.encode(), module.encode(), count, zlib.crc32(comp), len(payload),
                        len(comp), version) + comp


def _text(s: str, lenfmt: str) -> bytes:
    b = s.encode("utf-8", "surrogateescape")
    return struct.pack(lenfmt, len(b)) + b


def job_payload(job: dict) -> bytes:
    out = []
    for k, v in job.items():
        if isinstance(v, (bool, int, np.integer)):
            val = struct.pack("<Bq", 1, int(v))
        elif isinstance(v, (float, np.floating)):
            val = struct.pack("<Bd", 2, float(v))
        else:
            val = b"\3" + _text(str(v), "<I")
        out.append(_text(k, "<H") + val)
    return b"".join(out)


def names_payload(ids: np.ndarray, paths: list) -> bytes:
    """u64 id, u32 len, path per entry, interleaved without a per-entry loop over bytes."""
    enc = [p.encode("utf-8", "surrogateescape") if isinstance(p, str) else bytes(p) for p in paths]
    n = len(enc)
    lens = np.fromiter(map(len, enc), dtype=np.int64, count=n)
    heads = np.empty(n, dtype=[("id", "<u8"), ("len", "<u4")])
    heads["id"], heads["len"] = ids, lens
    starts = np.zeros(n, dtype=np.int64)
    np.cumsum(12 + lens[:-1], out=starts[1:])
    out = np.empty(int(12 * n + lens.sum()), dtype=np.uint8)
    out[(starts[:, None] + np.arange(12)).ravel()] = heads.view(np.uint8)
    chars = np.frombuffer(b"".join(enc), dtype=np.uint8)
    text_starts = np.zeros(n, dtype=np.int64)
    np.cumsum(lens[:-1], out=text_starts[1:])
    out[np.repeat(starts + 12 - text_starts, lens) + np.arange(len(chars))] = chars
    return out.tobytes()


def schema_payload(schema: list, n_int: int, version: int = 1) -> bytes:
    body = b"".join(_text(name, "<H") + struct.pack("<B", op) for name, op in schema)
    return struct.pack("<III", version, n_int, len(schema) - n_int) + body


def records_array(records, schema: list, n_int: int) -> np.ndarray:
    """DataFrame/structured array with record_id, rank and counters -> RECORDS rows.
    Counters missing from `records` are 0."""
    cols = records.columns if isinstance(records, pd.DataFrame) else records.dtype.names
    n = len(records)
    arr = np.zeros(n, dtype=record_dtype(n_int, len(schema) - n_int))
    arr["record_id"] = np.asarray(records["record_id"], dtype=np.uint64)
    arr["rank"] = np.asarray(records["rank"], dtype=np.int64)
    for i, (name, _) in enumerate(schema):
        if name in cols:
            part, j = ("ints", i) if i < n_int else ("floats", i - n_int)
            arr[part][:, j] = np.asarray(records[name])
    return arr


def columnar(rows: np.ndarray, version: int = FORMAT_VERSION) -> bytes:
    """RECORDS payload: presence bitmap, record ids, ranks, then each counter column
    that is non-zero somewhere (docs/log-format.md); format 2 encodes each column
    (codec.encode_columns), format 1 stores it as 8 byte planes."""
    counters = np.concatenate([rows["ints"], rows["floats"].view(np.int64)], axis=1).T
    ncnt = counters.shape[0]
    present = counters.any(axis=1) if len(rows) else np.zeros(ncnt, bool)
    bits = np.zeros(64 * ((ncnt + 63) // 64), np.uint8)
    bits[:ncnt] = present
    head = np.packbits(bits, bitorder="little").tobytes()
    if not len(rows):
        return head
    body = np.vstack([rows["record_id"].view(np.int64), rows["rank"], counters[present]])
    body = np.ascontiguousarray(body).astype("<i8")
    if version >= 2:
        n_int = rows["ints"].shape[1]
        kinds = np.concatenate([np.zeros(2 + n_int, bool), np.ones(ncnt - n_int, bool)])
        return head + codec.encode_columns(body, kinds[np.concatenate([[True, True], present])])
    # byte-transposed columns: (ncols, count, 8) -> (ncols, 8, count)
    planes = body.view(np.uint8).reshape(body.shape[0], len(rows), 8).transpose(0, 2, 1)
    return head + np.ascontiguousarray(planes).tobytes()


def topk_payload(ids, tables) -> bytes:
    """TOPK payload: u32 slots, u32 tables, then per record its id and, per table,
    i64 values[slots] then i64 counts[slots]; tables: int array (n, tables, 2, slots)."""
    t = np.asarray(tables, dtype="<i8")
    n, ntab, _, slots = t.shape
    rows = np.zeros(n, dtype=[("id", "<u8"), ("t", "<i8", (ntab * 2 * slots,))])
    rows["id"], rows["t"] = np.asarray(ids, dtype=np.uint64), t.reshape(n, -1)
    return struct.pack("<II", slots, ntab) + rows.tobytes()


def _n_int(schema: list, n_int: int | None) -> int:
    """Integer counters come first; by default those whose name lacks `_F_`."""
    return sum("_F_" not in name for name, _ in schema) if n_int is None else n_int


def encode_log(job: dict, modules: dict, names: dict | None = None, series=None, ranks=None,
               mounts=None, extra_sections=(), chunk: int | None = None, level: int = 1,
               version: int = FORMAT_VERSION, heat=None) -> bytes:
    """The bytes of a log. modules: {name: {"schema": [(counter, op)], "records": rows,
    optional "n_int", "version", "roles" (one per counter: a ROLES section),
    "topk": (ids, tables) as topk_payload}}; series:
    {module: dict or [dict] (width, bytes_read, bytes_written, reads, writes)};
    ranks: {module: DataFrame/structured array}; heat: {module: dict as Log.heatmap gives
    it (width, ranks, bytes_read, bytes_written: (n, nbins)), one HEAT section each};
    mounts: DataFrame or [(mount_point, fs_type, block_size)]; extra_sections:
    [(kind, module, count, payload)]; chunk: split NAMES/RECORDS into sections of this
    many entries (as an MPI job's ranks do); version: 3, or 2 or 1 for an old-format log."""
    secs = [("JOB", "", len(job), job_payload(job))]
    if mounts is not None:
        rows = mounts.itertuples(index=False) if isinstance(mounts, pd.DataFrame) else mounts
        rows = [(str(m), str(f), int(b)) for m, f, b in rows]
        body = b"".join(struct.pack("<I", b) + _text(f, "<H") + _text(m, "<H") for m, f, b in rows)
        secs.append(("MOUNTS", "", len(rows), body))
    if names is None:  # take them from the frames' path columns
        names = {}
        for spec in modules.values():
            r = spec["records"]
            if isinstance(r, pd.DataFrame) and "path" in r:
                names.update(zip(r["record_id"].astype(np.uint64).tolist(), r["path"].tolist()))
    ids = np.fromiter(names.keys(), dtype=np.uint64, count=len(names))
    paths = list(names.values())
    step = chunk or max(len(ids), 1)
    for i in range(0, len(ids), step):
        enc = names_payload if version < 2 else codec.encode_names
        secs.append(("NAMES", "", len(ids[i:i + step]), enc(ids[i:i + step], paths[i:i + step])))
    for mod, spec in modules.items():
        schema = [(n, int(op)) for n, op in spec["schema"]]
        n_int = _n_int(schema, spec.get("n_int"))
        secs.append(("SCHEMA", mod, len(schema),
                     schema_payload(schema, n_int, spec.get("version", 1))))
        if spec.get("roles") is not None:  # role names or numbers, schema order
            roles = [ROLE[r] if isinstance(r, str) else int(r) for r in spec["roles"]]
            secs.append(("ROLES", mod, len(roles), bytes(roles)))
        arr = records_array(spec["records"], schema, n_int)
        step = chunk or max(len(arr), 1)
        for i in range(0, max(len(arr), 1), step):
            part = arr[i:i + step]
            secs.append(("RECORDS", mod, len(part), columnar(part, version)))
        if spec.get("topk") is not None:  # (ids, tables): a per-rank log's whole tables
            ids, tabs = spec["topk"]
            secs.append(("TOPK", mod, len(ids), topk_payload(ids, tabs)))
    for mod, items in (series or {}).items():
        for s in [items] if isinstance(items, dict) else items:
            bins = np.array([np.asarray(s[k], dtype="<i8") for k in SERIES_KEYS])
            body = struct.pack("<dII", s["width"], bins.shape[1], 0) + bins.tobytes()
            secs.append(("SERIES", mod, bins.shape[1], body))
    for mod, rows in (ranks or {}).items():
        arr = np.zeros(len(rows["rank"]), dtype=RANKS_DTYPE)
        for k in RANKS_DTYPE.names:
            arr[k] = np.asarray(rows[k])
        secs.append(("RANKS", mod, len(arr), arr.tobytes()))
    for mod, h in (heat or {}).items():
        rk = np.asarray(h["ranks"], dtype="<i8")
        rows = np.concatenate([rk[:, None], np.asarray(h["bytes_read"], dtype="<i8"),
                               np.asarray(h["bytes_written"], dtype="<i8")], axis=1)
        nbins = (rows.shape[1] - 1) // 2
        secs.append(("HEAT", mod, len(rk), struct.pack("<dII", h["width"], nbins, 0)
                     + rows.astype("<i8").tobytes()))
    for kind, mod, count, payload in extra_sections:
        secs.append((kind, mod, count, payload))
    with ThreadPoolExecutor(min(8, os.cpu_count() or 1)) as pool:  # zlib releases the GIL
        secs = list(pool.map(lambda s: section(*s, level=level, version=version), secs))
    total = HEADER.size + sum(map(len, secs))
    head = HEADER.pack(MAGIC, version, HEADER.size, total, len(secs), 0)[:28]
    return b"".join([head, struct.pack("<I", zlib.crc32(head)), *secs])


def write_log(path, job: dict, modules: dict, names: dict | None = None, series=None,
              ranks=None, mounts=None, **kw) -> None:
    """Write a log file; arguments as encode_log."""
    data = encode_log(job, modules, names, series, ranks, mounts, **kw)
    with open(path, "wb") as f:
        f.write(data)
