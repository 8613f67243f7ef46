#!/usr/bin/env python3
"""The C sources' include graph has no back edge (CONTRIBUTING.md, layering):

    runtime/  -> runtime/ only            (the core knows no wrapper, no MPI)
    reducer/  -> reducer/, runtime/       (the MPI runtime and the shutdown)
    wrappers/ -> wrappers/, runtime/, and reducer/'s wrapper header only
                 (the MPI-IO wrappers stand on the MPI runtime, never the reverse)

Prints each offending `#include` and exits 1; exit 0 when the graph holds.
Usage: check_layers.py [source root]"""
import pathlib
import re
import sys

ALLOWED = {
    "runtime": {"runtime"},
    "reducer": {"reducer", "runtime"},
    "wrappers": {"wrappers", "runtime"},
}
# The one header of reducer/ the MPI-IO wrappers may include: MPI_WRAP, PREAL
# and the PMPI table (it includes reducer/pmpi.h and reducer/mpi_names.h).
WRAPPER_MAY_USE = {"reducer/mpi_wrap.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def violations(root):
    root = pathlib.Path(root)
    for layer, allowed in ALLOWED.items():
        for src in sorted((root / layer).glob("*.[ch]")):
            for target in INCLUDE.findall(src.read_text(errors="replace")):
                dest = (src.parent / target).resolve()
                try:
                    rel = dest.relative_to(root.resolve())
                except ValueError:
                    yield f"{src.relative_to(root)}: #include \"{target}\" leaves the tree"
                    continue
                if rel.parts[0] in allowed or str(rel) in WRAPPER_MAY_USE and layer == "wrappers":
                    continue
                yield f"{src.relative_to(root)}: #include \"{target}\" ({layer} -> {rel.parts[0]})"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent
    bad = list(violations(root))
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
