"""A reasoning model over an OpenAI-compatible server (issue 41): its reasoning is kept apart and never
read for the answer, and a reply cut off while still reasoning is a wrong answer counted cut off, not an
error left out of the accuracy. Before, 6 cut-offs among 30 questions made a model that answered 16 of 27
objective questions right report 72.7% (16 of 22) instead of 59.3% (16 of 27)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

import kaoshi
from kaoshi.cli.main import main
from tests.support.fake_openai import FakeOpenAI
from tests.support.files import write_jsonl

LETTERS = "ABCD"


def exam_file(path: Path) -> Path:
    rows: list[object] = [{"exam": {"name": "reasoning"}}]
    for i in range(30):
        rows.append(
            {"id": f"q{i}", "type": "single", "question": f"第{i}题：甲乙丙丁哪一个对（）。",
             "answer": LETTERS[i % 4], "options": {"A": "甲", "B": "乙", "C": "丙", "D": "丁"}}
        )  # fmt: skip
    return write_jsonl(path, rows)


def server_for() -> FakeOpenAI:
    """Questions 0-5 cut off while reasoning; 6-21 answered right, 22-29 wrong; every answer's reasoning
    names another letter (a decoy a reader of the reasoning would take)."""
    answers, faults = {}, {}
    for i in range(30):
        stem = f"第{i}题："
        right = LETTERS[i % 4]
        answer = right if i < 22 else LETTERS[(i + 1) % 4]
        answers[stem] = f"答案：{answer}"
        faults[stem] = ["reasoning"] if i < 6 else ["reasoning:decoy"]
    return FakeOpenAI(answers=answers, faults=faults)


def test_cut_off_reasoning_is_graded_wrong_and_the_reasoning_is_never_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = kaoshi.load_exam("kaoshi", exam_file(tmp_path / "exam.jsonl"))
    with server_for() as server:
        result = kaoshi.evaluate(
            exam, model="openai:r1", base_url=server.base_url, store=tmp_path / "s.sqlite"
        )
    samples = {s.question_id: s for s in result.samples}
    assert result.errors == 0
    overall = result.summary.overall
    assert (overall.correct, overall.graded, overall.truncated) == (16, 30, 6)
    assert result.accuracy == pytest.approx(16 / 30)
    for i in range(6):
        cut = samples[f"q{i}"]
        assert (cut.correct, cut.truncated, cut.response, cut.status) == (False, True, "", "unparsed")
        assert cut.reasoning == "首先分析题干……" * 50
    for i in range(6, 30):
        answered = samples[f"q{i}"]
        assert answered.reasoning == "选项C看似正确，答案是C？再想想，应选A。"
        assert answered.tokens_reasoning == 17  # the server's usage.completion_tokens_details
        assert (
            answered.correct is (i < 22)
            and answered.response is not None
            and "答案是C" not in answered.response
        )
    with server_for() as server:
        code = main(
            ["run", "--benchmark", "kaoshi", "--data", str(tmp_path / "exam.jsonl"), "--model", "openai:r1",
             "--base-url", server.base_url, "--store", str(tmp_path / "cli.sqlite"), "--no-report"]
        )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0 and "30 new, 0 already stored, 0 error(s)" in err
    assert "warning: 6 of 30 answers were cut off at the token budget (graded wrong)" in err
    run_name = next(iter(kaoshi.runs(store=tmp_path / "cli.sqlite"))).run.name
    assert main(["report", run_name, "--store", str(tmp_path / "cli.sqlite"), "--by", "type"]) == 0
    by_type = capsys.readouterr().out
    header = next(line for line in by_type.splitlines() if "cut off" in line and "accuracy" in line)
    row = next(line for line in by_type.splitlines() if line.startswith("│ single"))
    cells = [c.strip() for c in row.split("│")[1:-1]]
    names = [c.strip() for c in header.split("┃")[1:-1]]
    assert cells[names.index("cut off")] == "6" and cells[names.index("accuracy")] == "53.3%"


def test_reuse_from_asks_again_only_what_was_cut_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, store = exam_file(tmp_path / "exam.jsonl"), tmp_path / "s.sqlite"

    def run(server: FakeOpenAI, name: str, *more: str) -> int:
        return main(
            ["run", "--benchmark", "kaoshi", "--data", str(data), "--model", "openai:r1", "--base-url",
             server.base_url, "--store", str(store), "--run-name", name, "--no-report", *more]
        )  # fmt: skip

    with server_for() as server:
        assert run(server, "short") == 0
        first = len(server.bodies)
        assert run(server, "long", "--max-new-tokens", "8192", "--reuse-from", "short") == 0
        again = server.bodies[first:]
    assert first == 30
    asked = sorted(int(b["messages"][-1]["content"].split("第")[1].split("题")[0]) for b in again)
    assert asked == [0, 1, 2, 3, 4, 5]  # only the cut-off answers are paid for again
    assert {b["max_tokens"] for b in again} == {8192}
    err = capsys.readouterr().err
    assert "run 'long': 6 new, 24 reused from short, 0 already stored, 0 error(s)" in err
    summary = kaoshi.summarize("long", store=store)
    assert (summary.overall.correct, summary.overall.graded, summary.overall.truncated) == (22, 30, 0)
    assert kaoshi.summarize("short", store=store).overall.correct == 16  # the first run is untouched
    # Answers made another way are never taken: a run with a system prompt is refused, naming it.
    with server_for() as server:
        code = run(server, "other", "--max-new-tokens", "8192", "--reuse-from", "short", "--system", "x")
    refused = capsys.readouterr().err
    assert code == 2 and "--reuse-from short: its answers were made otherwise (system" in refused


@pytest.mark.parametrize("style", ["openai", "deepseek"])
def test_the_prompt_tokens_a_server_cached_are_stored_with_each_answer(tmp_path: Path, style: str) -> None:
    """A provider that caches prompt prefixes says how many of a prompt's tokens it read from the cache:
    each answer keeps them beside its prompt tokens (the ledger prices them lower), and `kaoshi samples`
    shows them."""
    exam = kaoshi.load_exam("kaoshi", exam_file(tmp_path / "exam.jsonl"))
    with FakeOpenAI(prefix_cache=4, cache_style=style) as server:
        result = kaoshi.evaluate(
            exam, model="openai:m", base_url=server.base_url, store=tmp_path / "s.sqlite", concurrency=1
        )
    samples = list(result.samples)
    # what the fake caches: each request's last message (the question), as it counts tokens, a character
    # a token
    asked = [json.loads(s.prompt)[-1]["content"] for s in samples]
    for index, sample in enumerate(samples):
        shared = max((len(_common(asked[index], before)) for before in asked[:index]), default=0)
        assert sample.tokens_cached == shared // 4 * 4, sample.question_id
        assert sample.tokens_in == len(asked[index]) and sample.tokens_cached <= sample.tokens_in
    assert samples[0].tokens_cached == 0 and all(s.tokens_cached for s in samples[1:])
    assert samples[1].to_json()["tokens_cached"] == samples[1].tokens_cached


def _common(first: str, second: str) -> str:
    import os.path

    return os.path.commonprefix([first, second])  # noqa: RUF071  (characters, not path parts)
