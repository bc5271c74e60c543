"""What a run costs: the tokens its requests used (the ledger kept with each answer: prompt tokens, those a
provider read from its prompt cache, completion tokens with the reasoning among them) at a provider's
price per million tokens, and before a run is sent, an estimate from its exact prompts.

Providers price completion tokens, reasoning included, at one rate, prompt tokens at another and cached
prompt tokens (a prefix the provider kept from an earlier request) lower. A batch endpoint (OpenAI's,
Alibaba Model Studio's) charges about half: give its price as the price.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass

from kaoshi.errors import InputError


@dataclass(frozen=True)
class Price:
    """US dollars (or any currency, the same in all three) per million tokens: prompt, completion
    (reasoning included) and cached prompt tokens (None: priced as other prompt tokens)."""

    prompt: float
    completion: float
    cached: float | None = None

    def cost(self, prompt: int, completion: int, cached: int = 0) -> float:
        """The price of `prompt` prompt tokens (`cached` of them read from the provider's cache) and
        `completion` completion tokens."""
        cached_rate = self.prompt if self.cached is None else self.cached
        return ((prompt - cached) * self.prompt + cached * cached_rate + completion * self.completion) / 1e6

    def describe(self) -> str:
        cached = f", cached prompt {self.cached:g}" if self.cached is not None else ""
        return f"prompt {self.prompt:g}, completion {self.completion:g}{cached} per million tokens"

    def to_json(self) -> dict[str, float | None]:
        return {"prompt": self.prompt, "completion": self.completion, "cached": self.cached}


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

    def cost(self, price: Price) -> float:
        return price.cost(self.prompt, self.completion, self.cached)

    def to_json(self) -> dict[str, int]:
        return {
            "answers": self.answers,
            "prompt_tokens": self.prompt,
            "cached_prompt_tokens": self.cached,
            "completion_tokens": self.completion,
            "reasoning_tokens": self.reasoning,
            "answers_without_usage": self.uncounted,
            "answers_taken_from_other_runs": self.taken,
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
