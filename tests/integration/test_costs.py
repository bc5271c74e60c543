"""What a paid run costs (issue 43): `kaoshi run --estimate` sends nothing and counts the exact prompts the
run would send; the ledger's tokens are the server's usage, summed; `--price` turns them into money in the
run's last lines and in `kaoshi report`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

from kaoshi.analysis.cost import Price, approximate_tokens
from kaoshi.api.costs import run_usage
from kaoshi.cli.main import main
from kaoshi.store import Store
from tests.support.fake_openai import FakeOpenAI
from tests.support.paid import kaoshi, paid_exam

PRICE = "0.15,0.6,0.075"


def exam_file(path: Path, n: int = 24) -> Path:
    return paid_exam(path, n)


def test_an_estimate_sends_nothing_writes_nothing_and_counts_the_prompts_a_run_sends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = exam_file(tmp_path / "exam.jsonl")
    store = tmp_path / "s.sqlite"
    with FakeOpenAI(prefix_cache=4) as server:
        run = ("run", "--data", str(exam), "--model", "openai:m", "--base-url", server.base_url,
               "--store", str(store), "--no-report")  # fmt: skip
        code, out, err = kaoshi(capsys, *run, "--estimate", "--price", PRICE)
        assert code == 0, err
        assert server.bodies == [] and not store.exists()  # nothing sent, no store made
        assert kaoshi(capsys, *run, "--limit", "3")[0] == 0  # the smoke test: 6 answers stored
        code, partly, err = kaoshi(capsys, *run, "--limit", "3", "--estimate")
        assert code == 0 and "would send 0 request(s)" in partly
        assert "6 answered already, stored or in the cache" in partly
        assert kaoshi(capsys, *run)[0] == 0  # the whole run
    with Store(store, read_only=True) as opened:
        sent = opened.samples("paid-openai_m-generate")
        budget = 24 * opened.get_run("paid-openai_m-generate").spec.max_new_tokens
    # the estimate counted the prompts the run then sent (their messages, approximated: no tokenizer here)
    expected = sum(sum(approximate_tokens(m["content"]) + 4 for m in json.loads(s.prompt)) for s in sent)
    assert "would send 24 request(s) to openai:m" in out
    assert f"prompt tokens: {expected:,} (approximate: a token per Chinese character" in out
    assert f"new tokens allowed: at most {budget:,}" in out
    price = Price(0.15, 0.6, 0.075)
    low, high = price.cost(expected, 0), price.cost(expected, budget)
    assert f"cost: {low:,.4f} for the prompts, up to {high:,.4f} if every answer used its whole budget" in out


def test_an_estimate_of_a_large_run_suggests_a_sample_and_what_it_buys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAI() as server:
        run = ("run", "--model", "openai:m", "--base-url", server.base_url,
               "--store", str(tmp_path / "s.sqlite"), "--estimate", "--price", PRICE)  # fmt: skip
        small = kaoshi(capsys, *run, "--data", str(exam_file(tmp_path / "small.jsonl")))[1]
        large = kaoshi(capsys, *run, "--data", str(paid_exam(tmp_path / "large.jsonl", 4000)))[1]
        sampled = kaoshi(capsys, *run, "--data", str(tmp_path / "large.jsonl"), "--sample", "400")[1]
        assert server.bodies == []
    assert "--sample" not in small and "--sample" not in sampled  # a small run, or one sampled already
    # 400 of 4,000: 1.96 * sqrt(0.25 / 400 * 3600 / 3999) = 4.65 points
    assert "for 10% of that" in large and "--sample 400 --seed 0" in large and "±4.6 points at 95%" in large


def test_the_ledger_is_the_servers_usage_and_the_price_makes_it_money(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = exam_file(tmp_path / "exam.jsonl")
    store = tmp_path / "s.sqlite"
    with FakeOpenAI(prefix_cache=4) as server:
        code, _, err = kaoshi(
            capsys, "run", "--data", str(exam), "--model", "openai:m", "--base-url", server.base_url,
            "--store", str(store), "--no-report", "--price", PRICE, "--concurrency", "1",
        )  # fmt: skip
        assert code == 0, err
    usage = run_usage("paid-openai_m-generate", store=store)
    sent = server.usages
    assert len(sent) == usage.answers == 24
    assert usage.prompt == sum(u["prompt_tokens"] for u in sent)
    assert usage.completion == sum(u["completion_tokens"] for u in sent)
    assert usage.cached == sum(u["prompt_tokens_details"]["cached_tokens"] for u in sent) > 0
    price = Price(0.15, 0.6, 0.075)
    assert (
        f"cost: {usage.cost(price):,.4f} for {usage.prompt:,} prompt tokens ({usage.cached:,} cached)" in err
    )
    code, out, _ = kaoshi(
        capsys,
        "report",
        "paid-openai_m-generate",
        "--price",
        PRICE,
        "--format",
        "json",
        "--store",
        str(store),
    )
    reported = json.loads(out)["usage"]
    assert reported["cost"] == pytest.approx(usage.cost(price))
    assert (reported["prompt_tokens"], reported["cached_prompt_tokens"]) == (usage.prompt, usage.cached)
    code, out, _ = kaoshi(capsys, "report", "paid-openai_m-generate", "--price", PRICE, "--store", str(store))
    assert "tokens and cost" in out and f"{usage.cost(price):,.4f}" in out


def test_a_cost_cap_stops_sending_and_the_same_command_without_it_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--max-cost`: once the run's answers cost the cap, nothing more is sent; it stops within the cost of
    the requests in flight past the cap (one here), and the same command without it asks each remaining
    question once."""
    exam = exam_file(tmp_path / "exam.jsonl")
    store = tmp_path / "s.sqlite"
    price = Price(1000.0, 1000.0)  # a dollar a thousand tokens: an answer of this exam costs about 0.05
    with FakeOpenAI() as server:
        run = ("run", "--data", str(exam), "--model", "openai:m", "--base-url", server.base_url,
               "--store", str(store), "--no-report", "--price", "1000,1000",
               "--concurrency", "1")  # fmt: skip
        code, _, err = kaoshi(capsys, *run, "--max-cost", "0.5")
        assert code == 3 and "stopped at the cost cap" in err, err
        usage = run_usage("paid-openai_m-generate", store=store)
        most = max(price.cost(u["prompt_tokens"], u["completion_tokens"]) for u in server.usages)
        # within about the cost of the requests in flight past the cap (one here, another taken by the
        # backend while the last answers were stored)
        assert 0.5 - most <= usage.cost(price) < 0.5 + 2 * most
        asked = len(server.usages)
        assert 0 < asked == usage.answers < 24
        code, out, _ = kaoshi(capsys, "runs", "--store", str(store))
        assert f"interrupted {asked}/24" in out
        # a cap the run has spent already (its earlier answers count): nothing is sent
        code, _, err = kaoshi(capsys, *run, "--max-cost", "0.4")
        assert code == 3 and len(server.usages) == asked
        code, _, err = kaoshi(capsys, *run)  # without the cap: the rest, each once
        assert code == 0, err
    assert len(server.usages) == 24 and run_usage("paid-openai_m-generate", store=store).answers == 24
    asked_prompts = [json.dumps(body.get("messages"), ensure_ascii=False) for body in server.bodies]
    assert len(set(asked_prompts)) == 24  # no question asked twice


def test_a_cost_cap_needs_a_price(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exam = exam_file(tmp_path / "exam.jsonl")
    code, _, err = kaoshi(
        capsys, "run", "--data", str(exam), "--model", "constant:A", "--store", str(tmp_path / "s.sqlite"),
        "--max-cost", "1",
    )  # fmt: skip
    assert code == 2 and "--max-cost) needs the price of the tokens (--price IN,OUT[,CACHED])" in err


def test_runs_of_two_models_are_priced_each_at_its_models_price_from_a_prices_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = exam_file(tmp_path / "exam.jsonl", n=6)
    store = tmp_path / "s.sqlite"
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"cheap": "1,1", "openai:dear": [10, 10]}))
    with FakeOpenAI() as server:
        for model in ("cheap", "dear"):
            code, _, err = kaoshi(
                capsys, "run", "--data", str(exam), "--model", f"openai:{model}", "--base-url",
                server.base_url, "--store", str(store), "--no-report", "--price", str(prices),
            )  # fmt: skip
            assert code == 0, err
    names = ["paid-openai_cheap-generate", "paid-openai_dear-generate"]
    code, out, _ = kaoshi(
        capsys, "report", *names, "--price", str(prices), "--format", "json", "--store", str(store)
    )
    usage = json.loads(out)["usage"]
    for name, rate in zip(names, (1.0, 10.0), strict=True):
        tokens = run_usage(name, store=store)
        assert usage[name]["cost"] == pytest.approx((tokens.prompt + tokens.completion) * rate / 1e6)
    with pytest.raises(SystemExit) as stopped:  # argparse's own: the option's value says what is wrong
        main(["report", names[0], "--price", str(tmp_path / "none.json"), "--store", str(store)])
    assert stopped.value.code == 2
    assert "argument --price: give IN,OUT or IN,OUT,CACHED" in capsys.readouterr().err


def test_the_judges_calls_are_the_ledgers_judge_role(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`kaoshi judge` with a provider's model keeps each call's usage with its round; `kaoshi report
    --price` shows the judge's tokens and cost beside the run's, each at its model's price."""
    store = tmp_path / "s.sqlite"
    assert kaoshi(capsys, "run", "--benchmark", "sample", "--model", "constant:A", "--store", str(store),
                  "--no-report")[0] == 0  # fmt: skip
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"judge-m": "2,4"}))
    with FakeOpenAI(default_answer="评分：7分") as server:
        code, _, err = kaoshi(capsys, "judge", "sample-constant_A-generate", "--judge", "openai:judge-m",
                              "--base-url", server.base_url, "--store", str(store))  # fmt: skip
        assert code == 0, err
    calls = server.usages
    assert calls
    code, out, _ = kaoshi(capsys, "report", "sample-constant_A-generate", "--price", str(prices),
                          "--format", "json", "--store", str(store))  # fmt: skip
    assert code == 0
    document = json.loads(out)
    assert "cost" not in document["usage"]  # the run's model has no price in the file: not priced
    judged = document["judge_usage"]["sample-constant_A-generate"]["openai:judge-m"]
    prompt, completion = sum(u["prompt_tokens"] for u in calls), sum(u["completion_tokens"] for u in calls)
    assert (judged["answers"], judged["prompt_tokens"], judged["completion_tokens"]) == (
        len(calls),
        prompt,
        completion,
    )
    assert judged["cost"] == pytest.approx((prompt * 2 + completion * 4) / 1e6)
    code, out, _ = kaoshi(capsys, "report", "sample-constant_A-generate", "--price", str(prices),
                          "--store", str(store))  # fmt: skip
    assert "sample-constant_A-generate · judge openai:judge-m" in out


def test_the_viewers_run_page_shows_the_ledger_by_role(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`kaoshi view --price`: a run's ledger page (linked from its page) shows its model's and its
    extractor's tokens and what each cost at its own model's price; without a price, the tokens alone."""
    testclient = pytest.importorskip("starlette.testclient", reason="the view extra installs starlette")
    from kaoshi.api.costs import parse_prices
    from kaoshi.view import create_app

    store = tmp_path / "s.sqlite"
    exam = paid_exam(tmp_path / "exam.jsonl", 6)

    def answer_for(prompt: str, body: dict[str, object]) -> str:
        return "B" if body["model"] == "ext" else ("答案：A" if "第1题" in prompt else "说不准。")

    with FakeOpenAI(answer_for=answer_for) as server:
        run_args = ("run", "--data", str(exam), "--model", "openai:m", "--base-url", server.base_url,
                    "--llm-extractor", "openai:ext", "--store", str(store), "--no-report")  # fmt: skip
        assert kaoshi(capsys, *run_args)[0] == 0
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"m": "1,2", "ext": "3,4"}))
    run = "paid-openai_m-generate"
    for given in (parse_prices(str(prices)), None):
        with testclient.TestClient(
            create_app(store, prices=given), base_url="http://127.0.0.1:8000"
        ) as client:
            assert f"/run/{run}/ledger" in client.get(f"/run/{run}").text
            page = client.get(f"/run/{run}/ledger").text
            assert client.get("/run/nothing/ledger").status_code == 404
        assert "model openai:m" in page and "extractor openai:ext" in page
        usage = run_usage(run, store=store)
        assert f"{usage.prompt:,}" in page
        if given is not None:
            assert f"{usage.cost(parse_prices(str(prices)).for_model('m')):,.4f}" in page
        else:
            assert "<caption>tokens</caption>" in page and "kaoshi view --price" in page
