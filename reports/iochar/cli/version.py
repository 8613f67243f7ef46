"""`--version` for every CLI: `<prog> <version>` from the package that is running."""

from __future__ import annotations

from importlib import metadata

from .. import __version__


def version() -> str:
    """iochar.__version__ of the imported package (the installed metadata can belong to
    another checkout when several share one environment); the metadata otherwise."""
    if __version__:
        return __version__
    try:
        return metadata.version("iochar")
    except metadata.PackageNotFoundError:
        return "unknown"


def add_version(p):
    p.add_argument("--version", action="version", version=f"{p.prog} {version()}",
                   help="print the version and exit")
