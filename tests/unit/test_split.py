"""kaoshi split: deterministic, stratified, disjoint, with a manifest; duplicates never straddle the split."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from kaoshi.data.model import Exam
from kaoshi.data.shuffle import shuffle_question
from kaoshi.data.split import content_key, split_exam

EXAM = load_exam_result("sample").exam


def test_split_is_disjoint_complete_and_deterministic() -> None:
    one = split_exam(EXAM, 0.7, seed=3, stratify=["type"])
    again = split_exam(EXAM, 0.7, seed=3, stratify=["type"])
    assert one.train == again.train and one.test == again.test
    train, test = {q.id for q in one.train}, {q.id for q in one.test}
    assert not train & test and train | test == {q.id for q in EXAM.questions}
    assert len(one.train) == round(0.7 * len(EXAM))  # 30.8 -> 31
    other = split_exam(EXAM, 0.7, seed=4, stratify=["type"])
    assert {q.id for q in other.train} != train
    # the file order does not matter
    reversed_exam = Exam(EXAM.name, tuple(reversed(EXAM.questions)), EXAM.fewshot)
    assert {q.id for q in split_exam(reversed_exam, 0.7, 3, ["type"]).train} == train


def test_every_stratum_is_split_in_proportion() -> None:
    split = split_exam(EXAM, 0.5, seed=0, stratify=["type", "domain"])
    for stratum in {(q.type, q.domain) for q in EXAM.questions}:
        total = sum((q.type, q.domain) == stratum for q in EXAM.questions)
        trained = sum((q.type, q.domain) == stratum for q in split.train)
        assert abs(trained - total / 2) <= 1
    by_type = Counter(q.type.value for q in split_exam(EXAM, 0.75, 0, ["type"]).train)
    assert by_type == {"single": 15, "judge": 9, "multi": 6, "open": 3}


def test_a_repeated_question_never_straddles_the_split() -> None:
    first = EXAM.questions[0]
    copies = tuple(replace(first, id=f"copy-{i}") for i in range(6))
    exam = Exam("dup", (*EXAM.questions, *copies))
    split = split_exam(exam, 0.5, seed=1)
    keys_train = {content_key(q) for q in split.train}
    assert all(content_key(q) not in keys_train for q in split.test)
    same = {first.id, *(q.id for q in copies)}
    trained = same & {q.id for q in split.train}
    assert trained in (set(), same)  # all seven copies on one side
    if trained:  # some were drawn for test and moved: counted in the manifest
        assert (
            split.duplicates_moved > 0 and split.manifest("x")["duplicates_moved"] == split.duplicates_moved
        )


def test_content_keys_ignore_ids_metadata_and_option_order() -> None:
    question = next(q for q in EXAM.questions if q.type.is_choice)
    assert content_key(replace(question, id="other", domain="x", split="train")) == content_key(question)
    assert content_key(shuffle_question(question, 5)) == content_key(question)
    assert content_key(replace(question, stem=question.stem + "？")) != content_key(question)


def test_split_command_writes_both_parts_and_a_manifest(tmp_path: Path) -> None:
    out = tmp_path / "split"
    args = ["--train", "0.7", "--seed", "2", "--stratify", "domain,type", "-o", str(out)]
    assert main(["split", "--benchmark", "sample", *args]) == 0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    train = load_exam_result(None, str(out / "train.jsonl")).exam
    test = load_exam_result(None, str(out / "test.jsonl")).exam
    assert manifest["train"]["ids"] == [q.id for q in train.questions]
    assert manifest["test"]["fingerprint"] == test.fingerprint
    assert manifest["stratify"] == ["domain", "type"] and manifest["seed"] == 2
    assert len(train.fewshot) == len(EXAM.fewshot) == len(test.fewshot)
    # questions are written unchanged: the same fingerprints as in the source exam
    source = {q.id: q.fingerprint() for q in EXAM.questions}
    assert all(source[q.id] == q.fingerprint() for q in (*train.questions, *test.questions))


def test_bad_split_arguments(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["split", "--benchmark", "sample", "--train", "1.5", "-o", str(tmp_path)]) == 2
    assert "between 0 and 1" in capsys.readouterr().err
    assert main(["split", "--benchmark", "sample", "--stratify", "colour", "-o", str(tmp_path)]) == 2
    assert "cannot stratify by 'colour'" in capsys.readouterr().err
