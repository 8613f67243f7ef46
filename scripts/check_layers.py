#!/usr/bin/env python3
"""The C sources' include graph has no back edge (CONTRIBUTING.md, layering):

    runtime/  -> runtime/ only            (the core knows no wrapper, no MPI)
    reducer/  -> reducer/, runtime/       (the MPI runtime and the shutdown)
    wrappers/ -> wrappers/, runtime/, and reducer/'s wrapper header only
                 (the MPI-IO wrappers stand on the MPI runtime, never the reverse)

and in the Python package, library code never stands on a command line tool:
only reports/iochar/cli/ and the other commands ([project.scripts] in
reports/pyproject.toml: iochar/db/cli.py) import from reports/iochar/cli/.

Inside reports/iochar/ the modules follow PY_LAYERS (bottom first): an import that
runs back up the order (inside a function too) fails, so does a module missing from
the order, an import of another module's _private name, and a loop inside a
subpackage.

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


def python_violations(root):
    pkg = pathlib.Path(root) / "reports" / "iochar"
    if not pkg.is_dir():
        return
    allowed = commands(pkg)
    for src in sorted(pkg.rglob("*.py")):
        if src.parent == pkg / "cli" or src in allowed:
            continue
        bad = {}  # line -> the most specific name imported there
        for line, mod, _, name in _targets(src, pkg):
            full = f"{mod}.{name}" if name else mod
            if (mod == "iochar.cli" or mod.startswith("iochar.cli.")) and \
                    len(full) > len(bad.get(line, "")):
                bad[line] = full
        for line, mod in sorted(bad.items()):
            yield f"{src.relative_to(root)}:{line}: imports {mod} (library -> cli)"


def _targets(path, pkg):
    """(line, module, its file or None, name taken from it or None) of each iochar
    import in path, relative ones resolved, those inside functions included.
    `from M import x` takes module M.x when there is one, else the name x of M."""
    here = ["iochar", *path.relative_to(pkg).parent.parts]
    for node in ast.walk(ast.parse(path.read_text(errors="replace"))):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "iochar":
                    yield node.lineno, a.name, _module_of(pkg, a.name), None
        elif isinstance(node, ast.ImportFrom):
            base = here[:len(here) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            if mod.split(".")[0] != "iochar":
                continue
            for a in node.names:
                sub = _module_of(pkg, f"{mod}.{a.name}")
                if sub is not None:
                    yield node.lineno, f"{mod}.{a.name}", sub, None
                else:
                    yield node.lineno, mod, _module_of(pkg, mod), a.name


def _module_of(pkg, dotted: str):
    """The file of an iochar module or package (its __init__.py), or None."""
    parts = dotted.split(".")[1:]
    f = pkg.joinpath(*parts)
    if (f / "__init__.py").exists():
        return f / "__init__.py"
    return f.with_suffix(".py") if parts and f.with_suffix(".py").exists() else None


# ---- the layer order inside reports/iochar/ ---------------------------------------
# Bottom first: a unit imports only units to its left on its line, or on a line above.
# A unit is a module, or a subpackage taken whole (advice/, db/, cli/), whose modules
# import one another freely but in no loop. CONTRIBUTING.md shows this block verbatim
# (tests/unit/test_layering.py checks it); a new module gets its place here.
PY_LAYERS = """
schema safetext atomicfile darshan_counters  # tables and text: no iochar import
logformat codec frames                       # the log's bytes, its encodings, DataFrames
summary flags                                # the numbers of a summary, JOB partial bits
writer merge callsites darshan logtree       # write logs, merge ranks, observers, Darshan in
live livedir jobs                            # live files, where they are, jobs in a directory
log __init__                                 # Log and open(); the package (iochar.open)
advice compare plots html_observed html      # advice, comparison, pictures
parser_views jobreport junit darshan_export  # what the commands print and write
cli db                                       # the commands
"""


def py_layers() -> dict:
    """unit -> its position in PY_LAYERS."""
    names = [w for line in PY_LAYERS.splitlines() for w in line.split("#")[0].split()]
    return {name: i for i, name in enumerate(names)}


def _unit(pkg, f) -> str:
    rel = f.relative_to(pkg)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def python_layer_violations(root):
    pkg = pathlib.Path(root) / "reports" / "iochar"
    if not pkg.is_dir():
        return
    order = py_layers()
    inner = {}  # subpackage file -> files of the same subpackage it imports
    for src in sorted(pkg.rglob("*.py")):
        me = _unit(pkg, src)
        where = src.relative_to(root)
        if me not in order:
            yield f"{where}: {me} is not in the layer order (scripts/check_layers.py PY_LAYERS)"
            continue
        for line, _, dest, name in _targets(src, pkg):
            if dest is None or dest == src:
                continue
            to = _unit(pkg, dest)
            if name and name.startswith("_") and not name.startswith("__"):
                yield f"{where}:{line}: imports {name} from {dest.relative_to(pkg)} (a private name)"
            if to == me:
                if src.parent != pkg:
                    inner.setdefault(src, set()).add(dest)
            elif to in order and order[to] > order[me]:
                yield f"{where}:{line}: imports {to} (runs back up: {me} -> {to})"
    yield from _loops(root, inner)


def _loops(root, graph: dict):
    """One message per loop of imports among a subpackage's files."""
    done, seen = set(), set()

    def visit(f, path):
        if f in path:
            loop = path[path.index(f):] + [f]
            key = frozenset(loop)
            if key not in seen:
                seen.add(key)
                yield "import loop: " + " -> ".join(str(x.relative_to(root)) for x in loop)
            return
        if f in done:
            return
        for g in sorted(graph.get(f, ())):
            yield from visit(g, path + [f])
        done.add(f)

    for f in sorted(graph):
        yield from visit(f, [])


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent
    bad = list(violations(root)) + list(python_violations(root)) + list(python_layer_violations(root))
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
