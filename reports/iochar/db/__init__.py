"""iochar-db: many logs in one embedded store (Parquet partitioned by date, DuckDB views)."""

from .ingest import ingest
from .store import Store, StoreError

__all__ = ["Store", "StoreError", "ingest"]
