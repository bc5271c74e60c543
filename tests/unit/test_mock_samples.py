"""The scripted mock answers each of a question's samples (--repeats) from its own line where the script
has one, else from the question's line; it honours every decoding option, since it decodes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from kaoshi.data.errors import DataError
from kaoshi.models import GenerateRequest, LoglikRequest, resolve_model
from kaoshi.models.base import SAMPLING_OPTIONS, request_id
from kaoshi.models.mock import read_script
from tests.support.files import write_jsonl


def test_a_sample_reads_its_own_line_else_the_question_line(tmp_path: Path) -> None:
    script = write_jsonl(
        tmp_path / "m.jsonl",
        [
            {"id": "q", "response": "答案：A"},
            {"id": "q", "sample": 1, "response": "答案：B", "truncated": True},
            {"id": "q", "sample": 0, "response": "答案：C"},
            {"id": "only-samples", "sample": 2, "response": "答案：D", "logprobs": {"A": -0.5}},
        ],
    )
    model = resolve_model(f"mock:{script}")
    assert model.sampling_options == frozenset(SAMPLING_OPTIONS)
    requests = [GenerateRequest(request_id("q", k), "题") for k in range(3)]
    requests += [GenerateRequest(request_id("only-samples", k), "题") for k in (2, 1)]
    outputs = {o.id: o for o in model.generate(requests)}
    assert [outputs[request_id("q", k)].text for k in range(3)] == ["答案：C", "答案：B", "答案：A"]
    assert [outputs[request_id("q", k)].truncated for k in range(3)] == [False, True, False]
    assert outputs[request_id("only-samples", 2)].text == "答案：D"
    missing = outputs[request_id("only-samples", 1)]
    assert missing.text is None
    assert missing.error == f"mock script {script} has no line for question id 'only-samples' sample 1"
    [scored] = list(model.loglikelihood([LoglikRequest(request_id("only-samples", 2), "题", ("A", "B"))]))
    assert scored.logprobs == {"A": -0.5}


def test_a_script_without_samples_answers_every_sample_alike(tmp_path: Path) -> None:
    script = write_jsonl(tmp_path / "m.jsonl", [{"id": 7, "response": "正确"}])
    model = resolve_model(f"mock:{script}")
    outputs = list(model.generate([GenerateRequest(request_id("7", k), "题") for k in range(4)]))
    assert [o.text for o in outputs] == ["正确"] * 4


@pytest.mark.parametrize("sample", [-1, 1.5, "2", True, [0]])
def test_a_bad_sample_is_a_clear_error(tmp_path: Path, sample: object) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [{"id": "q", "response": "A"}, {"id": "q", "sample": sample}])
    with pytest.raises(DataError) as info:
        read_script(path)
    assert [str(e) for e in info.value.errors] == [
        f"{path}:2: field 'sample': must be a whole number >= 0 (the sample's index, the first is 0)"
    ]


def test_a_sample_given_twice_is_a_duplicate(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "m.jsonl",
        [
            {"id": "q", "sample": 1, "response": "A"},
            {"id": "q", "response": "B"},  # the question's line beside a sample's is no duplicate
            {"id": "q", "sample": 1, "response": "C"},
        ],
    )
    with pytest.raises(DataError) as info:
        read_script(path)
    assert [str(e) for e in info.value.errors] == [f"{path}:3: field 'id': duplicate id 'q' sample 1"]
