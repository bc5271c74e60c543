"""`kaoshi.rescore`: a stored run re-extracted and re-graded into a new run, without asking the model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from kaoshi.api.evaluation import ModelLike, as_model
from kaoshi.api.summary import StoreLike, keep_counts, open_store
from kaoshi.models.base import ModelOptions
from kaoshi.models.registry import resolve_model
from kaoshi.runner.config import RunConfig
from kaoshi.runner.rescore import RescoreOutcome, rescore_run
from kaoshi.store import SampleRecord


def rescore(
    run: str,
    run_name: str,
    *,
    store: StoreLike = None,
    multi_policy: str | None = None,
    partial_credit: float | None = None,
    llm_extractor: ModelLike | Literal[False] | None = None,
    on_plan: Callable[[int, int], None] | None = None,
    on_sample: Callable[[SampleRecord], None] | None = None,
) -> RescoreOutcome:
    """Copy `run` into `run_name` with its answers read and graded again (after changing the
    multiple-choice policy, or upgrading the extractor); the evaluated model is never called.

    multi_policy, partial_credit: None keeps the value the run recorded.
    llm_extractor: None keeps the run's own (its stored replies are read again, no call); False reads
    with the rules only; a model spec, Model or callable is asked about the answers the rules leave
    unparsed (a spec it loads is closed at the end).
    on_plan(total, 0): the samples to re-score, before the first is stored; on_sample: each re-scored
    sample as it is stored."""
    RunConfig(
        multi_policy=multi_policy, partial_credit=0.5 if partial_credit is None else partial_credit
    ).check()
    changes: dict[str, object] = {}
    if multi_policy is not None:
        changes["multi_policy"] = multi_policy
    if partial_credit is not None:
        changes["partial_credit"] = partial_credit
    extractor = None
    loaded = False
    if llm_extractor is False:
        changes["llm_extractor"] = None
    elif llm_extractor is not None:
        extractor = as_model(llm_extractor, ModelOptions())
        if extractor is None:  # a spec string
            assert isinstance(llm_extractor, str)
            extractor, loaded = resolve_model(llm_extractor, ModelOptions()), True
        changes["llm_extractor"] = extractor.spec
    try:
        with open_store(store) as opened:
            outcome = rescore_run(
                opened, run, run_name, extractor, on_plan=on_plan, on_sample=on_sample, **changes
            )
            keep_counts(opened, run_name)  # the next `kaoshi report` of the new run reads them
            return outcome
    finally:
        if loaded and extractor is not None:
            extractor.close()
