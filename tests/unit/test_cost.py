"""Prices and token counts (issue 43's ledger): `--price IN,OUT[,CACHED]`, a run's cost from its tokens,
and the token count an estimate uses where kaoshi has no tokenizer for the model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kaoshi.analysis.cost import Price, Usage, approximate_tokens, parse_price, parse_prices
from kaoshi.errors import InputError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2.5,10", Price(2.5, 10.0)),
        ("0.15, 0.6, 0.075", Price(0.15, 0.6, 0.075)),
        ("0,0", Price(0.0, 0.0)),
        ("1e-1,2", Price(0.1, 2.0)),
    ],
)
def test_a_price_per_million_prompt_completion_and_cached_tokens(text: str, expected: Price) -> None:
    assert parse_price(text) == expected


@pytest.mark.parametrize("text", ["", "2.5", "1,2,3,4", "a,b", "-1,2", "1,nan", "1,inf", "1,,2", "$2,$8"])
def test_a_price_kaoshi_cannot_read_says_how_to_write_one(text: str) -> None:
    with pytest.raises(InputError, match="give IN,OUT or IN,OUT,CACHED"):
        parse_price(text)


def test_cached_prompt_tokens_cost_their_own_price_and_the_rest_the_prompts() -> None:
    price = Price(2.0, 8.0, 0.5)
    assert price.cost(1_000_000, 0) == pytest.approx(2.0)
    assert price.cost(1_000_000, 250_000, cached=600_000) == pytest.approx(0.4 * 2 + 0.6 * 0.5 + 0.25 * 8)
    assert Price(2.0, 8.0).cost(1_000_000, 0, cached=600_000) == pytest.approx(2.0)  # no cached rate
    usage = Usage(answers=3, prompt=3_000, completion=600, cached=1_000, reasoning=400)
    assert usage.cost(price) == pytest.approx((2_000 * 2 + 1_000 * 0.5 + 600 * 8) / 1e6)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("下列说法正确的是", 8),  # a token a Chinese character
        ("答案：A", 4),  # three CJK characters (the colon is full-width) and one of four others
        ("Which of the following is correct?", 9),  # 35 characters / 4, rounded up
        ("题目：1+1=？\nA．2", 7),  # 题目：？．are wide (5), "1+1=", "\n", "A", "2" are 7 others: 2
        ("ｆｕｌｌ", 4),  # full-width Latin letters count as wide
    ],
)
def test_an_estimate_without_the_models_tokenizer_counts_errs_high(text: str, tokens: int) -> None:
    assert approximate_tokens(text) == tokens


def test_a_prices_file_prices_each_model_by_its_spec_or_its_name(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps({"gpt-4o-mini": "0.15,0.6,0.075", "openai:deepseek-chat": [0.27, 1.1, 0.07]})
    )
    listed = parse_prices(str(prices))
    assert listed.for_model("openai:gpt-4o-mini") == Price(0.15, 0.6, 0.075)  # by its name
    assert listed.for_model("openai:deepseek-chat") == Price(0.27, 1.1, 0.07)  # by its spec
    with pytest.raises(InputError, match=r"no price for model 'openai:qwen-max' \(priced: gpt-4o-mini, "):
        listed.for_model("openai:qwen-max")
    one = parse_prices("2,8")
    assert one.for_model("openai:anything") == Price(2.0, 8.0)


def test_a_prices_file_may_give_a_models_batch_share(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"m": {"price": "2,8", "batch": 0.4}, "n": {"price": [1, 2]}}))
    listed = parse_prices(str(prices))
    assert listed.for_model("m") == Price(2.0, 8.0, batch=0.4)
    assert listed.for_model("m").cost(1_000_000, 0, batch=True) == pytest.approx(0.8)
    assert listed.for_model("n") == Price(1.0, 2.0)  # half, as most providers


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not a prices file kaoshi reads"),
        ("[1, 2]", "a prices file is a JSON object of model -> price"),
        ('{"m": {"in": 1}}', "model 'm': give"),
        ('{"m": "1"}', "model 'm': --price '1': give IN,OUT"),
        ('{"m": [1, -2]}', "model 'm': --price '1,-2': give IN,OUT"),
        ('{"m": {"price": "1,2", "batch": 0}}', "model 'm': batch is the share of the price, in (0, 1]"),
        ('{"m": {"price": "1,2", "batch": true}}', "model 'm': batch is the share"),
        ('{"m": {"price": "1,2", "share": 1}}', "model 'm': give"),
    ],
)
def test_a_prices_file_kaoshi_cannot_read_names_the_file_and_the_model(
    tmp_path: Path, content: str, message: str
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(content)
    with pytest.raises(InputError, match=re.escape(f"--price {prices}: ") + ".*" + re.escape(message)):
        parse_prices(str(prices))
