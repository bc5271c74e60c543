"""The run loop with the scripted mock backend and test backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaoshi.benchmarks import get_template, load_exam_result
from kaoshi.errors import InputError
from kaoshi.models import CapabilityError, ModelError, ModelOptions, resolve_model
from kaoshi.models.mock import read_script
from kaoshi.runner import execute_run
from kaoshi.store import RunSpec, Store
from tests.support.files import write_jsonl

EXAM = load_exam_result("sample").exam


def spec_for(model: str, method: str = "generate", **kw: object) -> RunSpec:
    values: dict[str, object] = dict(
        benchmark="kaoshi",
        data=None,
        split=None,
        fingerprint=EXAM.fingerprint,
        n_questions=len(EXAM),
        prompt="default",
        prompt_version=1,
        shots=0,
        model=model,
        method=method,
        seed=0,
        limit=None,
        max_new_tokens=64,
    )
    values.update(kw)
    return RunSpec(**values)  # type: ignore[arg-type]


def run(store_path: Path, model_spec: str, method: str = "generate", name: str = "r", exam=EXAM):  # type: ignore[no-untyped-def]
    model = resolve_model(model_spec, ModelOptions(seed=1))
    with Store(store_path) as store:
        outcome = execute_run(
            name=name,
            exam=exam,
            spec=spec_for(model_spec, method),
            model=model,
            template=get_template("default"),
            store=store,
        )
        return outcome, {s.question_id: s for s in store.samples(name)}


def test_mock_generation_is_extracted_and_graded(tmp_path: Path, store_path: Path) -> None:
    lines = [
        {"id": "s-safe-1", "response": "答案：C"},
        {"id": "s-safe-2", "response": "答案：B"},
        {"id": "s-safe-5", "response": "答案：ABC"},
        {"id": "s-safe-7", "response": "错误"},
        {"id": "s-safe-10", "response": "四不放过指……"},
        {"id": "s-fin-1", "response": "我不知道"},
    ]
    script = write_jsonl(tmp_path / "mock.jsonl", lines)
    outcome, samples = run(store_path, f"mock:{script}")
    assert outcome.total == 44 and outcome.new_samples == 44 and outcome.errors == 44 - len(lines)
    assert samples["s-safe-1"].correct is True and samples["s-safe-1"].answer == frozenset("C")
    assert samples["s-safe-2"].correct is False
    assert samples["s-safe-5"].correct is True
    assert samples["s-safe-7"].answer is False and samples["s-safe-7"].correct is True
    assert samples["s-safe-10"].status == "ok" and samples["s-safe-10"].correct is None
    assert samples["s-fin-1"].status == "unparsed" and samples["s-fin-1"].correct is False
    missing = samples["s-it-1"]
    assert missing.status == "error" and missing.correct is None
    assert missing.error == f"mock script {script} has no line for question id 's-it-1'"
    assert samples["s-safe-1"].prompt.endswith("答案：") and "A. 清水灭火器" in samples["s-safe-1"].prompt


def test_mock_loglik_picks_the_most_likely_candidate(tmp_path: Path, store_path: Path) -> None:
    lines = [
        {"id": "s-safe-1", "logprobs": {"A": -2.0, "B": -3.0, "C": -0.1, "D": -4.0}},
        {"id": "s-safe-5", "logprobs": {"ABC": -0.5, "AB": -0.7, "A": -3}},
        {"id": "s-safe-7", "logprobs": {"正确": -0.2, "错误": -1.9}},
        {"id": "s-safe-10", "response": "开放题的回答"},
    ]
    script = write_jsonl(tmp_path / "mock.jsonl", lines)
    _, samples = run(store_path, f"mock:{script}", "loglik")
    assert samples["s-safe-1"].answer == frozenset("C") and samples["s-safe-1"].correct is True
    assert samples["s-safe-1"].logprobs == {"A": -2.0, "B": -3.0, "C": -0.1, "D": -4.0}
    assert samples["s-safe-5"].answer == frozenset("ABC") and samples["s-safe-5"].correct is True
    assert samples["s-safe-7"].answer is True and samples["s-safe-7"].correct is False
    # open questions are always generated
    assert samples["s-safe-10"].response == "开放题的回答" and samples["s-safe-10"].status == "ok"
    assert samples["s-fin-1"].error == f"mock script {script} has no line for question id 's-fin-1'"


def test_random_baseline_is_seeded_and_resume_stable(store_path: Path, tmp_path: Path) -> None:
    _, first = run(store_path, "random", name="a")
    _, second = run(tmp_path / "other.sqlite", "random", name="a")
    assert {k: s.answer for k, s in first.items()} == {k: s.answer for k, s in second.items()}
    choices = {s.answer for s in first.values() if s.qtype == "single"}
    assert len(choices) > 1


def test_constant_baseline(store_path: Path) -> None:
    _, samples = run(store_path, "constant:A")
    singles = [s for s in samples.values() if s.qtype == "single"]
    assert all(s.answer == frozenset("A") for s in singles)
    assert sum(bool(s.correct) for s in singles) == sum(s.gold == frozenset("A") for s in singles)


def test_method_the_backend_cannot_do(store_path: Path) -> None:
    with pytest.raises(CapabilityError, match="cannot generate text, which open questions need"):
        run(store_path, "py:tests.support.models:LoglikOnlyModel", "loglik")
    objective = EXAM.limited(3)
    _, samples = run(
        store_path, "py:tests.support.models:LoglikOnlyModel", "loglik", name="ok", exam=objective
    )
    assert len(samples) == 3
    with pytest.raises(CapabilityError, match="cannot do --method generate"):
        run(store_path, "py:tests.support.models:LoglikOnlyModel", "generate", name="g", exam=objective)


def test_outputs_out_of_order_and_missing(store_path: Path) -> None:
    _, samples = run(store_path, "py:tests.support.models:ReversedModel", exam=EXAM.limited(8))
    assert len(samples) == 8
    errors = [s for s in samples.values() if s.status == "error"]
    assert len(errors) == 2  # the last request of each batch of 4
    assert errors[0].error == "the backend returned no output for this request"


def test_resume_sends_only_unfinished_questions(tmp_path: Path, store_path: Path) -> None:
    log = tmp_path / "requests.log"
    spec = f"py:tests.support.models:CountingModel:{log}"
    run(store_path, spec, exam=EXAM.limited(5))
    # same spec, same exam: nothing new is requested
    _, samples = run(store_path, spec, exam=EXAM.limited(5))
    assert log.read_text().split() == [q.id for q in EXAM.questions[:5]]
    assert len(samples) == 5


def test_bad_model_specs(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="unknown model 'nope'"):
        resolve_model("nope")
    with pytest.raises(ModelError, match="constant model needs an answer"):
        resolve_model("constant")
    with pytest.raises(ModelError, match="does not exist"):
        resolve_model(f"mock:{tmp_path / 'none.jsonl'}")
    with pytest.raises(ModelError, match=r"is not a kaoshi\.models\.Model subclass"):
        resolve_model("py:json:JSONDecoder")


def test_mock_script_errors(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "m.jsonl",
        [
            {"id": "a", "response": "x"},
            {"id": "a", "response": "y"},
            {"id": "b"},
            {"id": "c", "logprobs": {"A": 0.5}},
            "{oops",
        ],
    )
    with pytest.raises(Exception) as info:
        read_script(path)
    assert [str(e) for e in info.value.errors] == [  # type: ignore[attr-defined]
        f"{path}:2: field 'id': duplicate id 'a'",
        f"{path}:3: field 'response': a line needs 'response' or 'logprobs'",
        f"{path}:4: field 'logprobs': must map option -> log-probability (a number <= 0)",
        f"{path}:5: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
    ]
    assert json.loads(path.read_text().splitlines()[0])["id"] == "a"


class _RefusesTheThirdQuestion:
    """The default template, except that one question cannot be rendered (as an official GAOKAO-Bench prompt
    without its Bench/ prompt files)."""

    def __init__(self) -> None:
        self._inner = get_template("default")

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def render(self, question, exam, options):  # type: ignore[no-untyped-def]
        if question.id == EXAM.questions[2].id:
            raise InputError(f"question {question.id!r} has no prompt")
        return self._inner.render(question, exam, options)


def test_a_run_refused_before_its_first_question_leaves_no_run(store_path: Path) -> None:
    model = resolve_model("constant:A", ModelOptions(seed=1))
    with Store(store_path) as store:
        with pytest.raises(InputError, match="has no prompt"):
            execute_run(
                name="refused",
                exam=EXAM,
                spec=spec_for("constant:A"),
                model=model,
                template=_RefusesTheThirdQuestion(),  # type: ignore[arg-type]
                store=store,
            )
        assert store.find_run("refused") is None
        assert store.runs() == []
