"""`kaoshi.judge`: grade a stored run's open answers with an LLM judge (careful / general / debate)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kaoshi.api.evaluation import ModelLike, as_model, backend_options
from kaoshi.api.summary import StoreLike, keep_counts, open_store
from kaoshi.errors import InputError
from kaoshi.models.base import Model
from kaoshi.models.registry import resolve_model
from kaoshi.prompts.judge import JUDGE_MODES
from kaoshi.runner.batching import BatchPolicy
from kaoshi.runner.judge import JudgeOutcome, JudgeSetup, judge_run, pending
from kaoshi.runner.keywords import BackendKeywords, Unpack
from kaoshi.store import GradeRecord


def judge(
    run: str,
    judge: ModelLike,
    *,
    store: StoreLike = None,
    mode: str = "careful",
    second_judge: ModelLike | None = None,
    max_new_tokens: int = 512,
    on_grade: Callable[[GradeRecord], None] | None = None,
    on_plan: Callable[[int, int], None] | None = None,
    batch: BatchPolicy | None = None,
    **backend: Unpack[BackendKeywords],
) -> JudgeOutcome:
    """Grade the run's open answers not yet graded by this judge setup; every judge call is stored, so
    judging resumes. Grades are kept per grader (`careful:<judge>`, `debate:<a>+<b>`); reports fold in
    the most recent one. No judge is loaded when nothing is left to grade.

    judge / second_judge: a model spec, a `kaoshi.models.Model` or a callable prompt -> reply (a loaded
    spec is closed at the end). **backend: `kaoshi.models.ModelOptions` fields (seed, batch_size, base_url,
    ...; no adapter: a judge is the model it names).
    on_plan(total, done): before each round of judge calls (a debate has two), once the judges are loaded:
    the open answers the round covers and how many have its grade already. on_grade: each grade as it is
    stored, one per judge call (a debate's first round gives a PARTIAL grade). batch: the judge calls go
    through the judges' batch endpoint at its batch price (kaoshi.api.evaluation.BatchPolicy), waiting for
    the batches; interrupted, the same call polls them again."""
    if mode not in JUDGE_MODES:
        raise InputError(f"unknown judge mode {mode!r} (known: {', '.join(JUDGE_MODES)})")
    if second_judge is not None and mode != "debate":
        raise InputError("--second-judge is for --mode debate")
    if backend.get("adapter") is not None:
        raise InputError("a judge is loaded without an adapter: --adapter is for the run's own model")
    options = backend_options(backend)
    first_given, second_given = as_model(judge, options), as_model(second_judge, options)
    setup = JudgeSetup(
        mode,
        _spec(judge, first_given),
        None if second_judge is None else _spec(second_judge, second_given),
        max_new_tokens,
    )
    with open_store(store) as opened:
        opened.get_run(run)
        todo, total = pending(opened, run, setup)
        if not todo:
            return JudgeOutcome(setup.grader, graded=0, unparsed=0, errors=0, already=total, seconds=0.0)
        loaded: list[Model] = []
        try:
            first = first_given or _load(setup.judge, options, loaded)
            second = None
            if setup.second_judge is not None:
                second = second_given or _load(setup.second_judge, options, loaded)
            outcome = judge_run(opened, run, setup, first, second, on_grade, on_plan, batch)
        finally:
            for model in loaded:
                model.close()
        # the run's numbers fold in this judge's grades now: counted and kept, so that the next `kaoshi
        # report RUN` reads them
        keep_counts(opened, run)
        return outcome


def _spec(given: ModelLike, model: Model | None) -> str:
    return given if isinstance(given, str) else model.spec if model is not None else ""


def _load(spec: str, options: Any, loaded: list[Model]) -> Model:
    model = resolve_model(spec, options)
    loaded.append(model)
    return model
