"""The layout says how data flows: the command line depends only on the public API (kaoshi.api, kaoshi's
errors, the benchmark registry) and on rendering (kaoshi.report); it builds no run, loads no model and
opens no store itself."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[1] / "src" / "kaoshi" / "cli"
ALLOWED = ("kaoshi.api", "kaoshi.report", "kaoshi.cli", "kaoshi.errors", "kaoshi.benchmarks")


def kaoshi_imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kaoshi"):
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("kaoshi")]
    return found


def test_the_command_line_imports_only_the_api_and_rendering() -> None:
    outside = [
        f"{path.name}:{line}: {module}"
        for path in sorted(CLI.glob("*.py"))
        for line, module in kaoshi_imports(path)
        if module != "kaoshi" and not module.startswith(ALLOWED)
    ]
    assert outside == []


def test_the_check_sees_imports() -> None:
    sample = CLI / "run_cmd.py"
    assert any(module.startswith("kaoshi.api") for _, module in kaoshi_imports(sample))
