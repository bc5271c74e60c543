"""Looking QualBench up (a report reads its metrics) imports neither its loader nor kaoshi.data's readers:
they load where questions are read or a path is detected."""

from __future__ import annotations

import json

from kaoshi.benchmarks import get_benchmark
from kaoshi.benchmarks.qualbench.domains import QUALBENCH_DOMAINS
from kaoshi.benchmarks.qualbench.loader import qualbench_question
from tests.support.fresh import run_fresh

LOADING = (
    "kaoshi.benchmarks.qualbench.loader",
    "kaoshi.benchmarks.common.sniff",
    "kaoshi.data.collect",
    "kaoshi.data.hub",
    "kaoshi.data.rawio",
)


def test_the_lookup_imports_no_loader() -> None:
    code = (
        "import json, sys\n"
        "from kaoshi.benchmarks import find_benchmark\n"
        "found = find_benchmark('qualbench')\n"
        "print(json.dumps([len(found.metrics), sorted(sys.modules)]))\n"
    )
    result = run_fresh(code)
    assert result.returncode == 0, result.stderr
    metrics, modules = json.loads(result.stdout.strip().splitlines()[-1])
    assert metrics > 0
    assert [m for m in LOADING if m in modules] == []


def test_the_registered_domains_are_the_loaders() -> None:
    qualbench = get_benchmark("qualbench")
    assert qualbench.categories == qualbench.english_names == QUALBENCH_DOMAINS
    assert len(QUALBENCH_DOMAINS) == 6
    record = {"idx": 1, "question_type": "判断题", "domain": "消防", "question": "q", "answer": "正确"}
    assert qualbench_question(record, "QualBench.json", None).category == QUALBENCH_DOMAINS["消防"]
