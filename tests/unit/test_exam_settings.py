"""An exam's typed settings (kaoshi.data.model.ExamSettings): checked when built, set by the loaders that
have them (GAOKAO-Bench, a kaoshi JSONL header), kept through --limit and --shuffle-options, read by the
run (its options over them) and recorded in the run spec as the metadata keys they replace were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaoshi.api.exam_files import save_exam
from kaoshi.benchmarks import load_exam_result
from kaoshi.benchmarks.gaokao.loader import GAOKAO_SETTINGS
from kaoshi.benchmarks.gaokao.subjects import GAOKAO_SUBJECTS
from kaoshi.data.errors import DataError
from kaoshi.data.model import MULTI_POLICY_NAMES, Exam, ExamSettings, Question, QuestionType
from kaoshi.data.shuffle import shuffle_exam
from kaoshi.errors import InputError
from kaoshi.runner.config import RunConfig
from kaoshi.runner.prepare import prepare_run
from kaoshi.scoring import MULTI_POLICIES
from kaoshi.store.records import RunSpec
from tests.support.files import write_jsonl

OPTIONS = (("A", "甲"), ("B", "乙"), ("C", "丙"), ("D", "丁"))
QUESTIONS = tuple(
    Question(f"q{i}", QuestionType.MULTI, "题", OPTIONS, frozenset("AB"), subject="数学") for i in range(4)
)


def spec_of(exam: Exam, options: RunConfig | None = None) -> RunSpec:
    config = options or RunConfig()
    return prepare_run(exam, "constant:A", config, chat=False, notify=print).spec


def test_the_policies_are_the_graders() -> None:
    assert MULTI_POLICY_NAMES == MULTI_POLICIES
    assert ExamSettings() == ExamSettings("exact", {})


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"multi_policy": "partal"}, "unknown multi policy 'partal' (known: exact, partial, f1)"),
        ({"standard_scores": {"数学": 0}}, "'数学' must be a positive number, got 0"),
        ({"standard_scores": {"数学": -150}}, "'数学' must be a positive number, got -150"),
        ({"standard_scores": {"数学": True}}, "'数学' must be a positive number, got True"),
        ({"standard_scores": {"数学": float("inf")}}, "'数学' must be a positive number, got inf"),
        ({"standard_scores": {"数学": 10**400}}, "'数学' must be a positive number"),
        ({"standard_scores": {"数学": "150"}}, "'数学' must be a positive number, got '150'"),
        ({"standard_scores": {1: 150}}, "a subject must be text, got 1"),
        ({"standard_scores": [("数学", 150)]}, "standard_scores must map subject -> score"),
    ],
)
def test_a_bad_setting_is_refused_when_built(settings: dict[str, object], message: str) -> None:
    with pytest.raises(InputError) as refused:
        ExamSettings(**settings)  # type: ignore[arg-type]
    assert message in str(refused.value)


def test_the_settings_keep_their_own_copy() -> None:
    scores = {"数学": 150}
    settings = ExamSettings(standard_scores=scores)
    scores["数学"] = 1
    assert settings.standard_scores == {"数学": 150}


def test_limiting_and_shuffling_keep_the_settings() -> None:
    exam = Exam("e", QUESTIONS, metadata={"benchmark": "kaoshi"}, settings=GAOKAO_SETTINGS)
    assert exam.limited(2).settings is GAOKAO_SETTINGS
    assert exam.limited(per_subject=1).settings is GAOKAO_SETTINGS
    assert shuffle_exam(exam, 3).settings is GAOKAO_SETTINGS
    assert Exam("e", QUESTIONS).settings == ExamSettings()


def test_the_run_records_the_exams_settings_as_before() -> None:
    exam = Exam("gaokao-bench", QUESTIONS, metadata={"benchmark": "gaokao-bench"}, settings=GAOKAO_SETTINGS)
    spec = spec_of(exam).to_json()
    # what GAOKAO-Bench's metadata keys recorded, byte for byte
    before = {s: info.full_marks for s, info in GAOKAO_SUBJECTS.items()}
    assert spec["multi_policy"] == "partial"
    assert json.dumps(spec["standard_scores"]) == json.dumps(before)
    # also with the options shuffled or limited, which copy the exam
    assert spec_of(exam, RunConfig(limit=1, shuffle_options=2)).multi_policy == "partial"


def test_the_runs_options_override_the_exams_settings() -> None:
    exam = Exam("e", QUESTIONS, settings=ExamSettings("partial", {"数学": 150, "语文": 100}))
    spec = spec_of(exam, RunConfig(multi_policy="f1", standard_scores={"语文": 120}))
    assert spec.multi_policy == "f1"
    assert spec.standard_scores == {"数学": 150, "语文": 120}
    assert spec_of(Exam("e", QUESTIONS)).multi_policy == "exact"


def test_metadata_keys_no_longer_set_the_run_and_say_so() -> None:
    """The free-form keys a loader once set (a typo meant exact) are descriptive now: nothing reads them,
    and a run of an exam whose metadata still sets them otherwise than its settings says so."""
    exam = Exam("e", QUESTIONS, metadata={"multi_policy": "partial", "standard_scores": {"数学": 150}})
    told: list[str] = []
    spec = prepare_run(exam, "constant:A", RunConfig(), chat=False, notify=told.append).spec
    assert spec.multi_policy == "exact" and spec.standard_scores == {}
    assert len(told) == 2 and all("which no run reads" in line and "ExamSettings(" in line for line in told)
    settled = Exam(
        "e",
        QUESTIONS,
        metadata={"standard_scores": {"数学": 150}},
        settings=ExamSettings(standard_scores={"数学": 150}),
    )
    told.clear()
    prepare_run(settled, "constant:A", RunConfig(), chat=False, notify=told.append)
    assert told == []  # a kaoshi JSONL header: in the metadata as the file has it, and the settings


def test_a_kaoshi_files_header_sets_its_standard_scores(tmp_path: Path) -> None:
    rows: list[object] = [{"exam": {"name": "mine", "standard_scores": {"数学": 150}}}]
    rows += [
        {
            "id": "1",
            "type": "multi",
            "question": "题",
            "options": ["甲", "乙"],
            "answer": "AB",
            "subject": "数学",
        }
    ]
    exam = load_exam_result(data=write_jsonl(tmp_path / "mine.jsonl", rows)).exam
    assert exam.settings == ExamSettings(standard_scores={"数学": 150})
    assert exam.metadata["standard_scores"] == {"数学": 150}  # the header as the file has it
    assert spec_of(exam).standard_scores == {"数学": 150}
    sample = load_exam_result("sample").exam
    assert sample.settings.standard_scores == sample.metadata["standard_scores"] != {}


def test_a_saved_exam_keeps_its_standard_scores_in_its_header(tmp_path: Path) -> None:
    """`kaoshi exam shuffle / split` of an exam whose standard scores are settings (GAOKAO-Bench's full
    marks, not a header of its file) write them into the new file's header, which loads them back."""
    exam = Exam(
        "e", QUESTIONS, metadata={"name": "gaokao-like"}, settings=ExamSettings(standard_scores={"数学": 150})
    )
    path = tmp_path / "saved.jsonl"
    save_exam(exam, path)
    header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])["exam"]
    assert header == {"name": "gaokao-like", "standard_scores": {"数学": 150}}
    assert load_exam_result(data=path).exam.settings.standard_scores == {"数学": 150}


def test_a_kaoshi_files_header_sets_its_multi_policy_and_a_saved_exam_keeps_it(tmp_path: Path) -> None:
    rows: list[object] = [{"exam": {"name": "mine", "multi_policy": "partial"}}]
    rows += [{"id": "1", "type": "multi", "question": "题", "options": ["甲", "乙"], "answer": "AB"}]
    exam = load_exam_result(data=write_jsonl(tmp_path / "mine.jsonl", rows)).exam
    assert exam.settings.multi_policy == "partial" and spec_of(exam).multi_policy == "partial"
    save_exam(exam, tmp_path / "saved.jsonl")
    assert load_exam_result(data=tmp_path / "saved.jsonl").exam.settings.multi_policy == "partial"
    rows[0] = {"exam": {"name": "mine", "multi_policy": "half"}}
    with pytest.raises(
        DataError, match=r"bad.jsonl:1: field .multi_policy.: must be one of exact, partial, f1, got .half."
    ):
        load_exam_result(data=write_jsonl(tmp_path / "bad.jsonl", rows))
