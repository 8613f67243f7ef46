"""The job page's views on hand-built frames: data by file system (longest mount point,
names that are not UTF-8 included) and files by kind with their sizes, exactly."""

import os

import pandas as pd
import pytest

from iochar import jobviews
from iochar.safetext import object_strings
from report_frames import MiB, frame

MOUNTS = pd.DataFrame({"mount_point": ["/", "/scratch", "/scratch/big"],
                       "fs_type": ["ext4", "lustre", "gpfs"], "block_size": [4096] * 3})
ODD = os.fsdecode(b"/scratch/big/\xff.dat")  # a name that is not UTF-8, as the reader gives it


@object_strings  # a frame holding a name that is not UTF-8, as the log reader builds it
def records():
    posix = frame([
        {"path": "/scratch/a", "rank": 0, "POSIX_READS": 2, "POSIX_BYTES_READ": 2 * MiB,
         "POSIX_MAX_BYTE_READ": 4 * MiB - 1},
        {"path": "/scratch/a", "rank": 1, "POSIX_READS": 1, "POSIX_BYTES_READ": MiB,
         "POSIX_MAX_BYTE_READ": MiB - 1},
        {"path": ODD, "rank": 0, "POSIX_WRITES": 3, "POSIX_BYTES_WRITTEN": 300,
         "POSIX_MAX_BYTE_WRITTEN": 299},
        {"path": "/tmp/rw", "rank": -1, "POSIX_READS": 1, "POSIX_WRITES": 1,
         "POSIX_BYTES_READ": 10, "POSIX_BYTES_WRITTEN": 20, "POSIX_MAX_BYTE_READ": 9,
         "POSIX_MAX_BYTE_WRITTEN": 99}])
    stdio = frame([{"path": "<STDOUT>", "rank": 0, "STDIO_WRITES": 5,
                    "STDIO_BYTES_WRITTEN": 50}])
    return {"POSIX": posix, "STDIO": stdio}


def test_file_systems_by_longest_mount():
    rows = {r["mount_point"]: r for r in jobviews.file_systems(records(), MOUNTS)}
    assert rows["/scratch"] == {"mount_point": "/scratch", "fs_type": "lustre", "files": 1,
                                "reads": 3, "writes": 0, "bytes_read": 3 * MiB,
                                "bytes_written": 0}
    assert (rows["/scratch/big"]["fs_type"], rows["/scratch/big"]["bytes_written"]) == ("gpfs", 300)
    assert (rows["/"]["files"], rows["/"]["bytes_read"], rows["/"]["bytes_written"]) == (1, 10, 20)
    assert (rows[""]["files"], rows[""]["bytes_written"]) == (1, 50)  # <STDOUT>: no mount
    assert list(rows) == ["/scratch", "/scratch/big", "", "/"]  # most bytes first


def test_file_kinds_sizes():
    kinds = {(r["module"], r["kind"]): r for r in jobviews.file_kinds(records())}
    ro, wo, rw = (kinds[("POSIX", k)] for k in ("read-only", "write-only", "read-write"))
    assert (ro["files"], ro["max_size"], ro["avg_size"]) == (1, 4 * MiB, 4 * MiB)
    assert (wo["files"], wo["max_size"], wo["bytes_written"]) == (1, 300, 300)
    assert (rw["files"], rw["max_size"]) == (1, 100)
    a = kinds[("POSIX", "all")]
    assert (a["files"], a["max_size"]) == (3, 4 * MiB)
    assert a["avg_size"] == pytest.approx((4 * MiB + 300 + 100) / 3)
    assert kinds[("STDIO", "all")]["files"] == 0  # the standard streams are no files
    assert ("STDIO", "write-only") in kinds  # (a module with writes and no reads column)
