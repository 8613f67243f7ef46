"""iochar-db export --darshan: every iochar job of a store written as a Darshan log."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..darshan_export import to_bytes, write_new
from ..log import LogError, from_bytes
from .extract import content_hash
from .store import Store, StoreError


@dataclass
class Exported:
    written: list = field(default_factory=list)
    existing: list = field(default_factory=list)  # output already there: not overwritten
    failed: list = field(default_factory=list)  # (log path, reason)
    darshan: int = 0  # jobs ingested from Darshan logs: nothing to export


def _name(log_path: str, job_id: str, taken: set) -> str:
    stem = Path(log_path).name
    stem = stem[:-len(".iochar")] if stem.endswith(".iochar") else stem
    name = f"{stem}.darshan"
    if name in taken:  # two jobs' logs of one name (other directories)
        name = f"{stem}-{job_id[:12]}.darshan"
    taken.add(name)
    return name


def export_darshan(store: Store, outdir) -> Exported:
    """Each iochar job's log, read again from where it was ingested (the same bytes:
    its content hash is the job id), written as OUTDIR/<log name>.darshan. A log that
    moved, changed or no longer reads is listed in `failed`; existing outputs stay."""
    out = Path(outdir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(f"cannot create {outdir}: {e.strerror or e}") from None
    rows = store.connect().execute(
        "SELECT job_id, log_path, source FROM jobs ORDER BY start_time, log_path").fetchall()
    res, taken = Exported(), set()
    for job_id, log_path, source in rows:
        if source == "darshan":
            res.darshan += 1
            continue
        target = out / _name(log_path, job_id, taken)
        if os.path.lexists(target):
            res.existing.append(str(target))
            continue
        try:
            data = Path(log_path).read_bytes()
            if content_hash(data) != job_id:
                raise LogError("changed since it was ingested")
            log = from_bytes(data, log_path)
            res.written.append(str(write_new(target, to_bytes(log))))
        except OSError as e:
            res.failed.append((log_path, e.strerror or str(e)))
        except LogError as e:
            msg = str(e)
            res.failed.append((log_path, msg[len(log_path) + 2:] if msg.startswith(log_path + ": ")
                               else msg))
    return res
