"""The one table of advice thresholds; `--config file.toml` overrides any entry.

A TOML override names the rule as a table and the key to change, e.g.

    [small-io]
    size = 4194304      # bytes
    min_ops = 500

    [many-seeks]
    enabled = false
"""

from __future__ import annotations

import copy

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

DEFAULTS: dict[str, dict] = {
    # severity from cost: the share of the run's time across processes (run time x
    # nprocs) a finding explains, else of the job's I/O time (or bytes); below info_below
    # INFO whatever the rule (configuration errors are WARN from there); a finding that
    # costs the ranks bearing it under rank_seconds each (a test-sized job) is INFO unless
    # it takes short_share of the run and short_seconds a rank: a bad pattern in a short
    # run grows with the problem size
    "severity": {"high": 0.25, "warn": 0.05, "info_below": 0.01, "rank_seconds": 0.5,
                 "short_share": 0.10, "short_seconds": 0.05},
    # ops below `size` bytes (the MPI-IO striping_unit when smaller and use_stripe_unit);
    # writes to a parallel HDF5 file mostly of hdf5_metadata_size or less: its metadata
    "small-io": {"enabled": True, "size": 64 * KiB, "use_stripe_unit": True, "min_ops": 1000,
                     "share": 0.10, "hdf5_metadata_size": 4 * KiB},
    # accesses that are not consecutive and follow no regular stride (top-4 STRIDE table)
    "random-access": {"enabled": True, "min_ops": 1000, "share": 0.20, "regular": 0.50},
    # offsets not a multiple of the block size (FILE_ALIGNMENT, MOUNTS) or stripe unit
    "misaligned": {"enabled": True, "min_ops": 100, "share": 0.10},
    # a shared file accessed by several ranks in small interleaved pieces (STRIDE tables)
    "strided-shared": {"enabled": True, "min_ops": 400, "share": 0.50, "max_size": 1 * MiB},
    # POSIX reads under a file the application only wrote through MPI-IO (sieving/RMW)
    # (fill_factor: POSIX writing this many times the bytes MPI-IO was given, in an HDF5
    # or NetCDF file under collective writes: the library's fill values)
    "data-sieving": {"enabled": True, "min_bytes": 1 * MiB, "share": 0.10, "fill_factor": 1.3},
    # bytes at POSIX vs bytes at the library layer that owns the file
    "layer-amplification": {"enabled": True, "factor": 1.5, "min_bytes": 1 * MiB},
    # independent-only access to shared files (MPI-IO, HDF5, NetCDF, PnetCDF)
    "no-collective": {"enabled": True, "min_ops": 1000, "large_size": 1 * MiB, "large_share": 0.80,
                          "contiguous_share": 0.90},
    # bytes or ops through STDIO instead of POSIX/MPI-IO (std streams excluded), in calls
    # of less than small_call bytes on average (large binary fwrites are fine)
    "stdio-heavy": {"enabled": True, "bytes_share": 0.10, "min_bytes": 10 * MiB,
                        "ops_share": 0.50, "min_ops": 10000, "small_call": 64 * KiB},
    # meta time dominating, or many opens/stats per byte
    # (shard_*: at least shard_min_files files of at most shard_file_size bytes, each
    # read whole at every open, and most of the files read: a data pipeline, told to
    # pack them into shards or stage them node-locally)
    "metadata-heavy": {"enabled": True, "time_share": 0.50, "min_time": 0.05, "min_meta_ops": 2000,
                           "bytes_per_meta_op": 64 * KiB, "shard_min_files": 256,
                           "shard_file_size": 4 * MiB},
    # one file (or more) per process at scale
    "file-per-process": {"enabled": True, "min_files": 1000, "min_nprocs": 2},
    # (slowest - fastest) / slowest rank time or bytes
    "rank-imbalance": {"enabled": True, "ratio": 0.50, "min_time": 0.05, "bytes_ratio": 0.50,
                           "min_bytes": 64 * MiB},
    # bytes read / (max byte read + 1) per file
    "redundant-reads": {"enabled": True, "factor": 2.0, "min_excess": 16 * MiB},
    # effective MPI-IO hints that contradict the access pattern
    "hints": {"enabled": True, "min_ops": 100, "small_size": 1 * MiB, "small_share": 0.50,
                  "large_size": 4 * MiB, "large_share": 0.80, "min_bytes": 1 * GiB, "min_nprocs": 16,
                  "min_rounds": 4, "min_coll_ops": 16},
    # Lustre layouts: a shared file of min_bytes or more on one stripe written by few
    # ranks; an OST `factor` times slower per byte than the median of min_osts or more
    # (files of min_file_bytes or more, at least min_files of them)
    "lustre": {"enabled": True, "min_bytes": 1 * GiB, "factor": 8.0, "min_osts": 4,
               "min_files": 8, "min_file_bytes": 1 * MiB,
               # stripe-size: one access size in stripe_share of a row's accesses,
               # stripe_ratio stripes or more per access, stripe_min_ops such accesses
               "stripe_share": 0.5, "stripe_ratio": 4.0, "stripe_min_ops": 1000},
    # HDF5 chunk bytes, and chunk vs access size with filters
    "hdf5-chunking": {"enabled": True, "tiny_chunk": 64 * KiB, "min_chunks": 1000, "min_ops": 100,
                          "amplification": 16.0},
    # record variables interleaved in NetCDF classic-family files
    "netcdf-record-vars": {"enabled": True, "min_record_vars": 2, "min_ops": 100},
    # fsync/fdatasync/MPI_File_sync/H5Fflush per write (fflush is not a sync)
    "fsync-storm": {"enabled": True, "min_syncs": 100, "per_write": 0.05},
    # read<->write direction changes beyond one per file and rank
    "rw-switches": {"enabled": True, "min_switches": 1000, "share": 0.10},
    # explicit seeks per access
    "many-seeks": {"enabled": True, "min_seeks": 1000, "per_op": 0.50},
}


class ConfigError(ValueError):
    """A --config file that cannot be used (message names the problem)."""


def merge(base: dict, override: dict, where: str = "config") -> dict:
    out = copy.deepcopy(base)
    for rule, table in override.items():
        if rule not in out:
            raise ConfigError(f"{where}: unknown rule [{rule}] (known: {', '.join(out)})")
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: [{rule}] must be a table")
        for key, value in table.items():
            if key not in out[rule]:
                raise ConfigError(f"{where}: unknown key {key!r} in [{rule}] "
                                  f"(known: {', '.join(out[rule])})")
            old = out[rule][key]
            if isinstance(old, bool) != isinstance(value, bool) or \
                    not isinstance(value, (int, float)):
                raise ConfigError(f"{where}: [{rule}] {key} must be "
                                  f"{'true/false' if isinstance(old, bool) else 'a number'}")
            out[rule][key] = value
    return out


def load(path: str | None = None) -> dict:
    """Defaults, overridden by a TOML file when given."""
    if path is None:
        return copy.deepcopy(DEFAULTS)
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    except OSError as e:
        raise ConfigError(f"{path}: {e.strerror or e}") from None
    return merge(DEFAULTS, data, path)
