"""The package's imports point down: each module imports only modules of its own package or of
the packages listed below it in LEVELS (README.md, "Layout").  Imports under ``if TYPE_CHECKING:``
are annotations only and are not counted; imports inside functions are."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "python"

#: Lowest first; a module may import from its own level or any lower one (top-level modules
#: and packages by their first name under ``pario``).
LEVELS: tuple[tuple[str, ...], ...] = (
    ("errors", "units", "table", "names", "paths", "textfit", "values", "collective", "blas", "malloc",
     "cdecl"),
    ("launch", "trace"),
    ("model",),
    ("log",),
    ("analysis", "kernels"),
    ("diagnosis",),
    ("report", "survey"),
    ("tune", "verify"),
    ("commands",),
    ("cli", "__main__"),
)
LEVEL = {name: i for i, names in enumerate(LEVELS) for name in names}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "pario"


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of each ``pario`` import, outside ``if TYPE_CHECKING:`` blocks."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "pario":
            if node.module == "pario":  # ``from pario import units``: the module named
                found.extend((node.lineno, f"pario.{a.name}") for a in node.names)
            else:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "pario")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def upward_imports() -> list[str]:
    bad = []
    for path in sorted((ROOT / "pario").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        here = _unit(module)
        for line, target in _imports(ast.parse(path.read_text())):
            there = _unit(target)
            if there in ("pario", here) or target == "pario.__version__":
                continue
            if LEVEL[there] > LEVEL[here]:
                bad.append(f"{path.relative_to(ROOT)}:{line}: {module} imports {target}")
    return bad


def test_every_unit_has_a_level() -> None:
    units = {p.stem if p.is_file() else p.name for p in (ROOT / "pario").iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    assert units == set(LEVEL)


def test_imports_point_down() -> None:
    assert upward_imports() == []


def test_an_upward_import_is_found() -> None:
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pario.cli import x\n"
                     "def f():\n    from pario.report import build\n")
    assert _imports(tree) == [(5, "pario.report")]
