"""What a run costs, before and after: `kaoshi run --estimate` (its requests and prompt tokens from the exact
prompts it would send, and the cost range its answers' budget allows) and a stored run's usage (`kaoshi
report --price`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kaoshi.analysis.cost import (
    APPROXIMATION,
    Price,
    PriceList,
    Usage,
    approximate_tokens,
    parse_price,
    parse_prices,
)
from kaoshi.analysis.estimate import worst_margin
from kaoshi.api.evaluation import ModelLike, as_model, chat_before_load, model_spec_text
from kaoshi.api.summary import StoreLike, open_store
from kaoshi.data.model import Exam
from kaoshi.models.base import Model
from kaoshi.models.registry import resolve_model
from kaoshi.prompts.base import Prompt
from kaoshi.runner.cache import CachePolicy, cached_for
from kaoshi.runner.config import RunConfig
from kaoshi.runner.prepare import PreparedRun, prepare_run
from kaoshi.runner.run import plan_run
from kaoshi.runner.samples import PendingQuestion, new_tokens
from kaoshi.runner.spending import sample_cost
from kaoshi.store import Store
from kaoshi.store.opening import IN_MEMORY
from kaoshi.store.records import RunSpec

__all__ = [
    "APPROXIMATION",
    "Price",
    "PriceList",
    "RunEstimate",
    "Usage",
    "estimate_prepared",
    "parse_price",
    "parse_prices",
    "priced_extractor_usage",
    "priced_judge_usage",
    "priced_usage",
    "read_extractor_usage",
    "read_judge_usage",
    "read_usage",
    "run_ledger",
    "run_usage",
    "sample_cost",
    "usage_json",
    "worst_margin",
]
# Tokens a chat message adds around its text (its role and separators), as an estimate counts them.
_PER_MESSAGE = 4


@dataclass(frozen=True)
class RunEstimate:
    """A run as it would be sent: its requests (those still to ask, when the run is stored in part), their
    prompt tokens (counted with the model's tokenizer, or APPROXIMATION) and their answers' budget of new
    tokens; with a price, what they cost, from the prompts alone to every answer using its whole budget."""

    run: str
    model: str
    requests: int
    stored: int  # answers already stored, not asked again
    prompt_tokens: int
    budget_tokens: int
    counted_by: str  # "the model's tokenizer", or APPROXIMATION
    price: Price | None = None
    batch: bool = False  # sent in batches (--batch): at the price's batch share

    @property
    def cost_range(self) -> tuple[float, float] | None:
        """(the prompts' cost, with every answer using its whole budget), no prompt token read from a
        provider's cache; None without a price."""
        if self.price is None:
            return None
        low = self.price.cost(self.prompt_tokens, 0, batch=self.batch)
        return low, self.price.cost(self.prompt_tokens, self.budget_tokens, batch=self.batch)

    def to_json(self) -> dict[str, Any]:
        costs = self.cost_range
        return {
            "run": self.run,
            "model": self.model,
            "requests": self.requests,
            "already_stored": self.stored,
            "prompt_tokens": self.prompt_tokens,
            "budget_tokens": self.budget_tokens,
            "counted_by": self.counted_by,
            **({"batch": True} if self.batch else {}),
            **({"price": self.price.to_json(), "cost": list(costs)} if self.price and costs else {}),
        }


def estimate_prepared(
    exam: Exam,
    model: ModelLike,
    options: RunConfig,
    *,
    run_name: str | None = None,
    store: StoreLike = None,
    price: Price | None = None,
    cache: CachePolicy | None = None,
    batch: bool = False,
) -> RunEstimate:
    """What `kaoshi run` with these options would send, sending nothing and writing nothing: the run is
    prepared and its prompts rendered as the run renders them (the model is loaded to fit and count them;
    a provider's model loads no weights), less the answers a stored run of that name already has and
    those the cache holds (`cache`, as the run would take them). `batch`: priced as batch requests."""
    given = as_model(model, options.backend)
    spec_text = model_spec_text(model, given)
    chat = chat_before_load(given, spec_text, options)
    prepared = prepare_run(exam, spec_text, options, chat=chat, run_name=run_name, notify=_quiet)
    loaded = given if given is not None else resolve_model(prepared.spec.model, options.backend)
    try:
        spec = (
            prepared.spec
            if prepared.chat_known
            else replace(prepared.spec, chat=loaded.default_chat_for(options.method))
        )
        pending, stored = _still_to_ask(store, prepared.name, prepared, spec, loaded, cache)
        counts = [_count(loaded, p.prompt) for p in pending]
        exact = all(count is not None for count in counts)
        prompt_tokens = sum(
            count if count is not None else _approximate(p.prompt)
            for count, p in zip(counts, pending, strict=True)
        )
        budget = sum(new_tokens(spec, p.question.type.value) for p in pending)
    finally:
        if given is None:
            loaded.close()
    return RunEstimate(
        prepared.name,
        spec.model,
        len(pending),
        stored,
        prompt_tokens,
        budget,
        "the model's tokenizer" if exact and pending else APPROXIMATION,
        price,
        batch,
    )


def _quiet(_: str) -> None:
    """An estimate's preparation says nothing: the run it would make says it when made."""


def _still_to_ask(
    store: StoreLike,
    name: str,
    prepared: PreparedRun,
    spec: RunSpec,
    model: Model,
    cache: CachePolicy | None,
) -> tuple[list[PendingQuestion], int]:
    """The requests the run would send, and the answers it would not ask again: those a stored run of
    this name has, and those it would take from the cache."""
    if store is None or (not isinstance(store, Store) and not Path(store).exists()):
        return plan_run(prepared.exam, prepared.template, spec, model, set())
    with open_store(store, read_only=True) as opened:
        known = opened.path != Path(IN_MEMORY) and opened.find_run(name) is not None
        finished = opened.finished_keys(name) if known else set()
        pending, stored = plan_run(prepared.exam, prepared.template, spec, model, finished)
        taken = cached_for(opened, name, spec, pending, cache or CachePolicy(), model)
    answered = {item.key for _, _, item in taken}
    return [item for item in pending if item.key not in answered], stored + len(answered)


def _count(model: Model, prompt: Prompt) -> int | None:
    return model.count_tokens(prompt.text, prompt.messages)


def _approximate(prompt: Prompt) -> int:
    if prompt.messages is None:
        return approximate_tokens(prompt.text)
    return sum(approximate_tokens(content) + _PER_MESSAGE for _, content in prompt.messages)


def read_usage(store: Store, run: str) -> Usage:
    """The tokens a stored run's answers used (every sample of k), as their servers counted them."""
    store.get_run(run)  # a StoreError naming the runs for an unknown one
    return Usage(*store.run_usage(run))


def run_usage(run: str, *, store: StoreLike = None) -> Usage:
    """read_usage on a store given as for kaoshi.load_run."""
    with open_store(store, read_only=True) as opened:
        return read_usage(opened, run)


def priced_usage(
    names: Sequence[str], prices: PriceList, *, store: StoreLike = None
) -> list[tuple[str, Usage, Price | None]]:
    """Each named run's usage with its model's price from `prices`, where the list has one (`kaoshi
    report --price`)."""
    with open_store(store, read_only=True) as opened:
        return [
            (name, read_usage(opened, name), prices.get(opened.get_run(name).spec.model)) for name in names
        ]


_BATCH_FIELDS = ("batched", "batch_prompt", "batch_completion", "batch_cached")


def read_judge_usage(store: Store, run: str) -> dict[str, Usage]:
    """The tokens the judges of a run's open answers used (the grades of every grader of the run), by
    judge model: each call's usage as its server said it (kaoshi.runner.judge keeps it with the round)."""
    found: dict[str, list[int]] = {}
    for grader in store.graders(run):
        for grade in store.grades(run, grader).values():
            for judged in grade.rounds:
                counts = found.setdefault(str(judged.get("judge")), [0] * 9)
                said = [judged.get(name) or 0 for name in ("tokens_in", "tokens_out", "tokens_cached")]
                counts[0] += 1
                counts[1:4] = [total + value for total, value in zip(counts[1:4], said, strict=True)]
                counts[4] += judged.get("tokens_in") is None and judged.get("tokens_out") is None
                if judged.get("batch_id") is not None:  # a call a batch answered (kaoshi judge --batch)
                    counts[5] += 1
                    counts[6:9] = [total + value for total, value in zip(counts[6:9], said, strict=True)]
    fields = ("answers", "prompt", "completion", "cached", "uncounted", *_BATCH_FIELDS)
    return {judge: Usage(**dict(zip(fields, counts, strict=True))) for judge, counts in found.items()}


def priced_judge_usage(
    names: Sequence[str], prices: PriceList, *, store: StoreLike = None
) -> list[tuple[str, str, Usage, Price | None]]:
    """Each named run's judges' usage (run, judge model, usage, its price where the list has one): the
    judge role of the ledger (`kaoshi report --price`)."""
    with open_store(store, read_only=True) as opened:
        return [
            (name, judge, usage, prices.get(judge))
            for name in names
            for judge, usage in read_judge_usage(opened, name).items()
        ]


def read_extractor_usage(store: Store, run: str) -> Usage | None:
    """The tokens of the LLM extractor's calls about a run's answers (the ledger's extractor role), as
    their server said them; None for a run that asked no extractor."""
    usage = Usage(*store.extractor_usage(run))
    return usage if usage.answers else None


def priced_extractor_usage(
    names: Sequence[str], prices: PriceList, *, store: StoreLike = None
) -> list[tuple[str, str, Usage, Price | None]]:
    """Each named run's extractor usage (run, extractor model, usage, its price where the list has one),
    for the runs whose extractor was asked (`kaoshi report --price`)."""
    found = []
    with open_store(store, read_only=True) as opened:
        for name in names:
            extractor = opened.get_run(name).spec.llm_extractor
            usage = read_extractor_usage(opened, name) if extractor else None
            if extractor and usage is not None:
                found.append((name, extractor, usage, prices.get(extractor)))
    return found


def run_ledger(
    store: Store, run: str, prices: PriceList | None = None
) -> list[tuple[str, Usage, Price | None]]:
    """A run's ledger by role: the evaluated model's answers, each judge's calls, the LLM extractor's
    calls (those with any call), each with its model's price where `prices` has one (the viewer's run page,
    `kaoshi report --price`)."""
    spec = store.get_run(run).spec
    priced = prices.get if prices is not None else (lambda _: None)
    rows: list[tuple[str, Usage, Price | None]] = [
        (f"model {spec.model}", read_usage(store, run), priced(spec.model))
    ]
    for judge, usage in read_judge_usage(store, run).items():
        rows.append((f"judge {judge}", usage, priced(judge)))
    extracted = read_extractor_usage(store, run) if spec.llm_extractor else None
    if spec.llm_extractor and extracted is not None:
        rows.append((f"extractor {spec.llm_extractor}", extracted, priced(spec.llm_extractor)))
    return rows


def usage_json(usage: Usage, price: Price | None) -> dict[str, Any]:
    """A run's usage, and with a price its cost, as `kaoshi report --price --format json` gives it."""
    return {**usage.to_json(), **({"price": price.to_json(), "cost": usage.cost(price)} if price else {})}


def dumps_estimate(estimate: RunEstimate) -> str:
    return json.dumps(estimate.to_json(), ensure_ascii=False, indent=2)
