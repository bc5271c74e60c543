"""A package another project would publish, pip-installed for a test: its source written out, installed
offline into a folder of its own (never into the shared environment), and kaoshi run with that folder on
its path."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path


def pip_installed(
    root: Path, distribution: str, module: str, source: str, entry_points: Mapping[str, Mapping[str, str]]
) -> dict[str, str]:
    """The environment of a Python where `distribution` (one module, `module`, holding `source`, declaring
    `entry_points`: group -> name -> object, e.g. {"kaoshi.models": {"letter": "kaoshi_letter:LetterModel"}})
    is pip-installed into a folder below `root` on its path."""
    package = root / distribution
    (package / module).mkdir(parents=True)
    (package / module / "__init__.py").write_text(textwrap.dedent(source), encoding="utf-8")
    (package / "pyproject.toml").write_text(_pyproject(distribution, entry_points), encoding="utf-8")
    site = root / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(site), str(package)],
        check=True, capture_output=True,
    )  # fmt: skip
    written = site.glob(f"{distribution.replace('-', '_')}-*.dist-info/entry_points.txt")
    assert list(written), "pip wrote the entry points"
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH", "")]))
    return {**os.environ, "PYTHONPATH": path, "COLUMNS": "200"}


def _pyproject(distribution: str, entry_points: Mapping[str, Mapping[str, str]]) -> str:
    """A setuptools project of that name, version 0.1, declaring those entry points."""
    lines = [
        "[build-system]",
        'requires = ["setuptools"]',
        'build-backend = "setuptools.build_meta"',
        "",
        "[project]",
        f'name = "{distribution}"',
        'version = "0.1"',
    ]
    for group, entries in entry_points.items():
        lines += [
            "",
            f'[project.entry-points."{group}"]',
            *(f'{name} = "{obj}"' for name, obj in entries.items()),
        ]
    return "\n".join(lines) + "\n"


def kaoshi(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The `kaoshi` command of this environment, run with `env`."""
    script = Path(sys.executable).with_name("kaoshi")
    return subprocess.run([str(script), *args], capture_output=True, text=True, env=env)
