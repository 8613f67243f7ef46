#!/usr/bin/env python3
"""The C sources' include graph has no back edge (CONTRIBUTING.md, layering):

    runtime/  -> runtime/ only            (the core knows no wrapper, no MPI)
    reducer/  -> reducer/, runtime/       (the MPI runtime and the shutdown)
    wrappers/ -> wrappers/, runtime/, and reducer/'s wrapper header only
                 (the MPI-IO wrappers stand on the MPI runtime, never the reverse)

inside runtime/, reducer/ and wrappers/, every #include and every call (or use
of a global) goes down the layer order of RUNTIME_LAYERS / REDUCER_LAYERS /
WRAPPERS_LAYERS (the calls read from the build's object files with nm: what
the compiler emitted, macros and inline functions expanded, so nothing hides
a call; and a header's inline function, expanded into its callers' objects,
is also read from the header: what it calls or uses is its header's file's;
a call of an interposed name, fstat say, is the C library's, not a tie);

and in the Python package, library code never stands on a command line tool:
only reports/iochar/cli/ and the other commands ([project.scripts] in
reports/pyproject.toml: iochar/db/cli.py) import from reports/iochar/cli/.

Inside reports/iochar/ the modules follow PY_LAYERS (bottom first): an import that
runs back up the order (inside a function too) fails, so does a module missing from
the order, an import of another module's _private name (or a use of one
through the module, `S._name`), and a loop inside a subpackage.

Prints each offending `#include`, call or import and exits 1; exit 0 when all
hold.  Usage: check_layers.py [source root [build dir]] (the build dir
defaults to ROOT/build; without its objects the calls are not checked and
that is an error)."""
import ast
import pathlib
import re
import subprocess
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



# ---- inside runtime/, reducer/, wrappers/: the layer order (CONTRIBUTING.md) --
# Bottom first.  A unit is a source with its header (x.c and x.h; a module's
# private header x_internal.h is x.c's, which provides what it declares), or a
# header no source provides (rw_state.h: the accounting's state, which the
# record table, the series and the steps above them stand on), or one listed
# apart by its file name.  A unit includes, calls and uses
# only units of lower floors, its headers' inline functions included: two
# units of one floor know nothing of each other.
RUNTIME_LAYERS = [
    ["counters.h", "flags.h", "bytes.h", "safefile", "handlers"],
    ["core"],  # globals, guards, the record locks' slow path, clocks
    ["modules", "layout", "warn", "lustre"],  # lustre: on bytes.h
    ["config", "log_codec"],
    ["fastrule", "interpose", "paths", "logdir", "log_buf", "jobkey"],
    ["mounts", "exclude", "callsites", "trace", "rw_state.h"],
    ["observe", "live"],
    ["records"],
    ["series"],
    ["access"],
    ["log_sections"],
    ["log_writer"],
    ["reap"],  # a parent makes its ended children's live files their logs
    ["lifecycle"],  # init, the serial shutdown, fork, exec, MPI_Abort's log, _exit
]
REDUCER_LAYERS = [
    ["mpi_names.h", "pmpi", "merge"],
    ["steps.h", "mpi_wrap.h"],
    ["vote"],
    ["owners", "callsites_mpi"],
    ["wide", "write"],
    ["facts"],
    ["reduce"],
    ["lifecycle"],  # MPI_Init, MPI_Finalize, MPI_Abort
    ["mpi_table"],  # one MPI's wrappers, for the dispatch
    ["mpi_dispatch"],  # the exported MPI names, each MPI's table behind them
]
WRAPPERS_LAYERS = [
    ["posix_counters.h", "stdio_counters.h", "mpiio_counters.h", "hdf5_counters.h",
     "netcdf_counters.h", "pnetcdf_counters.h", "lustre_counters.h"],  # each module's counter list
    ["dynlib", "posix", "mpiio", "exec", "signal", "wait"],  # posix, mpiio: the module, shared steps
    ["posix_rw", "posix_meta", "posix_aio", "posix_xfer", "stdio", "hdf5", "ncfamily",
     "mpiio_data", "mpiio_req"],
    ["netcdf", "pnetcdf"],  # on ncfamily: what both libraries do
]
LAYERS = {"runtime": RUNTIME_LAYERS, "reducer": REDUCER_LAYERS, "wrappers": WRAPPERS_LAYERS}


def floors(folder):
    """unit -> floor (0 the bottom) of runtime/, reducer/ or wrappers/."""
    return {u: i for i, floor in enumerate(LAYERS[folder]) for u in floor}


def unit_of(path, floor):
    """The unit a file of runtime/, reducer/ or wrappers/ belongs to (see above)."""
    name = pathlib.PurePath(path).name
    if name in floor:
        return name
    stem = name.rsplit(".", 1)[0]
    return stem[:-len("_internal")] if stem.endswith("_internal") else stem


def include_order_violations(root):
    """#include lines of runtime/, reducer/ and wrappers/ that reach a unit of
    their own floor or above (a header of another folder: violations() judges it)."""
    root = pathlib.Path(root)
    for folder in LAYERS:
        floor = floors(folder)
        for src in sorted((root / folder).glob("*.[ch]")):
            here = unit_of(src, floor)
            rel = src.relative_to(root)
            if here not in floor:
                yield f"{rel}: not in the layer order (scripts/check_layers.py {folder.upper()}_LAYERS)"
                continue
            for target in INCLUDE.findall(src.read_text(errors="replace")):
                dest = src.parent / target
                if dest.parent.resolve() != src.parent.resolve() or not dest.exists():
                    continue  # another folder, or generated (log_dict.h)
                there = unit_of(dest, floor)
                if there != here and floor.get(there, len(floor)) >= floor[here]:
                    yield (f'{rel}: #include "{target}" runs up the layers '
                           f"({here}: floor {floor[here]}, {there}: floor {floor.get(there, '?')})")


def objects(build):
    """folder/unit -> the object files of a meson build directory (each
    target's in its NAME.p/, the MPI part once per MPI)."""
    objs = {}
    for o in sorted(pathlib.Path(build).glob("*.p/*.c.o")):
        folder, _, name = o.name[:-len(".c.o")].partition("_")
        objs.setdefault(f"{folder}/{name}", []).append(o)
    return objs


def symbols(paths):
    """path -> (defined, referenced) global symbols of each object file (one nm)."""
    out = subprocess.run(["nm", "-P", "-A", *map(str, paths)], capture_output=True, text=True,
                         check=True).stdout
    syms = {p: (set(), set()) for p in paths}
    for line in out.splitlines():  # "path: name kind [value size]"
        where, _, rest = line.rpartition(": ")
        name, kind = rest.split()[:2]
        defined, used = syms[pathlib.Path(where)]
        if kind in "Uwv":
            used.add(name)
        elif kind.isupper():
            defined.add(name)
    return syms


# A wrapper's exported name (IOCHAR_WRAP, MPI_WRAP) stands for the interface's
# own function: code that calls fstat means the C library's, which our wrapper
# (passing straight through inside the tool) only stands in front of.
_WRAPPED = re.compile(r"\b(?:IOCHAR|MPI)_WRAP\(\s*[^,]+,\s*(\w+)\s*,")


def interposed(root):
    """The names the wrappers export in the interfaces' place."""
    return {n for src in (pathlib.Path(root) / "wrappers").glob("*.c")
            for n in _WRAPPED.findall(src.read_text(errors="replace"))}


def call_order_violations(build, skip=frozenset()):
    """Calls (and uses of globals) from a unit of runtime/, reducer/ or wrappers/
    to one of its own floor or above, read from the objects the compiler emitted;
    the names in skip (the interposed ones) left out."""
    objs = objects(build)
    for folder in LAYERS:
        if not any(u.startswith(folder + "/") for u in objs):
            yield f"{build}: no object of {folder}/ (build first: ninja -C build)"
    # A name resolves first within its target (the MPI part is linked per MPI
    # before the rest: its MPI_File_* are its own wrappers, not the dispatch's).
    local, owner, uses = {}, {}, {}
    syms = symbols([o for files in objs.values() for o in files]) if objs else {}
    for unit, files in objs.items():
        for o in files:
            defined, used = syms[o]
            local.setdefault(o.parent, {}).update(dict.fromkeys(defined, unit))
            owner.update(dict.fromkeys(defined, unit))
            if unit.split("/")[0] in LAYERS:
                uses.setdefault(unit, set()).update((o.parent, s) for s in used)
    reported = set()
    for unit, used in sorted(uses.items()):
        folder, name = unit.split("/")
        floor = floors(folder)
        if name not in floor:
            continue  # its source is reported by include_order_violations
        for target, sym in sorted(used):
            if sym in skip:
                continue
            there = local[target].get(sym) or owner.get(sym)
            if not there or there == unit or not there.startswith(folder + "/"):
                continue
            other = there.split("/")[1]
            if floor.get(other, len(floor)) < floor[name]:
                continue
            line = (f"{unit}.c: uses {sym} of {there}.c, which runs up the layers "
                    f"({name}: floor {floor[name]}, {other}: floor {floor.get(other, '?')})")
            if line not in reported:  # once, not once per MPI
                reported.add(line)
                yield line


# Comments, strings and characters, then preprocessor lines (with their
# continuations): what is left of a header is declarations and definitions.
_NOISE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_TOKEN = re.compile(r"->|[A-Za-z_]\w*|\S")


def inline_functions(text):
    """(name, the names its body refers to) of each inline function a header
    defines: identifiers, not members (after . or ->), in order of first use."""
    text = _DIRECTIVE.sub("", _NOISE.sub(" ", text))
    toks = _TOKEN.findall(text)
    i, depth = 0, 0
    while i < len(toks):
        tok = toks[i]
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
        if tok != "inline" or depth:
            i += 1
            continue
        # the head, up to its body (a definition) or ';' (a declaration)
        j, parens, name, last = i + 1, 0, None, None
        while j < len(toks) and not (parens == 0 and toks[j] in "{;"):
            if toks[j] == "(":
                if parens == 0 and last and last != "__attribute__":
                    name = last
                parens += 1
            elif toks[j] == ")":
                parens -= 1
            elif parens == 0:
                last = toks[j]
            j += 1
        if j >= len(toks) or toks[j] == ";" or not name:
            i = j + 1
            continue
        k, body_depth = j + 1, 1
        used = []
        while k < len(toks) and body_depth:
            if toks[k] == "{":
                body_depth += 1
            elif toks[k] == "}":
                body_depth -= 1
            elif (toks[k][0].isalpha() or toks[k][0] == "_") and toks[k - 1] not in (".", "->") \
                    and toks[k] not in used:
                used.append(toks[k])
            k += 1
        yield name, used
        i = k


def inline_order_violations(root, build):
    """Names a header's inline function uses (calls, globals) of a unit of its
    header's floor or above: the function is its header's code wherever the
    compiler expands it."""
    root = pathlib.Path(root)
    objs = objects(build)
    syms = symbols([o for files in objs.values() for o in files]) if objs else {}
    owners = {}  # name -> the units defining it
    for unit, files in objs.items():
        for o in files:
            for s in syms[o][0]:
                owners.setdefault(s, set()).add(unit)
    for folder in LAYERS:
        floor = floors(folder)
        for h in sorted((root / folder).glob("*.h")):
            here = unit_of(h, floor)
            if here not in floor:
                continue  # reported by include_order_violations
            for fn, used in inline_functions(h.read_text(errors="replace")):
                for sym in used:
                    there = sorted(u.split("/")[1] for u in owners.get(sym, ())
                                   if u.startswith(folder + "/"))
                    if not there or here in there:
                        continue
                    other = there[0]
                    if floor.get(other, len(floor)) < floor[here]:
                        continue
                    yield (f"{h.relative_to(root)}: {fn} uses {sym} of {folder}/{other}.c, "
                           f"which runs up the layers ({here}: floor {floor[here]}, "
                           f"{other}: floor {floor.get(other, '?')})")


def layer_violations(root, build=None):
    """The layer order inside runtime/, reducer/ and wrappers/: includes, then
    calls (from the objects), then the headers' inline functions."""
    build = build or pathlib.Path(root) / "build"
    yield from include_order_violations(root)
    yield from call_order_violations(build, interposed(root))
    yield from inline_order_violations(root, build)


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
        for line, mod, _, name, _ in _targets(src, pkg):
            full = f"{mod}.{name}" if name else mod
            if (mod == "iochar.cli" or mod.startswith("iochar.cli.")) and \
                    len(full) > len(bad.get(line, "")):
                bad[line] = full
        for line, mod in sorted(bad.items()):
            yield f"{src.relative_to(root)}:{line}: imports {mod} (library -> cli)"


def _targets(path, pkg):
    """(line, module, its file or None, name taken from it or None, the local name
    bound to a module or None) of each iochar import in path, relative ones resolved,
    those inside functions included. `from M import x` takes module M.x when there is
    one, else the name x of M."""
    here = ["iochar", *path.relative_to(pkg).parent.parts]
    for node in ast.walk(ast.parse(path.read_text(errors="replace"))):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "iochar":
                    yield node.lineno, a.name, _module_of(pkg, a.name), None, a.asname
        elif isinstance(node, ast.ImportFrom):
            base = here[:len(here) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            if mod.split(".")[0] != "iochar":
                continue
            for a in node.names:
                sub = _module_of(pkg, f"{mod}.{a.name}")
                if sub is not None:
                    yield node.lineno, f"{mod}.{a.name}", sub, None, a.asname or a.name
                else:
                    yield node.lineno, mod, _module_of(pkg, mod), a.name, None


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
schema safetext atomicfile darshan_counters program  # tables, text: no iochar import
logformat codec frames                       # the log's bytes, its encodings, DataFrames
summary flags                                # the numbers of a summary, JOB partial bits
writer merge callsites darshan logtree       # write logs, merge ranks, observers, Darshan in
live livedir livescan livebulk liveview livemonitor jobs  # live files, where, the walk, bulk walk, read, live jobs; jobs
log __init__                                 # Log and open(); the package (iochar.open)
advice compare plots jobviews html_observed html  # advice, comparison, pictures
parser_views jobreport junit darshan_export anonymize  # what the commands print and write
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
        for line, _, dest, name, _ in _targets(src, pkg):
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
        yield from _private_uses(src, pkg, where)
    yield from _loops(root, inner)


def _private_uses(src, pkg, where):
    """`M._name` where M names another iochar module (`from . import summary as S`):
    the same private reach as importing _name from it."""
    modules = {local: dest for _, _, dest, _, local in _targets(src, pkg)
               if local and dest is not None and dest != src}
    for node in ast.walk(ast.parse(src.read_text(errors="replace"))):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in modules
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            yield (f"{where}:{node.lineno}: uses {node.attr} of "
                   f"{modules[node.value.id].relative_to(pkg)} (a private name)")


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
    build = sys.argv[2] if len(sys.argv) > 2 else None
    bad = (list(violations(root)) + list(layer_violations(root, build))
           + list(python_violations(root)) + list(python_layer_violations(root)))
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
