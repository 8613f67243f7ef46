"""What an anonymized log must not hold: every section's payload inflated (against the
preset dictionary), searched for the original strings."""

from pathlib import Path

from iochar import logformat as F


def inflated(path) -> bytes:
    """The file's bytes, then every section's payload inflated."""
    data = Path(path).read_bytes()
    _, version, hsize, _, nsec, _ = F.HEADER.unpack_from(data)
    off, out = hsize, [data]
    for _ in range(nsec):
        kind, mod, _, crc, ulen, clen, start = F.section_at(data, off, version)
        out.append(F.payload(data[start:start + clen], crc, ulen, f"{kind} {mod}",
                             F.inflater_for(version)))
        off = start + clen
    assert off == len(data)
    return b"\0".join(out)


def leaks(path, strings) -> list:
    """The strings (text or bytes) found in the file or its inflated sections."""
    hay = inflated(path)
    return [s for s in strings
            if (s.encode("utf-8", "surrogateescape") if isinstance(s, str) else s) in hay]
