"""iochar-top's terminal table (cli/top.py): the columns a terminal of a given width
keeps, and the table rich draws at that width."""

import io

from rich.console import Console

from iochar.cli import top


def job(**kw) -> dict:
    d = {"job": "4242", "user": "alice", "program": "train.py", "processes": 8, "ranks": 8,
         "state": "running", "killed": 0, "read_bytes_per_s": 3 << 20,
         "write_bytes_per_s": 700 << 20, "reads_per_s": 10.0, "writes_per_s": 700.0,
         "meta_ops_per_s": 12.0, "io_share": 0.5, "bytes_read": 1 << 30,
         "bytes_written": 5 << 30, "meta_ops": 1234, "io_time": 55.5}
    d.update(kw)
    return d


DOC = {"time": 0.0, "jobs": [job(), job(job="17", user="bob", program="a.out")]}


def drawn(width: int, sort: str = top.DEFAULT_SORT) -> list:
    con = Console(file=io.StringIO(), width=width, color_system=None)
    con.print(top.rich_table(DOC, False, width, sort))
    return con.file.getvalue().splitlines()


def test_a_narrow_terminal_keeps_the_first_columns_whole():
    cols = top.fitting(top.cells(DOC), 80, "write")
    assert cols[:3] == ["job", "user", "program"] and "state" in cols
    assert "write" in cols and "read" in cols and "io_time" not in cols
    lines = drawn(80)
    assert max(len(x) for x in lines) <= 80
    body = "\n".join(lines)
    for text in ("4242", "alice", "train.py", "bob", "a.out", "700.00", "running"):
        assert text in body, text  # no key column cut to an ellipsis


def test_the_sort_column_is_kept_however_narrow():
    assert "io_time" in top.fitting(top.cells(DOC), 40, "io_time")
    assert "io_time" not in top.fitting(top.cells(DOC), 40, "write")


def test_a_wide_terminal_gets_every_column():
    assert top.fitting(top.cells(DOC), 300, "write") == list(top.COLUMNS)
    heads = drawn(300)[2]  # the title, the top border, the headings
    for c in top.COLUMNS.values():
        assert c[0] in heads
