"""The embedded store: a directory of Parquet datasets partitioned by date, read by DuckDB.

    DIR/jobs/month=YYYY-MM/part-*.parquet           one row per job (log)
    DIR/summaries/month=.../part-*.parquet          one row per job and module
    DIR/findings/month=.../part-*.parquet           the advice of each job
    DIR/filesystems/month=.../part-*.parquet        bytes and files of each job per file system
    DIR/modules/<MODULE>/month=.../part-*.parquet   one row per record: the counters
    DIR/errors/part-*.parquet                       logs that could not be read

Partitioned by the month of the job's start (UTC); every row also has its `date`
(YYYY-MM-DD). Months, not days: a day's part files would be tiny (a site's day is a
few hundred logs per program), and many small files cost more to query than they save.

No server, no lock file: each ingest adds new part files (never rewrites one), and
queries see every part file present when they start. Columns may differ between
part files (counters of newer tool versions): queries take the union by name, and a
column missing from a file reads as NULL there, and a column of the tool's own tables
(extract.SCHEMAS) that no file has yet (a store written by an older version: findings
without cost_s) reads as NULL everywhere; a table none of whose files exist is empty.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .extract import SCHEMAS

_SQL_TYPE = {pa.string(): "VARCHAR", pa.float64(): "DOUBLE", pa.int64(): "BIGINT"}
DATED = ("jobs", "summaries", "findings", "filesystems")


def _column_order(con, glob: str) -> list:
    """A module table's columns in one order, whatever order its files were written in
    (union_by_name takes the first file's, and part names are random, so two stores of
    the same logs would differ): the widest file's order (ties: the smaller list), then
    the columns no such file has, by name. The partition column (month) follows."""
    files: dict = {}
    for f, col in con.execute(f"SELECT file_name, name FROM parquet_schema('{glob}')").fetchall():
        files.setdefault(f, []).append(col)
    schemas = [tuple(c[1:]) for c in files.values()]  # c[0]: the schema's root
    first = min(schemas, key=lambda c: (-len(c), c))
    return [*first, *sorted({c for s in schemas for c in s} - set(first))]


class StoreError(Exception):
    """A store directory that cannot be used (message names the problem)."""


class Store:
    def __init__(self, root, create: bool = False):
        self.root = Path(root)
        if create:
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreError(f"cannot create store {root}: {e.strerror or e}") from None
        if not self.root.is_dir():
            raise StoreError(f"no store at {root} (run ingest first)")

    # ---- writing -----------------------------------------------------------------

    def _write(self, table: pa.Table, where: Path, dated: bool) -> None:
        if not table.num_rows:
            return
        tag = uuid.uuid4().hex[:12]
        if not dated:
            where.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, where / f"part-{tag}.parquet")
            return
        month = pc.utf8_slice_codeunits(table["date"], 0, 7)
        for m in pc.unique(month).to_pylist():
            part = where / f"month={m if m and m[:4].isdigit() else 'unknown'}"
            part.mkdir(parents=True, exist_ok=True)
            pq.write_table(table.filter(pc.equal(month, m)), part / f"part-{tag}.parquet",
                           row_group_size=1 << 20)

    def write(self, tables: dict) -> None:
        """tables: {"jobs", "summaries", "findings", "filesystems", "errors": Arrow,
        "modules": {m: Arrow}}.
        Jobs are written last, so that an interrupted write leaves records of a job that
        the next ingest redoes rather than a job without its records."""
        for m, t in sorted(tables.get("modules", {}).items()):
            self._write(t, self.root / "modules" / m, True)
        for name in ("summaries", "findings", "filesystems", "jobs"):
            if name in tables:
                self._write(tables[name], self.root / name, True)
        self._write(tables["errors"], self.root / "errors", False)

    # ---- reading -----------------------------------------------------------------

    def modules(self) -> list:
        d = self.root / "modules"
        return sorted(p.name for p in d.iterdir() if self._files(p)) if d.is_dir() else []

    def _files(self, where: Path) -> bool:
        return where.is_dir() and any(where.rglob("*.parquet"))

    def connect(self):
        """A DuckDB connection with one view per table (jobs, summaries, findings,
        errors, and posix, mpiio, stdio, ... per module)."""
        import duckdb  # heavy (tens of ms): imported when a query needs it
        con = duckdb.connect()
        views = [(n, self.root / n, n in DATED) for n in (*DATED, "errors")]
        views += [(m.lower(), self.root / "modules" / m, True) for m in self.modules()]
        for name, where, dated in views:
            if self._files(where):
                glob = str(where / ("**/*.parquet" if dated else "*.parquet")).replace("'", "''")
                cols = "*"
                if name not in SCHEMAS:  # a module's: its columns vary with the logs
                    first = ", ".join('"' + c.replace('"', '""') + '"'
                                      for c in _column_order(con, glob))
                    cols = f"{first}, * EXCLUDE ({first})"
                else:  # columns added since the oldest files: NULL where no file has one
                    have = {c for (c,) in con.execute(
                        f"SELECT DISTINCT name FROM parquet_schema('{glob}')").fetchall()}
                    cols += "".join(f", CAST(NULL AS {_SQL_TYPE[f.type]}) AS {f.name}"
                                    for f in SCHEMAS[name] if f.name not in have)
                con.execute(f"CREATE VIEW {name} AS SELECT {cols} FROM read_parquet('{glob}', "
                            f"hive_partitioning={str(dated).lower()}, union_by_name=true)")
            else:
                con.register(f"_empty_{name}", SCHEMAS[name].empty_table())
                con.execute(f"CREATE VIEW {name} AS SELECT * FROM _empty_{name}")
        return con

    def known_hashes(self) -> frozenset:
        """Content hashes of every log already stored (as a job or as an error)."""
        if not (self._files(self.root / "jobs") or self._files(self.root / "errors")):
            return frozenset()
        con = self.connect()
        rows = con.execute("SELECT job_id FROM jobs UNION SELECT hash FROM errors "
                           "WHERE hash IS NOT NULL").fetchall()
        return frozenset(r[0] for r in rows)

    def size(self) -> int:
        return sum(p.stat().st_size for p in self.root.rglob("*.parquet"))
