"""A stored run's ledger: the tokens its answers, its judges and its LLM extractor used, as their servers
counted them, and with a price list what they cost (`kaoshi report --price`, the viewer's ledger page). It
reads the store alone: a report imports none of the run's machinery (kaoshi.api.costs estimates runs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kaoshi.analysis.cost import Price, PriceList, Usage, parse_prices
from kaoshi.api.summary import StoreLike, open_store
from kaoshi.store import Store

__all__ = [
    "Price",
    "PriceList",
    "Usage",
    "parse_prices",
    "priced_extractor_usage",
    "priced_judge_usage",
    "priced_usage",
    "read_extractor_usage",
    "read_judge_usage",
    "read_usage",
    "run_ledger",
    "run_usage",
    "usage_json",
]


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
