#!/usr/bin/env python3
"""The C sources' include graph has no back edge (CONTRIBUTING.md, layering):

    runtime/  -> runtime/ only            (the core knows no wrapper, no MPI)
    reducer/  -> reducer/, runtime/       (the MPI runtime and the shutdown)
    wrappers/ -> wrappers/, runtime/, and reducer/'s wrapper header only
                 (the MPI-IO wrappers stand on the MPI runtime, never the reverse)

and in the Python package, library code never stands on a command line tool:
only reports/iochar/cli/ and the other commands ([project.scripts] in
reports/pyproject.toml: iochar/db/cli.py) import from reports/iochar/cli/.

Prints each offending `#include` or import and exits 1; exit 0 when all hold.
Usage: check_layers.py [source root]"""
import ast
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


def commands(pkg):
    """Files of the package's command-line entry points ([project.scripts])."""
    toml = pkg.parent / "pyproject.toml"
    text = toml.read_text() if toml.exists() else ""
    mods = re.findall(r'^[\w-]+\s*=\s*"iochar\.([\w.]+):\w+"', text, re.M)
    return {pkg.joinpath(*m.split(".")).with_suffix(".py") for m in mods}


def imports(path, pkg):
    """(line, dotted name) of every module `path` imports, relative ones resolved,
    those inside functions included."""
    here = ["iochar", *path.relative_to(pkg).parent.parts]
    for node in ast.walk(ast.parse(path.read_text(errors="replace"))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here[:len(here) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            yield node.lineno, mod
            yield from ((node.lineno, f"{mod}.{a.name}") for a in node.names)


def python_violations(root):
    pkg = pathlib.Path(root) / "reports" / "iochar"
    if not pkg.is_dir():
        return
    allowed = commands(pkg)
    for src in sorted(pkg.rglob("*.py")):
        if src.parent == pkg / "cli" or src in allowed:
            continue
        bad = {}  # line -> the most specific name imported there
        for line, mod in imports(src, pkg):
            if (mod == "iochar.cli" or mod.startswith("iochar.cli.")) and \
                    len(mod) > len(bad.get(line, "")):
                bad[line] = mod
        for line, mod in sorted(bad.items()):
            yield f"{src.relative_to(root)}:{line}: imports {mod} (library -> cli)"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent
    bad = list(violations(root)) + list(python_violations(root))
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
