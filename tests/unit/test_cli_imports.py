"""No CLI imports another CLI: shared pieces live in iochar/cli/common.py, cli/jobs.py
or a non-CLI module (iochar/jobreport.py), so each entry point can change alone."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "reports" / "iochar"


def entry_modules() -> dict:
    """{module dotted name: file} of every [project.scripts] entry point."""
    text = (ROOT / "reports" / "pyproject.toml").read_text()
    mods = re.findall(r'^iochar-[a-z]+ = "(iochar\.[a-z.]+):main"', text, re.M)
    return {m: PKG.joinpath(*m.split(".")[1:]).with_suffix(".py") for m in mods}


def imported(path: Path) -> set:
    """Dotted names a module imports, relative imports resolved."""
    pkg = ["iochar", *path.relative_to(PKG).parent.parts]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = pkg[:len(pkg) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            out.add(mod)
            out |= {f"{mod}.{a.name}" for a in node.names}
    return out


def test_no_cli_imports_another_cli():
    entries = entry_modules()
    assert len(entries) >= 4  # report, parser, diff, db
    for name, path in entries.items():
        others = (set(entries) - {name}) & imported(path)
        assert not others, f"{name} imports {others}"
