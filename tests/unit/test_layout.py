"""The layout says how data flows: the command line depends only on the public API (kaoshi.api, kaoshi's
errors, the benchmark registry) and on rendering (kaoshi.report); it builds no run, loads no model and
opens no store itself."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "src" / "kaoshi" / "cli"
ALLOWED = (
    "kaoshi.api",
    "kaoshi.report",
    "kaoshi.results",
    "kaoshi.cli",
    "kaoshi.errors",
    "kaoshi.version",
    "kaoshi.benchmarks",
    "kaoshi.view",  # `kaoshi view` serves the viewer (kaoshi.view.serve)
)


@functools.cache
def parsed(path: Path) -> ast.Module:
    """The file's syntax tree, parsed once for all the checks below (none of them changes it)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def kaoshi_imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(parsed(path)):
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


# -- the package order ---------------------------------------------------------------------------------
SRC = Path(__file__).resolve().parents[2] / "src" / "kaoshi"
# Lowest first: a package imports only from itself and the packages before it. `base` is the modules
# directly in kaoshi/ (errors, version, enums, ...); `kaoshi` itself is the lazy public namespace on top.
LAYERS = (
    "base",
    "data",
    "scoring",
    "qtypes",
    "prompts",
    "models",
    "store",
    "analysis",
    "results",
    "report",
    "benchmarks",
    "finetune",
    "runner",
    "api",
    "view",
    "cli",
    "kaoshi",
)
BENCHMARK_NAMES = (
    "ceval",
    "cmmlu",
    "qualbench",
    "gaokao",
    "agieval",
    "m3ke",
    "cflue",
    "fineval",
    "cmexam",
    "logiqa",
)


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "kaoshi"
    return parts[1] if (SRC / parts[1]).is_dir() else "base"


def all_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(SRC.rglob("*.py"))}


def imports_of(path: Path, known: dict[str, Path]) -> list[tuple[int, str, bool]]:
    """(line, imported kaoshi module, inside a function) for every import in the file, TYPE_CHECKING ones
    too; `from kaoshi.x import y` counts as importing kaoshi.x.y where that is a module."""
    return list(_imports_of(path, frozenset(known)))


@functools.cache
def _imports_of(path: Path, known: frozenset[str]) -> tuple[tuple[int, str, bool], ...]:
    tree = parsed(path)
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside |= {id(n) for n in ast.walk(node) if n is not node}
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            if base.split(".")[0] == "kaoshi":
                names.append(base)
                names += [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.split(".")[0] == "kaoshi"]
        found += [(node.lineno, name, id(node) in inside) for name in names]
    return tuple(found)


def test_every_package_has_a_place_in_the_order() -> None:
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages <= set(LAYERS), packages - set(LAYERS)


def test_no_import_runs_back_up_the_layers() -> None:
    known = all_modules()
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    upward = [
        f"{name}:{line} ({layer_of(name)}) imports {target} ({layer_of(target)})"
        for name, path in known.items()
        for line, target, _ in imports_of(path, known)
        if rank[layer_of(target)] > rank[layer_of(name)]
        and not (name == "kaoshi" and target.startswith("kaoshi."))  # the lazy public namespace
    ]
    assert upward == []


def test_no_import_circle() -> None:
    """Module-level imports (not TYPE_CHECKING-only ones, not those inside functions) form no circle."""
    known = all_modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        tree = parsed(path)
        checking = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for n in ast.walk(node)
        }
        inner = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for n in ast.walk(node)
        }
        skip = checking | inner
        lines = {getattr(n, "lineno", None) for n in ast.walk(tree) if id(n) in skip}
        graph[name] = {
            t for line, t, _ in imports_of(path, known) if line not in lines and t in known and t != name
        }
    cycles = strongly_connected(graph)
    assert cycles == []


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: the components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_circle_check_finds_a_circle() -> None:
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_imports_inside_functions_say_why() -> None:
    """An import of kaoshi code inside a function only defers weight (sqlite3, a backend, a command's
    code), and says so on the line before ('# Late import: ...'); never to dodge a circle."""
    known = all_modules()
    unexplained = []
    for name, path in known.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        for line, target, inside in imports_of(path, known):
            before = lines[line - 2].strip() if line >= 2 else ""
            if inside and not before.startswith("# Late import:") and not target.startswith(name):
                unexplained.append(f"{name}:{line}: {target}")
    assert sorted(set(unexplained)) == []


def test_each_benchmark_lives_in_its_package() -> None:
    """No module outside kaoshi.benchmarks is named after a benchmark, and the core below the benchmarks
    never names a benchmark's module, not even as a string to import later (prose may point there)."""
    outside = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if "benchmarks" not in path.relative_to(SRC).parts and any(b in path.stem for b in BENCHMARK_NAMES)
    ]
    assert outside == []
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    naming = [
        f"{name}"
        for name, path in all_modules().items()
        if rank[layer_of(name)] < rank["benchmarks"]
        and re.search(r"[\"']kaoshi\.benchmarks", path.read_text(encoding="utf-8"))
    ]
    assert naming == []
    for benchmark in BENCHMARK_NAMES:
        assert (SRC / "benchmarks" / benchmark / "benchmark.py").exists(), benchmark


# Benchmarks the core once named in its code: the packages', and LHMKE's mixed exams (kaoshi's JSONL).
NAMED_IN_CODE = (*BENCHMARK_NAMES, "lhmke")


def identifiers(tree: ast.Module) -> list[tuple[int, str]]:
    """Every name the code gives or uses: variables, attributes, functions, classes, arguments, keyword
    arguments and import aliases (not strings, not comments: prose may name a benchmark)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            found.append((node.lineno, node.attr))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append((node.lineno, node.name))
        elif isinstance(node, ast.arg) or (isinstance(node, ast.keyword) and node.arg is not None):
            found.append((node.lineno, str(node.arg)))
        elif isinstance(node, ast.alias):
            found.append((0, node.asname or node.name.rpartition(".")[2]))
    return found


def naming_a_benchmark(name: str) -> bool:
    return any(benchmark in name.lower().replace("_", "").replace("-", "") for benchmark in NAMED_IN_CODE)


def test_no_identifier_below_the_benchmarks_names_one() -> None:
    """The core knows no benchmark: a benchmark's own numbers, prompts and judges live in its package
    (or kaoshi.benchmarks.common), and what lies below them names none in its code."""
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    naming = sorted(
        {
            f"{name}:{line}: {identifier}"
            for name, path in all_modules().items()
            if rank[layer_of(name)] < rank["benchmarks"]
            for line, identifier in identifiers(parsed(path))
            if naming_a_benchmark(identifier)
        }
    )
    assert naming == []


def test_the_identifier_check_sees_a_benchmarks_name() -> None:
    code = "from x import qualbench_f1\nclass CevalLayout: pass\nf(gaokao_mode=1, x='ceval')\nT.f1_qualbench"
    named = sorted(name for _, name in identifiers(ast.parse(code)) if naming_a_benchmark(name))
    assert named == ["CevalLayout", "f1_qualbench", "gaokao_mode", "qualbench_f1"]
    assert not naming_a_benchmark("category_means") and naming_a_benchmark("M3KE_TASKS")


def test_the_order_check_sees_an_upward_import(tmp_path: Path) -> None:
    known = all_modules()
    upward = [
        t for _, t, _ in imports_of(SRC / "report" / "leaderboard.py", known) if layer_of(t) == "results"
    ]
    assert upward, "the check must see report -> results imports"


# -- the tests' own layout -----------------------------------------------------------------------------
TESTS = Path(__file__).resolve().parents[1]
# What a file under tests/ may import from tests/: the shared helpers, the golden commands, and (inside
# tests/realdata only) that folder's own conftest and comparison helpers. Never a test module, nor
# conftest.py (it holds fixtures only; pytest hands them over by name).
TEST_HELPERS = ("tests.support", "tests.golden.commands")
REALDATA_HELPERS = ("tests.realdata.conftest", "tests.realdata.compare")


def imports_of_tests(source: str, package: str) -> list[tuple[int, str]]:
    """(line, module) for every import of tests.* in `source`, a module of `package`, those inside
    functions too; a relative import counts as one of the module it resolves to."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            names = [base] if node.module else [f"{base}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        found += [(node.lineno, name) for name in names if name == "tests" or name.startswith("tests.")]
    return found


def allowed_test_import(package: str, module: str) -> bool:
    allowed = TEST_HELPERS + (REALDATA_HELPERS if package.startswith("tests.realdata") else ())
    return any(module == a or module.startswith(a + ".") for a in allowed)


def test_no_test_module_imports_another() -> None:
    """Helpers shared by several test modules live in tests/support/; conftest.py holds fixtures only."""
    crossing = []
    for path in sorted(TESTS.rglob("*.py")):
        package = ".".join(path.relative_to(TESTS.parent).parent.parts)
        crossing += [
            f"{path.relative_to(TESTS)}:{line}: {module}"
            for line, module in imports_of_tests(path.read_text(encoding="utf-8"), package)
            if not allowed_test_import(package, module)
        ]
    assert crossing == []


def test_the_test_import_check_sees_a_crossing() -> None:
    source = (
        "from tests.support.runs import cli\n"
        "import tests.unit.test_store\n"
        "def f():\n"
        "    from tests.conftest import x\n"
        "    from .test_api import cli_report\n"
        "    from . import test_judge\n"
    )
    found = imports_of_tests(source, "tests.integration")
    assert found == [
        (1, "tests.support.runs"),
        (2, "tests.unit.test_store"),
        (4, "tests.conftest"),
        (5, "tests.integration.test_api"),
        (6, "tests.integration.test_judge"),
    ]
    assert [allowed_test_import("tests.integration", m) for _, m in found] == [True] + [False] * 4
    assert allowed_test_import("tests.realdata", "tests.realdata.compare")
    assert not allowed_test_import("tests.integration", "tests.realdata.compare")
    assert allowed_test_import("tests.golden", "tests.golden.commands")
