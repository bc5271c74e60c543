"""kaoshi run --batch (issue 43): a run's requests sent through a provider's batch endpoint (the fake's
Batch API), answered as in real time, priced at half, and never sent twice: not after a kill while
waiting, not after a kill around the call that makes a batch, not when a line fails or a batch expires."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aiohttp")

import kaoshi
from kaoshi.api import ModelOptions, RunConfig
from kaoshi.api.costs import estimate_prepared, parse_price, read_judge_usage, run_usage
from kaoshi.api.evaluation import BatchPolicy, CachePolicy, RunInterrupted
from kaoshi.models.base import ModelError
from kaoshi.store import Store
from kaoshi.store.batches import BatchBook
from tests.support.fake_openai import FakeOpenAI
from tests.support.paid import LETTERS, paid_exam
from tests.support.paid import kaoshi as kaoshi_cli

RUN = "paid-openai_m-generate"


def replies(n: int) -> dict[str, str]:
    """Each question's answer, some right and some wrong, as the fake gives them."""
    return {f"第{i}题：": f"答案：{LETTERS[(i * 3) % 4]}" for i in range(n)}


def run_args(exam: Path, store: Path, server: FakeOpenAI, *more: str) -> tuple[str, ...]:
    return (
        "run", "--data", str(exam), "--model", "openai:m", "--base-url", server.base_url,
        "--store", str(store), "--no-report", "--no-cache", *more,
    )  # fmt: skip


def stored(store: Path, run: str = RUN) -> dict[str, tuple[str | None, bool | None, str | None]]:
    with Store(store, read_only=True) as opened:
        return {s.question_id: (s.response, s.correct, s.batch_id) for s in opened.all_samples(run)}


def evaluate(exam: Path, store: Path, server: FakeOpenAI, policy: BatchPolicy) -> kaoshi.EvalResult:
    """The run through the Python API, with the cache off (a server on this machine)."""
    return kaoshi.evaluate(
        kaoshi.load_exam(data=exam),
        "openai:m",
        base_url=server.base_url,
        store=store,
        batch=policy,
        cache=CachePolicy(enabled=False),
    )


def test_a_batch_run_gives_the_real_time_answers_with_no_real_time_request_at_half_the_price(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n = 1000
    exam = paid_exam(tmp_path / "exam.jsonl", n)
    with FakeOpenAI(answers=replies(n)) as server:
        batched_run = run_args(
            exam, tmp_path / "b.sqlite", server, "--batch", "--batch-poll", "0", "--price", "1,2"
        )
        code, _, batch_err = kaoshi_cli(capsys, *batched_run)
        assert code == 0, batch_err
        assert server.bodies == []  # not one real-time request
        assert len(server.batch.created) == 1 and server.batch.uploads == 1
        assert set(server.batch.succeeded.values()) == {1} and len(server.batch.succeeded) == n
        usage_sent = dict(server.batch.batch_usage)
        code, _, err = kaoshi_cli(capsys, *run_args(exam, tmp_path / "r.sqlite", server))
        assert code == 0, err
        assert len(server.bodies) == n
    batched, realtime = stored(tmp_path / "b.sqlite"), stored(tmp_path / "r.sqlite")
    assert {q: v[:2] for q, v in batched.items()} == {q: v[:2] for q, v in realtime.items()}
    batch_id = server.batch.created[0]["id"]
    assert {v[2] for v in batched.values()} == {batch_id} and {v[2] for v in realtime.values()} == {None}
    # the ledger holds the tokens the server reported, and prices them at half
    usage = run_usage(RUN, store=tmp_path / "b.sqlite")
    assert (usage.prompt, usage.completion) == (usage_sent["prompt_tokens"], usage_sent["completion_tokens"])
    assert usage.batched == n and usage.batch_prompt == usage.prompt
    full = run_usage(RUN, store=tmp_path / "r.sqlite")
    price = parse_price("1,2")
    assert usage.cost(price) == pytest.approx(full.cost(price) / 2)
    assert f"{n} answered by batches, at 0.5 of the price" in batch_err
    # the batch carries the run, the store and its input file, by which it is found again
    metadata = server.batch.created[0]["metadata"]
    assert (
        metadata["kaoshi_run"] == RUN and metadata["kaoshi_input"] == server.batch.created[0]["input_file_id"]
    )
    with Store(tmp_path / "b.sqlite", read_only=True) as opened:
        assert metadata["kaoshi_store"] == opened.batches.store_id()
        (record,) = opened.batches.of_run(RUN)
        assert record.collected_at is not None and record.status == "completed"


def test_the_provider_limits_split_a_run_into_several_batches(tmp_path: Path) -> None:
    exam = paid_exam(tmp_path / "exam.jsonl", 12)
    with FakeOpenAI(answers=replies(12)) as server:
        server.batch.max_lines = 5
        result = evaluate(exam, tmp_path / "s.sqlite", server, BatchPolicy(poll_s=0, max_lines=5))
        assert [len(b["custom_ids"]) for b in server.batch.created] == [5, 5, 2]
        assert all(b.get("status", "ok") != "failed" for b in server.batch.created)
        assert server.bodies == []
    assert result.new_samples == 12
    assert len({v[2] for v in stored(tmp_path / "s.sqlite").values()}) == 3


@pytest.mark.parametrize(
    "fault",
    ["fail_lines", "expire_batches", "cancel_batches", "unreadable_output", "content_errors", "fail_batches"],
)
def test_what_a_batch_leaves_unanswered_is_sent_again_and_each_question_is_answered_once(
    tmp_path: Path, fault: str
) -> None:
    n = 10
    exam = paid_exam(tmp_path / "exam.jsonl", n)
    with FakeOpenAI(answers=replies(n)) as server:
        server.batch.polls_to_finish = 1
        if fault == "fail_lines":
            server.batch.fail_lines = {"第3题：": 1, "第7题：": 2}
        else:
            setattr(server.batch, fault, 1)
        result = evaluate(exam, tmp_path / "s.sqlite", server, BatchPolicy(poll_s=0))
        assert server.bodies == [] and result.new_samples == n and result.errors == 0
        # each question in exactly one successful batch line
        assert dict(server.batch.succeeded) == {f"q{i}": 1 for i in range(n)}
    answers = stored(tmp_path / "s.sqlite")
    assert len(answers) == n and all(text is not None for text, _, _ in answers.values())
    rounds = {"fail_lines": 3, "expire_batches": 2, "cancel_batches": 2, "fail_batches": 2}
    assert len(server.batch.created) == rounds.get(fault, 1)


def test_a_request_no_batch_answers_is_left_unasked_or_asked_in_real_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = paid_exam(tmp_path / "exam.jsonl", 4)
    store = tmp_path / "s.sqlite"
    with FakeOpenAI(answers=replies(4)) as server:
        server.batch.polls_to_finish = 0
        server.batch.fail_lines = {"第2题：": 9}
        args = run_args(exam, store, server, "--batch", "--batch-poll", "0", "--batch-rounds", "2")
        code, _, err = kaoshi_cli(capsys, *args)
        assert code == 1 and "1 request(s) got no answer in 2 batch(es)" in err, err
        assert "HTTP 500" in err
        assert server.bodies == [] and len(server.batch.created) == 2
        assert len(stored(store)) == 3  # the others are kept; the failed one is not stored as an answer
        code, _, err = kaoshi_cli(capsys, *args, "--batch-fallback", "realtime")
        assert code == 0, err
        assert len(server.bodies) == 1 and "第2题" in server.bodies[0]["messages"][-1]["content"]
        # the same command gave it its rounds again (in batches of its one line), then asked in real time
        assert [len(b["custom_ids"]) for b in server.batch.created] == [4, 1, 1, 1]
    assert len(stored(store)) == 4


def test_a_run_killed_while_it_waits_polls_the_same_batch_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n = 30
    exam = paid_exam(tmp_path / "exam.jsonl", n)
    store = tmp_path / "s.sqlite"
    with FakeOpenAI(answers=replies(n)) as server:
        server.batch.polls_to_finish = 100_000
        env = {**os.environ, "OPENAI_API_KEY": "k", "PYTHONPATH": os.pathsep.join(sys.path)}
        args = [
            sys.executable,
            "-m",
            "kaoshi.cli.main",
            *run_args(exam, store, server, "--batch", "--batch-poll", "0.02"),
        ]
        process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while server.batch.polls < 5 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        assert len(server.batch.created) == 1
        with Store(store, read_only=True) as opened:
            assert opened.batches.waiting() == {RUN: (1, n)}
        code, out, _ = kaoshi_cli(capsys, "runs", "--store", str(store))
        assert code == 0 and "waiting on 1 provider batch (30 requests)" in " ".join(out.split()), out
        # nor removed: its batch would run on, billed, with nothing to collect it
        code, _, err = kaoshi_cli(capsys, "runs", "rm", RUN, "--yes", "--store", str(store))
        assert code != 0 and "30 request(s) in 1 provider batch(es) not collected yet" in err, err
        # the run cannot be asked in real time while its batch is out
        result = subprocess.run(args[:-3], env=env, capture_output=True, text=True)
        assert result.returncode != 0 and "waiting in 1 provider batch" in result.stderr, result.stderr
        server.batch.polls_to_finish = 0
        for batch in server.batch._batches.values():
            batch.polls_left = 0
        result = subprocess.run(args, env=env, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        assert len(server.batch.created) == 1  # polled again, never sent again
        assert set(server.batch.succeeded.values()) == {1} and len(server.batch.succeeded) == n
    assert len(stored(store)) == n


def test_a_batch_made_just_before_a_kill_is_found_again_among_the_providers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exam = paid_exam(tmp_path / "exam.jsonl", 6)
    store = tmp_path / "s.sqlite"
    recorded = BatchBook.created

    def killed(self: BatchBook, *args: object) -> None:
        raise KeyboardInterrupt  # the process dies after the provider made the batch, before it is recorded

    with FakeOpenAI(answers=replies(6)) as server:
        server.batch.polls_to_finish = 1
        monkeypatch.setattr(BatchBook, "created", killed)
        with pytest.raises(RunInterrupted):
            evaluate(exam, store, server, BatchPolicy(poll_s=0))
        with Store(store, read_only=True) as opened:
            (record,) = opened.batches.of_run(RUN)
            assert record.creating
        monkeypatch.setattr(BatchBook, "created", recorded)
        evaluate(exam, store, server, BatchPolicy(poll_s=0))
        assert len(server.batch.created) == 1 and len(server.batch.succeeded) == 6
    assert len(stored(store)) == 6


def test_an_upload_whose_batch_was_never_made_is_sent_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kaoshi.models.openai_batch import OpenAIBatches

    exam = paid_exam(tmp_path / "exam.jsonl", 6)
    store = tmp_path / "s.sqlite"
    create = OpenAIBatches.create

    def dies(self: OpenAIBatches, *args: object) -> object:
        raise KeyboardInterrupt  # killed after the upload, before the batch was made

    with FakeOpenAI(answers=replies(6)) as server:
        server.batch.polls_to_finish = 1
        monkeypatch.setattr(OpenAIBatches, "create", dies)
        with pytest.raises(RunInterrupted):
            evaluate(exam, store, server, BatchPolicy(poll_s=0))
        monkeypatch.setattr(OpenAIBatches, "create", create)
        evaluate(exam, store, server, BatchPolicy(poll_s=0))
        assert len(server.batch.created) == 1 and server.batch.uploads == 2
        assert len(server.batch.succeeded) == 6
    with Store(store, read_only=True) as opened:
        assert [r.collected_at is not None for r in opened.batches.of_run(RUN)] == [True]


def test_estimate_prices_a_batch_run_at_half(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exam = paid_exam(tmp_path / "exam.jsonl", 8)
    with FakeOpenAI() as server:
        args = run_args(exam, tmp_path / "s.sqlite", server, "--estimate", "--price", "1,2")
        batched = kaoshi_cli(capsys, *args, "--batch")[1]
        price = parse_price("1,2")
        estimates = [
            estimate_prepared(kaoshi.load_exam(data=exam), "openai:m", RunConfig(backend=ModelOptions(
                base_url=server.base_url)), store=tmp_path / "s.sqlite", price=price, batch=batch)
            for batch in (False, True)
        ]  # fmt: skip
        assert server.bodies == [] and server.batch.created == [] and server.batch.uploads == 0
    assert "in batches at 0.5 of it" in batched
    realtime_costs, batch_costs = (estimate.cost_range for estimate in estimates)
    assert realtime_costs is not None and batch_costs is not None
    assert batch_costs == pytest.approx((realtime_costs[0] / 2, realtime_costs[1] / 2))
    assert estimates[1].to_json()["batch"] is True


def test_batch_needs_a_backend_with_a_batch_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = paid_exam(tmp_path / "exam.jsonl", 4)
    code, _, err = kaoshi_cli(capsys, "run", "--data", str(exam), "--model", "random", "--batch",
                              "--store", str(tmp_path / "s.sqlite"))  # fmt: skip
    assert code != 0 and "has no batch endpoint" in err, err


@pytest.mark.parametrize("mode", ["careful", "debate"])
def test_a_judge_in_batches_grades_as_in_real_time_and_its_calls_cost_half(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    """`kaoshi judge --batch`: the judge's calls go through the Batch API (a debate's two rounds, a batch
    round each), the grades equal real-time grades, and the ledger's judge role prices them at half."""
    stores = {kind: tmp_path / f"{kind}.sqlite" for kind in ("batch", "realtime")}
    run = "sample-constant_A-generate"
    for store in stores.values():
        assert kaoshi_cli(capsys, "run", "--benchmark", "sample", "--model", "constant:A",
                          "--store", str(store), "--no-report")[0] == 0  # fmt: skip
    grades = {}
    with FakeOpenAI(default_answer="评分：7分") as server:
        server.batch.polls_to_finish = 1
        judge = ("judge", run, "--judge", "openai:judge-m", "--base-url", server.base_url, "--mode", mode)
        code, _, err = kaoshi_cli(
            capsys, *judge, "--store", str(stores["batch"]), "--batch", "--batch-poll", "0"
        )
        assert code == 0, err
        assert server.bodies == [] and len(server.batch.created) == (2 if mode == "debate" else 1)
        lines = sum(len(b["custom_ids"]) for b in server.batch.created)
        assert kaoshi_cli(capsys, *judge, "--store", str(stores["realtime"]))[0] == 0
        assert len(server.bodies) == lines
        # judged again: nothing left to grade, nothing sent
        assert kaoshi_cli(capsys, *judge, "--store", str(stores["batch"]), "--batch")[0] == 0
        assert len(server.batch.created) == (2 if mode == "debate" else 1)
    for kind, store in stores.items():
        with Store(store, read_only=True) as opened:
            (grader,) = opened.graders(run)
            grades[kind] = {q: (g.status, g.score) for q, g in opened.grades(run, grader).items()}
            judged = read_judge_usage(opened, run)["openai:judge-m"]
        price = parse_price("2,4")
        if kind == "batch":
            assert judged.batched == judged.answers == lines
            batch_cost = judged.cost(price)
        else:
            assert judged.batched == 0
            assert batch_cost == pytest.approx(judged.cost(price) / 2)
    assert grades["batch"] == grades["realtime"] and grades["batch"]


def test_a_line_no_retry_fixes_is_an_error_sample_as_in_real_time(tmp_path: Path) -> None:
    """A 400 (a prompt over the model's context) is stored as the error a real-time request gets; only a
    status a retry may fix, or a line the batch left undone, is sent again."""
    exam = paid_exam(tmp_path / "exam.jsonl", 6)
    with FakeOpenAI(answers=replies(6)) as server:
        answer = server.answer

        def too_long(body: dict[str, object]) -> tuple[int, dict[str, object]]:
            if "第2题" in str(body.get("messages")):
                return 400, {
                    "error": {"message": "maximum context length exceeded", "type": "invalid_request"}
                }
            return answer(body)  # type: ignore[arg-type]

        server.answer = too_long  # type: ignore[method-assign]
        server.batch.polls_to_finish = 0
        result = evaluate(exam, tmp_path / "s.sqlite", server, BatchPolicy(poll_s=0))
        assert len(server.batch.created) == 1 and server.bodies == []
    assert result.errors == 1 and result.new_samples == 6
    with Store(tmp_path / "s.sqlite", read_only=True) as opened:
        (failed,) = [s for s in opened.samples(RUN) if s.error]
    assert failed.question_id == "q2" and "HTTP 400" in failed.error and "context length" in failed.error


def test_a_create_that_fails_after_the_provider_made_the_batch_is_not_made_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kaoshi.models.openai_batch import OpenAIBatches

    exam = paid_exam(tmp_path / "exam.jsonl", 6)
    create = OpenAIBatches.create

    def made_then_lost(self: OpenAIBatches, *args: Any) -> Any:
        create(self, *args)  # the provider makes it; the reply never arrives (a timeout, a 502)
        raise ModelError("could not create the batch: HTTP 502")

    with FakeOpenAI(answers=replies(6)) as server:
        server.batch.polls_to_finish = 1
        monkeypatch.setattr(OpenAIBatches, "create", made_then_lost)
        result = evaluate(exam, tmp_path / "s.sqlite", server, BatchPolicy(poll_s=0))
        assert len(server.batch.created) == 1 and set(server.batch.succeeded.values()) == {1}
    assert result.new_samples == 6


def test_the_cost_cap_holds_a_first_batch_to_what_it_admits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before any answer has a cost, each line is reserved at its own estimate (its prompt and its whole
    budget, at the batch share): a first batch holds only what the cap admits, and the same command
    without the cap sends the rest."""
    n = 40
    exam = paid_exam(tmp_path / "exam.jsonl", n)
    store = tmp_path / "s.sqlite"
    with FakeOpenAI(answers=replies(n)) as server:
        server.batch.polls_to_finish = 0
        args = run_args(exam, store, server, "--batch", "--batch-poll", "0", "--price", "1000,1000")
        code, _, err = kaoshi_cli(capsys, *args, "--max-cost", "2")
        assert code == 3 and "stopped at the cost cap" in err, err
        (first,) = server.batch.created
        assert 0 < len(first["custom_ids"]) < n
        usage = run_usage(RUN, store=store)
        assert usage.cost(parse_price("1000,1000")) <= 2
        code, _, err = kaoshi_cli(capsys, *args)
        assert code == 0, err
        assert set(server.batch.succeeded.values()) == {1} and len(server.batch.succeeded) == n
    assert len(stored(store)) == n


def test_the_llm_extractor_reads_unparsed_answers_in_batches_of_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --llm-extractor on a provider, a batch run's unparsed answers are read by the extractor in a
    batch of its own (no real-time call), and its calls are the ledger's extractor role, at half."""
    exam = paid_exam(tmp_path / "exam.jsonl", 8)

    def answer_for(prompt: str, body: dict[str, Any]) -> str:
        if body["model"] == "ext":
            return "B"
        return "答案：C" if "第1题" in prompt else "这道题我不太确定。"

    runs = {}
    for kind in ("batch", "realtime"):
        store = tmp_path / f"{kind}.sqlite"
        with FakeOpenAI(answer_for=answer_for) as server:
            server.batch.polls_to_finish = 1
            more = ("--batch", "--batch-poll", "0") if kind == "batch" else ()
            args = run_args(exam, store, server, "--llm-extractor", "openai:ext", *more)
            code, _, err = kaoshi_cli(capsys, *args)
            assert code == 0, err
            if kind == "batch":
                assert server.bodies == []
                roles = [b["metadata"]["kaoshi_role"] for b in server.batch.created]
                assert roles == ["model", "extractor"] and len(server.batch.created[1]["custom_ids"]) == 7
        with Store(store, read_only=True) as opened:
            runs[kind] = {
                s.question_id: (s.answer, s.extracted_by, s.extractor_usage) for s in opened.samples(RUN)
            }
        code, out, _ = kaoshi_cli(capsys, "report", RUN, "--store", str(store), "--format", "json",
                                  "--price", "1,2")  # fmt: skip
        assert code == 0
        extracted = json.loads(out)["extractor_usage"][RUN]["openai:ext"]
        assert extracted["answers"] == 7 and extracted["prompt_tokens"] > 0
        runs[kind]["cost"] = extracted["cost"]  # type: ignore[assignment]
    batch_cost, realtime_cost = runs["batch"].pop("cost"), runs["realtime"].pop("cost")
    assert batch_cost == pytest.approx(realtime_cost / 2)  # type: ignore[operator]
    assert {q: v[:2] for q, v in runs["batch"].items()} == {q: v[:2] for q, v in runs["realtime"].items()}
    assert runs["batch"]["q0"][1] == "llm" and runs["batch"]["q1"][1] == "rules"
    assert "batch_id" in runs["batch"]["q0"][2] and "batch_id" not in runs["realtime"]["q0"][2]


def test_k_samples_a_question_go_in_batches_with_ids_a_provider_takes(tmp_path: Path) -> None:
    """--repeats k: a sample after a question's first has a request id with a control character; its
    batch line's custom_id has none, and its answer comes back to it."""
    exam = paid_exam(tmp_path / "exam.jsonl", 4)

    def answer_for(prompt: str, body: dict[str, Any]) -> str:
        return f"答案：{LETTERS[(int(body['seed']) + len(prompt)) % 4]}"

    with FakeOpenAI(answer_for=answer_for) as server:
        server.batch.polls_to_finish = 0
        result = kaoshi.evaluate(
            kaoshi.load_exam(data=exam), "openai:m", base_url=server.base_url, store=tmp_path / "s.sqlite",
            batch=BatchPolicy(poll_s=0), cache=CachePolicy(enabled=False), repeats=3, temperature=0.7,
        )  # fmt: skip
        (batch,) = server.batch.created
    ids = batch["custom_ids"]
    assert len(ids) == 12 and all(ch.isprintable() for custom in ids for ch in custom)
    assert result.new_samples == 12 and result.errors == 0
    with Store(tmp_path / "s.sqlite", read_only=True) as opened:
        stored_samples = opened.all_samples(result.name)
    by_line = {line["custom_id"]: line["body"]["seed"] for line in batch["lines"]}
    for one in stored_samples:  # each answer is its own line's (the seed tells them apart)
        request = one.question_id if one.sample == 0 else f"{one.question_id}%1F{one.sample}"
        seed = by_line[request]
        assert one.response == answer_for(json.loads(one.prompt)[-1]["content"], {"seed": seed})
