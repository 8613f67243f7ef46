"""The JOB `partial` bits are declared once in C (runtime/flags.h); the Python
table (iochar.flags.PARTIAL) must be the same."""
import pathlib
import re

from iochar.flags import PARTIAL, partial_names

HEADER = pathlib.Path(__file__).resolve().parents[2] / "runtime" / "flags.h"


def c_flags(text):
    body = text[text.index("#define IOCHAR_PARTIAL_FLAGS(X)"):text.index("// clang-format on")]
    return {m[1]: int(m[2]) for m in re.finditer(r"X\((\w+),\s*(\d+)\)", body)}


def test_python_table_is_the_c_header():
    c = c_flags(HEADER.read_text())
    assert len(c) == 9
    assert c == PARTIAL


def test_bits_distinct_powers_of_two():
    assert all(b & (b - 1) == 0 for b in PARTIAL.values())
    assert len(set(PARTIAL.values())) == len(PARTIAL)


def test_partial_names():
    assert partial_names(0) == []
    assert partial_names(1 | 8 | 128) == ["FOLDED", "RECOVERED", "TRUNCATED_PATHS"]
    assert partial_names(2 | 1024) == ["PER_RANK", "1024"]
    assert partial_names(512 | 16) == ["MISSING_RANKS", "RANKS_LEFT_OUT"]
