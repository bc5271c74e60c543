"""Sampling as publishers evaluate today's models (issue 41): the sampling fields, k samples a question
with their own seeds, the thinking switch and a user's own request fields reach an OpenAI-compatible
server; the report's avg@k / maj@k / pass@k are what the server's own answers give."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aiohttp")

import kaoshi
from kaoshi.cli.main import main
from kaoshi.errors import InputError
from kaoshi.models.base import CapabilityError, ModelError
from kaoshi.view import create_app
from tests.support.fake_openai import FakeOpenAI
from tests.support.files import single_choice_exam

LETTERS = "ABCD"
N = 12
K = 5


def exam_file(path: Path) -> Path:
    return single_choice_exam(path, N, "sampled")


def question_of(prompt: str) -> int:
    found = re.search(r"第(\d+)题", prompt)
    assert found is not None
    return int(found.group(1))


def sampled_letter(question: int, seed: int) -> str:
    """The model's answer to a question under a seed: questions 0-3 always right, 4-7 right two times
    in three, 8-11 a quarter of the time (else a wrong letter)."""
    draw = int.from_bytes(hashlib.sha256(f"{question}:{seed}".encode()).digest()[:4], "big")
    right = LETTERS[question % 4]
    if question < 4:
        is_right = True
    elif question < 8:
        is_right = draw % 3 != 0
    else:
        is_right = draw % 4 == 0
    return right if is_right else LETTERS[(question + 1 + draw % 3) % 4]


def answer(prompt: str, body: dict[str, Any]) -> str:
    return f"分析略。答案：{sampled_letter(question_of(prompt), int(body['seed']))}"


def run_args(data: Path, store: Path, server: FakeOpenAI, *more: str) -> list[str]:
    return ["run", "--benchmark", "kaoshi", "--data", str(data), "--model", "openai:r1",
            "--base-url", server.base_url, "--store", str(store), "--run-name", "r", "--no-report",
            *more]  # fmt: skip


SAMPLED = ("--repeats", str(K), "--temperature", "0.6", "--top-p", "0.95", "--top-k", "20", "--seed", "7")


def expected_numbers(bodies: list[dict[str, Any]]) -> dict[str, float]:
    """avg@k, maj@k and pass@k from the server's own answers to the requests it was sent."""
    given: dict[int, list[str]] = {}
    for body in bodies:
        prompt = body["messages"][-1]["content"]
        given.setdefault(question_of(prompt), []).append(sampled_letter(question_of(prompt), body["seed"]))
    avg = sum(a == LETTERS[q % 4] for q, answers in given.items() for a in answers) / (N * K)
    majority = []
    for q, answers in given.items():
        counts = Counter(answers)
        tied = [a for a, c in counts.items() if c == max(counts.values())]
        majority.append(sum(a == LETTERS[q % 4] for a in tied) / len(tied))
    passed = sum(LETTERS[q % 4] in answers for q, answers in given.items()) / N
    return {"avg_at_k": avg, "maj_at_k": sum(majority) / N, "pass_at_k": passed}


def test_k_samples_reach_the_server_with_their_own_seeds_and_the_report_gives_avg_maj_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, store = exam_file(tmp_path / "exam.jsonl"), tmp_path / "s.sqlite"
    with FakeOpenAI(answer_for=answer) as server:
        assert main(run_args(data, store, server, *SAMPLED)) == 0
        bodies = list(server.bodies)
        # A resume asks exactly what is missing, with the seeds it had: two samples are removed by hand.
        with sqlite3.connect(store) as db:
            removed = db.execute(
                "DELETE FROM repeat_samples WHERE question_id IN ('q3', 'q9') AND sample = 2"
            ).rowcount
        assert removed == 2
        assert main(run_args(data, store, server, *SAMPLED)) == 0
        resumed = server.bodies[len(bodies) :]
    assert len(resumed) == 2
    asked = {(question_of(b["messages"][-1]["content"]), b["seed"]) for b in resumed}
    original = {(question_of(b["messages"][-1]["content"]), b["seed"]) for b in bodies}
    assert asked <= original and {q for q, _ in asked} == {3, 9}
    per_question = Counter(question_of(b["messages"][-1]["content"]) for b in bodies)
    assert per_question == {q: K for q in range(N)}  # exactly k requests a question
    assert {(b["temperature"], b["top_p"], b["top_k"]) for b in bodies} == {(0.6, 0.95, 20)}
    seeds = [body["seed"] for body in bodies]
    # each sample of each question its own seed: a backend drawing the same noise for the same seed
    # would otherwise push every question's sample k the same way
    assert len(set(seeds)) == N * K
    assert "chat_template_kwargs" not in bodies[0] and "enable_thinking" not in bodies[0]

    capsys.readouterr()
    assert main(["report", "r", "--store", str(store), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    expected = expected_numbers(bodies)
    assert report["k"] == K
    for key, value in expected.items():
        assert report[key] == pytest.approx(value), key
    assert 0 < expected["avg_at_k"] < expected["pass_at_k"] <= 1  # the fixture gives a spread
    low, high = report["avg_at_k_interval"]
    assert low < report["avg_at_k"] < high
    assert report["spec"]["temperature"] == 0.6 and report["spec"]["repeats"] == K

    assert main(["leaderboard", "--store", str(store), "--format", "json"]) == 0
    (board,) = json.loads(capsys.readouterr().out)
    accuracy = board["rows"][0][board["columns"].index("accuracy")]
    assert accuracy == f"{100 * expected['avg_at_k']:.1f}%"  # the mean over the k samples

    assert main(["report", "r", "--store", str(store)]) == 0
    text = capsys.readouterr().out
    assert f"avg@{K}" in text and f"maj@{K}" in text and f"pass@{K}" in text

    assert main(["samples", "r", "--store", str(store), "--format", "jsonl"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == N * K
    assert Counter(line["sample"] for line in lines) == {k: N for k in range(K)}

    viewer = pytest.importorskip("starlette.testclient", reason="the view extra installs starlette")
    with viewer.TestClient(create_app(store), base_url="http://127.0.0.1") as client:
        page = client.get("/run/r/sample/q9")
    assert page.status_code == 200 and "The question's 5 samples" in page.text
    columns = re.findall(r"<th>sample (\d)</th>", page.text)
    assert columns == ["1", "2", "3", "4", "5"]  # side by side, in order
    capsys.readouterr()
    assert main(["report", "r", "--store", str(store), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["avg_at_k"] == pytest.approx(expected["avg_at_k"])


def test_the_thinking_switch_and_extra_fields_reach_the_body_and_the_spec(tmp_path: Path) -> None:
    exam = kaoshi.load_exam("kaoshi", exam_file(tmp_path / "exam.jsonl"))
    extra = {"reasoning_effort": "low", "chat_template_kwargs": {"reasoning_budget": 64}}
    with FakeOpenAI(answer_for=answer) as server:
        result = kaoshi.evaluate(
            exam,
            model="openai:r1",
            base_url=server.base_url,
            thinking=False,
            extra_body=extra,
            limit_total=2,
        )
    body = server.bodies[0]
    assert body["chat_template_kwargs"] == {"enable_thinking": False, "reasoning_budget": 64}
    assert body["enable_thinking"] is False and body["reasoning_effort"] == "low"
    assert body["temperature"] == 0  # greedy stays the default
    assert result.spec.thinking is False
    assert result.spec.model_settings["extra_body"] == extra


def test_a_backend_that_cannot_sample_says_so_before_any_request(tmp_path: Path) -> None:
    exam = kaoshi.load_exam("kaoshi", exam_file(tmp_path / "exam.jsonl"))
    asked: list[str] = []

    def model(prompt: str) -> str:
        asked.append(prompt)
        return "A"

    with pytest.raises(CapabilityError, match="cannot honour --temperature, --top-p"):
        kaoshi.evaluate(exam, model=model, temperature=0.7, top_p=0.9)
    with pytest.raises(CapabilityError, match="--extra-body is for openai"):
        kaoshi.evaluate(exam, model=model, extra_body={"x": 1})
    assert asked == []


def test_extra_body_refuses_a_credential_and_repeats_need_generation(tmp_path: Path) -> None:
    exam = kaoshi.load_exam("kaoshi", exam_file(tmp_path / "exam.jsonl"))
    with pytest.raises(ModelError, match="looks like a credential"):
        kaoshi.evaluate(exam, model="random", extra_body={"headers": {"Authorization": "Bearer x"}})
    with pytest.raises(InputError, match="--repeats asks k generated answers"):
        kaoshi.evaluate(exam, model="random", method="loglik", repeats=3)


def test_decoding_options_are_refused_where_they_would_be_recorded_but_not_applied(tmp_path: Path) -> None:
    exam = kaoshi.load_exam("kaoshi", exam_file(tmp_path / "exam.jsonl"))
    with pytest.raises(InputError, match="--temperature, --thinking: how generated answers are decoded"):
        kaoshi.evaluate(exam, model="random", method="loglik", temperature=0.7, thinking=False)
    with FakeOpenAI(answer_for=answer) as server:
        with pytest.raises(CapabilityError, match="--thinking switches a chat template"):
            kaoshi.evaluate(exam, model="openai:r1", base_url=server.base_url, chat=False, thinking=False)
        with pytest.raises(CapabilityError, match="--extra-body sets enable_thinking"):
            kaoshi.evaluate(
                exam, model="openai:r1", base_url=server.base_url, thinking=True,
                extra_body={"chat_template_kwargs": {"enable_thinking": False}},
            )  # fmt: skip
        assert server.bodies == []  # refused before any request
    for own in ({"temperature": 0}, {"seed": 1}, {"max_tokens": 9}):
        with pytest.raises(ModelError, match="which kaoshi sets from its own options"):
            kaoshi.evaluate(exam, model="openai:r1", extra_body=own)


def test_thinking_on_reads_a_cut_off_reply_without_tags_as_reasoning(tmp_path: Path) -> None:
    """DeepSeek-R1's template opens the think block in the prompt; served without a reasoning parser, a
    reply cut off while thinking has no tag at all. With --thinking on it is reasoning, never an answer
    (its decoy 'A' would be read otherwise)."""
    exam = kaoshi.load_exam("kaoshi", exam_file(tmp_path / "exam.jsonl"))
    thought = "首先看选项A，似乎答案是A？再看"
    with FakeOpenAI(answers={"第1题": thought}, faults={"第1题": ["length"]}, answer_for=None) as server:
        result = kaoshi.evaluate(
            exam, model="openai:r1", base_url=server.base_url, thinking=True, limit_total=2
        )
    cut = next(s for s in result.samples if s.question_id == "q1")
    assert (cut.response, cut.reasoning, cut.truncated, cut.correct) == ("", thought, True, False)
