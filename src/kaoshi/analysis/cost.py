"""What a run costs: the tokens its requests used (the ledger kept with each answer: prompt tokens, those a
provider read from its prompt cache, completion tokens with the reasoning among them) at a provider's
price per million tokens, and before a run is sent, an estimate from its exact prompts.

Providers price completion tokens, reasoning included, at one rate, prompt tokens at another and cached
prompt tokens (a prefix the provider kept from an earlier request) lower. A batch endpoint (OpenAI's,
Alibaba Model Studio's, Together's) charges half: an answer a batch gave (kaoshi run --batch) is priced at
`Price.batch` of the real-time price.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from kaoshi.errors import InputError


@dataclass(frozen=True)
class Price:
    """US dollars (or any currency, the same in all three) per million tokens: prompt, completion
    (reasoning included) and cached prompt tokens (None: priced as other prompt tokens); `batch`: the share
    of it a batch request costs (OpenAI, Alibaba Model Studio and Together charge half)."""

    prompt: float
    completion: float
    cached: float | None = None
    batch: float = 0.5

    def cost(self, prompt: int, completion: int, cached: int = 0, *, batch: bool = False) -> float:
        """The price of `prompt` prompt tokens (`cached` of them read from the provider's cache) and
        `completion` completion tokens; `batch`: sent in a batch."""
        cached_rate = self.prompt if self.cached is None else self.cached
        full = ((prompt - cached) * self.prompt + cached * cached_rate + completion * self.completion) / 1e6
        return full * self.batch if batch else full

    def describe(self) -> str:
        cached = f", cached prompt {self.cached:g}" if self.cached is not None else ""
        return f"prompt {self.prompt:g}, completion {self.completion:g}{cached} per million tokens"

    def to_json(self) -> dict[str, float | None]:
        prices = {"prompt": self.prompt, "completion": self.completion, "cached": self.cached}
        return {**prices, "batch": self.batch}


def parse_price(text: str) -> Price:
    """`--price IN,OUT[,CACHED]`: prices per million prompt, completion and cached prompt tokens."""
    parts = [part.strip() for part in text.split(",")]
    try:
        values = [float(part) for part in parts]
    except ValueError:
        values = []
    if len(values) not in (2, 3) or any(not math.isfinite(v) or v < 0 for v in values):
        raise InputError(
            f"--price {text!r}: give IN,OUT or IN,OUT,CACHED, prices per million prompt, completion and "
            "cached prompt tokens (e.g. 0.15,0.6,0.075)"
        )
    return Price(values[0], values[1], values[2] if len(values) == 3 else None)


@dataclass(frozen=True)
class PriceList:
    """What `--price` was given: one price for every model, or a prices file a user keeps, which prices
    each model by its spec (`openai:gpt-4o-mini`) or its name (`gpt-4o-mini`), e.g.
    `{"gpt-4o-mini": "0.15,0.6,0.075", "openai:deepseek-chat": [0.27, 1.1, 0.07]}`; a model whose batch
    price is not half its price: `{"qwen-plus": {"price": "0.8,2", "batch": 0.5}}`."""

    prices: Mapping[str, Price]
    default: Price | None = None
    source: str = ""

    def get(self, spec: str) -> Price | None:
        """The price of a model given by its spec, None where the list has none."""
        name = spec.partition(":")[2] or spec
        return self.prices.get(spec) or self.prices.get(name) or self.default

    def for_model(self, spec: str) -> Price:
        """The price of a model given by its spec; InputError naming the file where it has none."""
        found = self.get(spec)
        if found is None:
            known = ", ".join(sorted(self.prices)) or "none"
            raise InputError(f"--price {self.source}: no price for model {spec!r} (priced: {known})")
        return found


def parse_prices(text: str) -> PriceList:
    """`--price IN,OUT[,CACHED]`, or the path of a prices file (JSON: model -> "IN,OUT[,CACHED]" or a
    list of two or three numbers)."""
    path = Path(text)
    if not path.is_file():
        return PriceList({}, parse_price(text), text)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"--price {path}: not a prices file kaoshi reads ({exc})") from None
    if not isinstance(entries, dict):
        raise InputError(f"--price {path}: a prices file is a JSON object of model -> price")
    prices = {}
    for model, value in entries.items():
        batch: object = Price.batch
        if isinstance(value, dict) and set(value) <= {"price", "batch"} and "price" in value:
            # {"price": "IN,OUT[,CACHED]", "batch": SHARE}: a provider whose batch price is not half
            value, batch = value["price"], value.get("batch", batch)
        if isinstance(value, list) and all(isinstance(v, (int, float)) for v in value):
            value = ",".join(str(v) for v in value)
        if not isinstance(value, str):
            raise InputError(
                f'--price {path}: model {model!r}: give "IN,OUT[,CACHED]", [IN, OUT, CACHED] or '
                '{"price": "IN,OUT[,CACHED]", "batch": SHARE}'
            )
        if isinstance(batch, bool) or not isinstance(batch, (int, float)) or not 0 < batch <= 1:
            raise InputError(f"--price {path}: model {model!r}: batch is the share of the price, in (0, 1]")
        try:
            prices[str(model)] = replace(parse_price(value), batch=float(batch))
        except InputError as exc:
            raise InputError(f"--price {path}: model {model!r}: {exc}") from None
    return PriceList(prices, None, str(path))


@dataclass(frozen=True)
class Usage:
    """The tokens a run's answers used, as their servers counted them (kaoshi.store: tokens_in, tokens_out,
    tokens_cached, tokens_reasoning). `uncounted`: answers whose server gave no usage; `taken`: answers
    taken from another run or the cache (--reuse-from, kaoshi.runner.cache), paid for there and not
    counted here."""

    answers: int = 0
    prompt: int = 0
    completion: int = 0
    cached: int = 0
    reasoning: int = 0
    uncounted: int = 0
    taken: int = 0
    # of the above, the answers a provider's batch gave (kaoshi run --batch) and their tokens
    batched: int = 0
    batch_prompt: int = 0
    batch_completion: int = 0
    batch_cached: int = 0

    def cost(self, price: Price) -> float:
        """What the answers cost: those a batch gave at the batch share of the price."""
        prompt, completion = self.prompt - self.batch_prompt, self.completion - self.batch_completion
        realtime = price.cost(prompt, completion, self.cached - self.batch_cached)
        return realtime + price.cost(self.batch_prompt, self.batch_completion, self.batch_cached, batch=True)

    @property
    def paid(self) -> int:
        """Answers this run paid for (not taken from another run or the cache)."""
        return self.answers - self.taken

    def to_json(self) -> dict[str, int]:
        return {
            "answers": self.answers,
            "prompt_tokens": self.prompt,
            "cached_prompt_tokens": self.cached,
            "completion_tokens": self.completion,
            "reasoning_tokens": self.reasoning,
            "answers_without_usage": self.uncounted,
            "answers_taken_from_other_runs": self.taken,
            **(
                {
                    "batch_answers": self.batched,
                    "batch_prompt_tokens": self.batch_prompt,
                    "batch_cached_prompt_tokens": self.batch_cached,
                    "batch_completion_tokens": self.batch_completion,
                }
                if self.batched
                else {}
            ),
        }


# How an estimate counts tokens without the model's tokenizer (a provider's model): a CJK character a token,
# and a token per 4 other characters (English text's usual rate). Current tokenizers (GPT-4o's o200k, Qwen's,
# DeepSeek's) spend fewer tokens on a Chinese character than that, so the estimate errs high.
APPROXIMATION = "approximate: a token per Chinese character, one per 4 other characters (errs high)"


def approximate_tokens(text: str) -> int:
    """Tokens of `text` as APPROXIMATION counts them."""
    wide = sum(1 for char in text if _is_wide(char))
    return wide + math.ceil((len(text) - wide) / 4)


def _is_wide(char: str) -> bool:
    """A CJK ideograph, kana, hangul or full-width form (a character BPE tokenizers rarely merge)."""
    return unicodedata.east_asian_width(char) in ("W", "F")
