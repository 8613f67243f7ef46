"""atomicfile.write_new, the Python writers' new log (iochar-parser --recover, the Darshan
export): no name another user could swap on the way, never a replaced file, and a name
taken after the link reported, the other file left alone (docs/security.md)."""

import errno
import os
import stat

import pytest

from iochar import atomicfile

DATA = b"a log's bytes\n" * 100


def test_unnamed_file_linked_in_nothing_else_appears(tmp_path, monkeypatch):
    d = tmp_path / "proj"
    d.mkdir()
    d.chmod(0o775)
    seen = []
    real_link = os.link

    def link(src, dst, **kw):  # the one name the file ever has is its own
        seen.append(sorted(os.listdir(d)))
        assert str(src).startswith("/proc/self/fd/") and kw == {"follow_symlinks": True}
        return real_link(src, dst, **kw)
    monkeypatch.setattr(atomicfile.os, "link", link)
    atomicfile.write_new(d / "job.iochar", DATA)
    assert seen == [[]]
    st = (d / "job.iochar").lstat()
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600 and st.st_nlink == 1
    assert (d / "job.iochar").read_bytes() == DATA and os.listdir(d) == ["job.iochar"]


def test_existing_name_never_replaced(tmp_path):
    (tmp_path / "victim").write_bytes(b"victim")
    (tmp_path / "job.iochar").symlink_to(tmp_path / "victim")
    with pytest.raises(FileExistsError):
        atomicfile.write_new(tmp_path / "job.iochar", DATA)
    assert (tmp_path / "victim").read_bytes() == b"victim"
    assert sorted(os.listdir(tmp_path)) == ["job.iochar", "victim"]


@pytest.mark.parametrize("linking", [True, False])
def test_name_taken_after_the_link_is_reported(tmp_path, monkeypatch, linking):
    """Another member of the group renames their file onto the new name right after it
    appears (linked, or, without O_TMPFILE linking, created at the name): an error says
    so, and their file stays as it is."""
    planted = tmp_path / ".planted"
    planted.write_bytes(b"theirs")
    real_link, real_open = os.link, os.open
    out = tmp_path / "job.iochar"

    def link(src, dst, **kw):
        if not linking:
            raise OSError(errno.ENOENT, "no /proc")
        real_link(src, dst, **kw)
        os.rename(planted, dst)

    def open_(p, flags, *a, **kw):
        fd = real_open(p, flags, *a, **kw)
        if os.fspath(p) == str(out):
            os.rename(planted, out)
        return fd
    monkeypatch.setattr(atomicfile.os, "link", link)
    monkeypatch.setattr(atomicfile.os, "open", open_)
    with pytest.raises(OSError, match="another file took its name"):
        atomicfile.write_new(out, DATA)
    assert out.read_bytes() == b"theirs" and os.listdir(tmp_path) == ["job.iochar"]


def test_write_atomic_replaces_through_a_private_directory(tmp_path, monkeypatch):
    """A report written over an older one: its temp file sits in a 0700 directory of
    ours while it is written; nothing is left after."""
    out = tmp_path / "report.html"
    out.write_text("old")
    real_replace = os.replace
    during = []

    def replace(src, dst, **kw):
        (d,) = [p for p in tmp_path.iterdir() if p.name.startswith(".iochar-")]
        st = d.lstat()
        during.append((stat.S_ISDIR(st.st_mode), stat.S_IMODE(st.st_mode), os.listdir(d)))
        return real_replace(src, dst, **kw)
    monkeypatch.setattr(atomicfile.os, "replace", replace)
    atomicfile.write_atomic(str(out), "new ✓")
    assert during == [(True, 0o700, ["f"])]
    assert out.read_text(encoding="utf-8") == "new ✓" and os.listdir(tmp_path) == ["report.html"]
