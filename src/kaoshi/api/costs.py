"""What a run costs, before and after: `kaoshi run --estimate` (its requests and prompt tokens from the exact
prompts it would send, and the cost range its answers' budget allows) and a stored run's usage (`kaoshi
report --price`: kaoshi.api.ledger, which reads the store alone)."""

from __future__ import annotations

import json
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
from kaoshi.api.ledger import (
    priced_extractor_usage,
    priced_judge_usage,
    priced_usage,
    read_extractor_usage,
    read_judge_usage,
    read_usage,
    run_ledger,
    run_usage,
    usage_json,
)
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


def dumps_estimate(estimate: RunEstimate) -> str:
    return json.dumps(estimate.to_json(), ensure_ascii=False, indent=2)
