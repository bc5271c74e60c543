"""End-to-end command-line tests, in process (fast) and as real subprocesses (kill and resume)."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from tests.support.files import write_jsonl

ROOT = Path(__file__).resolve().parents[2]
EXAM = load_exam_result("sample").exam


def kaoshi(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def script(tmp_path: Path) -> Path:
    """A mock model that is right on every single-choice question and answers 'A' elsewhere."""
    lines = []
    for q in EXAM.questions:
        if q.type.value == "single":
            lines.append({"id": q.id, "response": f"答案：{''.join(sorted(q.answer))}"})  # type: ignore[arg-type]
        elif q.type.value == "open":
            lines.append({"id": q.id, "response": "参考回答"})
        else:
            lines.append({"id": q.id, "response": "答案：A"})
    return write_jsonl(tmp_path / "mock.jsonl", lines)


def test_run_report_samples_runs(capsys: pytest.CaptureFixture[str], store_path: Path, script: Path) -> None:
    code, out, err = kaoshi(
        capsys,
        "run",
        "--benchmark",
        "sample",
        "--model",
        f"mock:{script}",
        "--run-name",
        "m",
        "--store",
        str(store_path),
    )
    assert code == 0, err
    assert "run 'm': 44 new, 0 already stored, 0 error(s)" in err
    assert "single" in out

    code, out, _ = kaoshi(capsys, "--store", str(store_path), "report", "m", "--format", "json")
    report = json.loads(out)
    multi_a = sum(1 for q in EXAM.questions if q.type.value == "multi" and q.answer == frozenset("A"))
    # judge answers 'A' are unparsed (neither 正确 nor 错误), multi 'A' is right only where gold is {A}
    assert report["run"] == "m" and report["n"] == 44 and report["errors"] == 0
    assert report["graded"] == 40 and report["ungraded"] == 4
    assert report["correct"] == 20 + multi_a
    assert report["unparsed"] == 12
    assert report["accuracy"] == pytest.approx((20 + multi_a) / 40)
    assert report["groups"]["type"]["single"] == {
        **report["groups"]["type"]["single"],
        "n": 20,
        "accuracy": 1.0,
    }
    assert set(report["groups"]) == {"domain", "type", "subject", "category", "group"}
    assert set(report["groups"]["domain"]) == {"安全生产", "经济金融", "建筑工程", "信息技术"}

    code, out, _ = kaoshi(capsys, "samples", "m", "--format", "jsonl", "--store", str(store_path))
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 44
    first = rows[0]
    assert {"id", "gold", "answer", "status", "correct", "response"} <= set(first)
    assert (
        first["id"] == "s-safe-1"
        and first["gold"] == "C"
        and first["answer"] == "C"
        and first["correct"] is True
    )
    assert Counter(r["status"] for r in rows) == {"ok": 32, "unparsed": 12}

    code, out, _ = kaoshi(capsys, "runs", "--store", str(store_path), "--format", "json")
    assert [(r["run"], r["samples"], r["status"]) for r in json.loads(out)] == [("m", 44, "finished")]
    code, out, _ = kaoshi(capsys, "runs", "--store", str(store_path))
    assert code == 0 and "44/44" in out

    code, out, _ = kaoshi(
        capsys, "report", "m", "--by", "domain", "--format", "md", "--store", str(store_path)
    )
    assert "| 安全生产 |" in out and "| type |" not in out


def test_loglik_samples_carry_logprobs(
    capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path
) -> None:
    lines = [{"id": q.id, "logprobs": {"A": -0.3, "B": -1.5}} for q in EXAM.questions[:2]]
    script = write_jsonl(tmp_path / "lp.jsonl", lines)
    code, _, err = kaoshi(
        capsys,
        "run",
        "--benchmark",
        "sample",
        "--model",
        f"mock:{script}",
        "--method",
        "loglik",
        "--limit-total",
        "2",
        "--run-name",
        "lp",
        "--store",
        str(store_path),
    )
    assert code == 0, err
    code, out, _ = kaoshi(capsys, "samples", "lp", "--format", "jsonl", "--store", str(store_path))
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["id"], r["answer"], r["logprobs"]) for r in rows] == [
        ("s-safe-1", "A", {"A": -0.3, "B": -1.5}),
        ("s-safe-2", "A", {"A": -0.3, "B": -1.5}),
    ]
    code, out, _ = kaoshi(
        capsys, "samples", "lp", "--status", "error", "--format", "jsonl", "--store", str(store_path)
    )
    assert out == ""


def test_qualbench_and_ceval_runs(
    capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path
) -> None:
    rows = [
        {
            "idx": i,
            "question_type": "单选题",
            "domain": "消防",
            "question": "题\nA．甲\nB．乙",
            "answer": "A",
        }
        for i in range(6)
    ]
    data = tmp_path / "QualBench.json"
    data.write_text(json.dumps(rows, ensure_ascii=False))
    code, out, err = kaoshi(
        capsys,
        "run",
        "--benchmark",
        "qualbench",
        "--data",
        str(data),
        "--model",
        "random",
        "--run-name",
        "rnd",
        "--store",
        str(store_path),
    )
    assert code == 0, err
    code, out, _ = kaoshi(capsys, "report", "rnd", "--by", "domain", "--store", str(store_path))
    assert "消防" in out

    from tests.support.files import make_ceval

    root = make_ceval(tmp_path / "ceval-exam")
    code, _, err = kaoshi(
        capsys,
        "run",
        "--benchmark",
        "ceval",
        "--data",
        str(root),
        "--split",
        "val",
        "--model",
        "constant:A",
        "--store",
        str(store_path),
    )
    assert code == 0, err
    code, out, _ = kaoshi(
        capsys,
        "report",
        "ceval-val-constant_A-generate-5shot",
        "--format",
        "json",
        "--store",
        str(store_path),
    )
    report = json.loads(out)
    assert report["correct"] == 2 and report["graded"] == 6  # one 'A' per subject
    assert set(report["groups"]["category"]) == {"STEM"}


def test_exit_codes(
    capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path, script: Path
) -> None:
    bad = write_jsonl(
        tmp_path / "bad.jsonl", [{"id": "x", "type": "judge", "question": "q", "answer": "也许"}]
    )
    code, _, err = kaoshi(capsys, "run", "--data", str(bad), "--model", "random", "--store", str(store_path))
    assert code == 2
    assert f"{bad}:1: field 'answer': true/false answer must be 正确 or 错误" in err
    assert "Traceback" not in err

    code, _, err = kaoshi(
        capsys, "run", "--benchmark", "sample", "--model", "nope", "--store", str(store_path)
    )
    assert (code, err.strip()) == (
        2,
        "error: unknown model 'nope' (known: constant, gguf, hf, llamacpp, mock, openai, random, smollm2, "
        "vllm, py:MODULE:CLASS)",
    )

    code, _, err = kaoshi(capsys, "report", "ghost", "--store", str(store_path))
    assert code == 2 and "no store at" in err

    assert (
        kaoshi(
            capsys,
            "run",
            "--benchmark",
            "sample",
            "--model",
            "random",
            "--run-name",
            "x",
            "--limit",
            "3",
            "--store",
            str(store_path),
        )[0]
        == 0
    )
    code, _, err = kaoshi(
        capsys,
        "run",
        "--benchmark",
        "sample",
        "--model",
        "random",
        "--run-name",
        "x",
        "--limit",
        "3",
        "--seed",
        "5",
        "--store",
        str(store_path),
    )
    assert code == 2 and "seed: stored 0, now 5" in err

    code, _, err = kaoshi(capsys, "report", "ghost", "--store", str(store_path))
    assert code == 2 and "no run named 'ghost'" in err

    code, _, err = kaoshi(
        capsys,
        "run",
        "--benchmark",
        "ceval",
        "--model",
        "random",
        "--store",
        str(store_path),
        "--data",
        str(tmp_path / "missing"),
    )
    assert (code, err.strip()) == (2, f"error: {tmp_path / 'missing'}: no such file or directory")


def test_validate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = write_jsonl(
        tmp_path / "good.jsonl", [{"id": "x", "type": "judge", "question": "q", "answer": "正确"}]
    )
    code, out, _ = kaoshi(capsys, "validate", str(good))
    assert code == 0 and out.startswith(f"ok: {good}: 1 question(s) (1 judge), 0 few-shot, 0 invalid row(s)")
    bad = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            {"id": "x", "type": "judge", "question": "q", "answer": "正确"},
            {"id": "x", "type": "judge", "question": "q", "answer": "正确"},
            {"id": "y", "type": "single", "question": "q", "answer": "A"},
        ],
    )
    code, out, err = kaoshi(capsys, "validate", str(bad))
    assert code == 2
    assert err.splitlines() == [
        f"{bad}:2: field 'id': duplicate id 'x' (first seen at line 1)",
        f"{bad}:3: field 'options': missing required field for a choice question",
    ]
    assert out.startswith("invalid:")
    assert kaoshi(capsys, "validate", str(bad), "--on-invalid", "skip")[0] == 0


def test_validate_reports_every_row_when_none_is_valid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            {"id": "a", "type": "single", "question": "q", "options": ["x", "y"], "answer": "C"},
            {"id": "b", "type": "judge", "question": "q"},
        ],
    )
    code, _, err = kaoshi(capsys, "validate", str(bad))
    assert code == 2
    assert err.splitlines() == [
        f"error: no valid questions in {bad}",
        f"  {bad}:1: field 'answer': answer letter(s) C not among options AB",
        f"  {bad}:2: field 'answer': missing required field",
    ]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env.pop("KAOSHI_STORE", None)
    return env


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "kaoshi.cli.main", *args]


@pytest.mark.slow
def test_killed_run_resumes_without_asking_twice(tmp_path: Path, store_path: Path) -> None:
    """Really kill a run mid-way (SIGKILL), resume it, and check the request log and the store."""
    log = tmp_path / "requests.log"
    args = _cli(
        "run",
        "--benchmark",
        "sample",
        "--model",
        f"py:tests.support.models:CountingModel:{log}",
        "--run-name",
        "k",
        "--store",
        str(store_path),
    )
    process = subprocess.Popen(args, cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    stored = 0
    while stored < 10 and time.monotonic() < deadline:
        time.sleep(0.05)
        if store_path.exists():
            try:
                with sqlite3.connect(store_path) as db:
                    stored = db.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
            except sqlite3.OperationalError:
                stored = 0
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL, process.stderr.read() if process.stderr else ""
    with sqlite3.connect(store_path) as db:
        committed = {row[0] for row in db.execute("SELECT question_id FROM samples WHERE run='k'")}
    assert 10 <= len(committed) < len(EXAM)
    listed = subprocess.run(
        _cli("runs", "--store", str(store_path)), cwd=tmp_path, env=_env(), capture_output=True, text=True
    )
    assert f"interrupted {len(committed)}/{len(EXAM)}" in listed.stdout, listed.stdout

    resumed = subprocess.run(args, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(committed)} already stored" in resumed.stderr

    requested = Counter(log.read_text().split())
    assert set(requested) == {q.id for q in EXAM.questions}  # none missing
    twice = {qid for qid, count in requested.items() if count > 1}
    assert all(requested[qid] == 1 for qid in committed)  # nothing stored was asked again
    assert len(twice) <= 1 and not twice & committed  # at most the one request in flight at the kill
    with sqlite3.connect(store_path) as db:
        rows = db.execute("SELECT question_id, status FROM samples WHERE run='k'").fetchall()
    assert len(rows) == len(EXAM) and all(status == "ok" for _, status in rows)


@pytest.mark.slow
def test_module_entry_point_prints_version() -> None:
    result = subprocess.run(_cli("--version"), env=_env(), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("kaoshi ")


def test_import_kaoshi_is_light() -> None:
    code = (
        "import sys, kaoshi, kaoshi.cli.main; heavy = {'torch', 'transformers', 'vllm', 'openai', 'datasets',"
        " 'numpy'} & set(sys.modules); print(sorted(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "[]", result.stderr


def test_llm_extractor_and_show_unparsed(
    capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path
) -> None:
    questions = EXAM.questions[:3]  # s-safe-1 (gold C), s-safe-2 (gold A), s-safe-3 (gold B)
    rambling = write_jsonl(
        tmp_path / "model.jsonl", [{"id": q.id, "response": "嗯，我想想看这个问题……"} for q in questions]
    )
    # the extractor reads s-safe-1 as C, gives up on s-safe-2, and fails on s-safe-3 (no line)
    reader = write_jsonl(
        tmp_path / "reader.jsonl", [{"id": "s-safe-1", "response": "C"}, {"id": "s-safe-2", "response": "无"}]
    )
    args = [
        "run",
        "--benchmark",
        "sample",
        "--model",
        f"mock:{rambling}",
        "--limit",
        "3",
        "--store",
        str(store_path),
    ]
    assert kaoshi(capsys, *args, "--run-name", "plain")[0] == 0
    assert kaoshi(capsys, *args, "--run-name", "llm", "--llm-extractor", f"mock:{reader}")[0] == 0
    _, out, _ = kaoshi(capsys, "samples", "llm", "--format", "jsonl", "--store", str(store_path))
    rows = {r["id"]: r for r in map(json.loads, out.splitlines())}
    assert (rows["s-safe-1"]["status"], rows["s-safe-1"]["answer"], rows["s-safe-1"]["extracted_by"]) == (
        "ok",
        "C",
        "llm",
    )
    assert rows["s-safe-1"]["correct"] is True
    assert rows["s-safe-2"]["status"] == "unparsed" and rows["s-safe-3"]["status"] == "unparsed"
    _, out, _ = kaoshi(capsys, "report", "plain", "--format", "json", "--store", str(store_path))
    assert json.loads(out)["unparsed"] == 3
    _, out, _ = kaoshi(capsys, "report", "llm", "--show", "unparsed", "--store", str(store_path))
    assert "llm: 2 unparsed sample(s)" in out and "s-safe-2" in out and "s-safe-1 " not in out


def test_a_changed_spec_is_refused_before_the_model_loads(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    store = ("--store", str(store_path))
    code, _, err = kaoshi(
        capsys, "run", "--benchmark", "sample", "--model", "random", "--run-name", "r", *store
    )
    assert code == 0, err
    unloadable = "py:tests.support.models:UnloadableModel"
    code, _, err = kaoshi(
        capsys,
        "run",
        "--benchmark",
        "sample",
        "--model",
        unloadable,
        "--seed",
        "3",
        "--run-name",
        "r",
        *store,
    )
    assert (code, err.strip()) == (
        2,
        f"error: run 'r' already exists with a different spec (model: stored 'random', now '{unloadable}'; "
        "seed: stored 0, now 3); choose another --run-name to start a new run",
    )
    # the same refusal for a backend whose chat form is known without loading it
    code, _, err = kaoshi(
        capsys, "run", "--benchmark", "sample", "--model", "random", "--chat", "--run-name", "r", *store
    )
    assert code == 2 and "(chat: stored False, now True)" in err


def test_default_run_names_hold_the_split_and_the_spec_the_effective_split(
    capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path
) -> None:
    from tests.support.files import make_ceval

    root = make_ceval(tmp_path / "ceval-exam")
    common = (
        "--benchmark",
        "ceval",
        "--data",
        str(root),
        "--model",
        "constant:A",
        "--store",
        str(store_path),
    )
    assert kaoshi(capsys, "run", *common)[0] == 0  # C-Eval's default split: val
    assert kaoshi(capsys, "run", *common, "--split", "test")[0] == 0
    out = kaoshi(capsys, "runs", "--format", "json", "--store", str(store_path))[1]
    assert [row["run"] for row in json.loads(out)] == [
        "ceval-val-constant_A-generate-5shot",
        "ceval-test-constant_A-generate-5shot",
    ]
    with sqlite3.connect(store_path) as db:
        splits = [
            json.loads(row[0])["split"] for row in db.execute("SELECT spec FROM runs ORDER BY created_at")
        ]
    assert splits == ["val", "test"]


def test_a_run_stored_with_split_none_resumes(
    capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path
) -> None:
    """A run written by earlier kaoshi, which stored None for C-Eval's default split, still resumes."""
    from tests.support.files import make_ceval

    root = make_ceval(tmp_path / "ceval-exam")
    common = ("--benchmark", "ceval", "--data", str(root), "--model", "constant:A", "--run-name", "old")
    assert kaoshi(capsys, "run", *common, "--limit-total", "2", "--store", str(store_path))[0] == 0
    with sqlite3.connect(store_path) as db:
        spec = json.loads(db.execute("SELECT spec FROM runs WHERE name='old'").fetchone()[0])
        db.execute("UPDATE runs SET spec=? WHERE name='old'", (json.dumps({**spec, "split": None}),))
    code, _, err = kaoshi(capsys, "run", *common, "--limit-total", "2", "--store", str(store_path))
    assert code == 0 and "0 new, 2 already stored" in err


def test_a_run_under_an_earlier_default_name_resumes_by_its_name(
    capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path
) -> None:
    """Default names gained the split (and the limits); a run stored under an earlier default name is
    resumed by giving its name, and the command without one starts the run its default name names."""
    from tests.support.files import make_ceval

    root = make_ceval(tmp_path / "ceval-exam")
    common = ("--benchmark", "ceval", "--data", str(root), "--model", "constant:A", "--limit-total", "2")
    legacy = "ceval-constant_A-generate-5shot"
    store = ("--store", str(store_path))
    assert kaoshi(capsys, "run", *common, "--run-name", legacy, *store)[0] == 0
    code, _, err = kaoshi(capsys, "run", *common, "--run-name", legacy, *store)
    assert code == 0 and "0 new, 2 already stored" in err
    code, _, err = kaoshi(capsys, "run", *common, *store)
    assert code == 0 and "resuming" not in err and "2 new" in err
    with sqlite3.connect(store_path) as db:
        names = {row[0] for row in db.execute("SELECT name FROM runs")}
    assert names == {legacy, "ceval-val-constant_A-generate-5shot-total2"}


@pytest.mark.slow
def test_ctrl_c_marks_the_run_interrupted(tmp_path: Path, store_path: Path) -> None:
    log = tmp_path / "requests.log"
    args = _cli(
        "run",
        "--benchmark",
        "sample",
        "--model",
        # 0.2 s an answer: on a loaded machine the 44 answers must not all be in before Ctrl-C arrives
        f"py:tests.support.models:SlowCountingModel:{log}",
        "--run-name",
        "c",
        "--store",
        str(store_path),
    )
    # A shell that starts the suite in the background (`make test &`) makes its children ignore SIGINT, and
    # Python keeps an ignored SIGINT ignored: the child gets Ctrl-C's default, as a terminal gives it.
    process = subprocess.Popen(
        args,
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    _wait_for_samples(store_path, 5)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err.decode()
    assert "run the same command to resume" in err.decode()
    with sqlite3.connect(store_path) as db:
        assert db.execute("SELECT status FROM runs WHERE name='c'").fetchone()[0] == "interrupted"


def _wait_for_samples(store_path: Path, at_least: int) -> None:
    deadline = time.monotonic() + 60
    stored = 0
    while stored < at_least and time.monotonic() < deadline:
        time.sleep(0.05)
        if store_path.exists():
            try:
                with sqlite3.connect(store_path) as db:
                    stored = db.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
            except sqlite3.OperationalError:
                stored = 0


def test_run_help_lists_every_backend(capsys: pytest.CaptureFixture[str]) -> None:
    from kaoshi.models.registry import BACKENDS

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(kind in text for kind in BACKENDS) and "py:MODULE:CLASS" in text


def _budgets(store_path: Path, run: str) -> tuple[dict[str, set[int]], dict[str, object]]:
    """The budget each question type was generated with, and the run's stored spec."""
    with sqlite3.connect(store_path) as db:
        rows = db.execute("SELECT qtype, response FROM samples WHERE run=?", (run,)).fetchall()
        spec = json.loads(db.execute("SELECT spec FROM runs WHERE name=?", (run,)).fetchone()[0])
    budgets: dict[str, set[int]] = {}
    for qtype, response in rows:
        budgets.setdefault(qtype, set()).add(int(response.rpartition("budget=")[2]))
    return budgets, spec


@pytest.mark.parametrize(
    ("options", "objective", "open_"),
    [
        ((), 50, 512),  # the sample exam's lhmke prompt: QualBench's 50 tokens, paragraphs for open answers
        (("--prompt", "default"), 128, 512),
        (("--prompt", "ceval-answer-only"), 32, 512),
        (("--max-new-tokens", "20"), 20, 20),
        (("--max-new-tokens-open", "64"), 50, 64),
        (("--max-new-tokens", "20", "--max-new-tokens-open", "64"), 20, 64),
    ],
)
def test_generation_budgets_follow_the_protocol(
    capsys: pytest.CaptureFixture[str], store_path: Path, options: tuple[str, ...], objective: int, open_: int
) -> None:
    model = "py:tests.support.models:BudgetEchoModel"
    code, _, err = kaoshi(
        capsys, "run", "--benchmark", "sample", "--model", model, "--run-name", "b", *options,
        "--store", str(store_path),
    )  # fmt: skip
    assert code == 0, err
    budgets, spec = _budgets(store_path, "b")
    assert budgets == {"single": {objective}, "multi": {objective}, "judge": {objective}, "open": {open_}}
    assert (spec["max_new_tokens"], spec["max_new_tokens_open"]) == (objective, open_)


def test_a_run_from_before_per_protocol_budgets_resumes_with_its_budget(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    common = ("run", "--benchmark", "sample", "--model", "py:tests.support.models:BudgetEchoModel")
    common += ("--limit-total", "3", "--run-name", "old", "--store", str(store_path))
    assert kaoshi(capsys, *common, "--max-new-tokens", "256")[0] == 0
    with sqlite3.connect(store_path) as db:  # as stored before open answers had their own budget
        spec = json.loads(db.execute("SELECT spec FROM runs WHERE name='old'").fetchone()[0])
        del spec["max_new_tokens_open"]
        db.execute("UPDATE runs SET spec=? WHERE name='old'", (json.dumps(spec),))
    code, _, err = kaoshi(capsys, *common)
    assert code == 2 and "max_new_tokens: stored 256, now 50" in err
    code, _, err = kaoshi(capsys, *common, "--max-new-tokens", "256")
    assert code == 0 and "0 new, 3 already stored" in err


def test_run_help_states_the_budgets(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    # argparse may wrap a line inside a hyphenated name ('qualbench-' / 'kaoshi'): joined back here
    text = re.sub(r"(?<=\w)- (?=\w)", "-", " ".join(capsys.readouterr().out.split()))
    assert "qualbench, qualbench-expert, qualbench-kaoshi" in text and "50 objective / 512 open" in text
    # the templates that share a budget are listed together
    assert re.search(r"ceval-answer-only(, [\w-]+)*: 32 objective", text)


def test_a_missing_store_names_the_stores_beside_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "kaoshi_runs"
    folder.mkdir()
    assert kaoshi(capsys, "runs", "--store", str(folder / "kaoshi.sqlite"))[2].strip() == (
        f"error: no store at {folder / 'kaoshi.sqlite'} (run 'kaoshi run' first, or pass --store PATH)"
    )
    demo = folder / "demo.sqlite"
    assert kaoshi(capsys, "run", "--benchmark", "sample", "--model", "random", "--store", str(demo))[0] == 0
    code, _, err = kaoshi(capsys, "runs", "--store", str(folder / "kaoshi.sqlite"))
    assert code == 2 and f"found {demo} beside it: pass --store {demo}" in err


def test_no_report_prints_only_the_count(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    run = ("run", "--benchmark", "sample", "--model", "random", "--store", str(store_path))
    code, out, err = kaoshi(capsys, *run, "--no-report")
    assert code == 0 and out == "" and "44 new, 0 already stored" in err
    code, out, _ = kaoshi(capsys, *run)
    assert code == 0 and "by type" in out


def test_long_run_names_are_never_cut(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    long_name = "qualbench-expert-prompt-with-a-long-model-name-qwen2.5-7b-instruct-generate-1shot-try2"
    run = ("run", "--benchmark", "sample", "--model", "random", "--store", str(store_path), "--no-report")
    assert kaoshi(capsys, *run, "--run-name", long_name)[0] == 0
    assert kaoshi(capsys, *run, "--run-name", "short")[0] == 0
    for command in ("leaderboard", "runs"):
        code, out, _ = kaoshi(capsys, command, "--store", str(store_path))
        assert code == 0 and "…" not in out
        cells = "".join(line.split("│")[1].strip() for line in out.splitlines() if line.count("│") > 2)
        assert long_name in cells, (command, out)


def test_a_loglik_run_from_before_budgets_resumes_without_options(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    """Log-likelihood ranks objective answers: their old budget (256) does not refuse a resume; the open
    answers' budget still must match."""
    common = ("run", "--benchmark", "sample", "--model", "py:tests.support.models:LoglikOnlyModel")
    common += ("--method", "loglik", "--limit-total", "3", "--run-name", "old", "--store", str(store_path))
    assert kaoshi(capsys, *common, "--max-new-tokens", "256", "--max-new-tokens-open", "512")[0] == 0
    code, _, err = kaoshi(capsys, *common)
    assert code == 0 and "0 new, 3 already stored" in err
    code, _, err = kaoshi(capsys, *common, "--max-new-tokens-open", "64")
    assert code == 2 and "max_new_tokens_open: stored 512, now 64" in err


def test_library_progress_bars_are_left_out_off_a_terminal() -> None:
    """transformers reads the switch when it is imported: a `kaoshi run` whose stderr is a pipe starts
    with it set (and a terminal keeps its bars)."""
    code = (
        "import os, sys; from kaoshi.cli.main import quiet_library_progress_bars as q; q(); "
        "print(os.environ.get('HF_HUB_DISABLE_PROGRESS_BARS'))"
    )
    env = {k: v for k, v in _env().items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"
