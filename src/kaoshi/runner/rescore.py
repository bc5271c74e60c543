"""Re-score a stored run: extraction and grading again from the raw responses, into a new run.

No model is called; the original run is left as it is. Useful after changing the multiple-choice policy
or upgrading the extractor: nothing is paid for twice.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from kaoshi.data.model import Question
from kaoshi.models.base import ModelOutput
from kaoshi.runner.samples import score_record
from kaoshi.store.records import RunSpec
from kaoshi.store.sqlite import Store, StoreError


@dataclass(frozen=True)
class RescoreOutcome:
    samples: int
    changed: int
    seconds: float


def rescore_run(store: Store, source: str, target: str, **changes: object) -> RescoreOutcome:
    """Copy `source` into `target` with spec `changes` (e.g. multi_policy="partial"), re-extracting and
    re-grading every sample. Errored samples stay errors (there is no response to read)."""
    original = store.get_run(source)
    if store.find_run(target) is not None:
        raise StoreError(f"run {target!r} already exists; choose another --run-name")
    unknown = set(changes) - set(original.spec.to_json())
    if unknown:
        raise StoreError(f"cannot change {', '.join(sorted(unknown))} when re-scoring")
    spec: RunSpec = replace(original.spec, rescored_from=source, **changes)  # type: ignore[arg-type]
    started = time.perf_counter()
    store.open_run(target, spec)
    changed = 0
    samples = store.samples(source)
    for sample in samples:
        if sample.status != "error":
            question = Question.from_content(sample.question)
            output = ModelOutput(sample.question_id, text=sample.response, logprobs=sample.logprobs)
            echo = None if spec.chat else sample.prompt  # chat prompts are stored as messages JSON
            updated = score_record(sample, question, output, spec, echo)
            changed += (updated.answer, updated.status, updated.score) != (
                sample.answer,
                sample.status,
                sample.score,
            )
            sample = updated
        store.add_sample(target, sample)
    store.finish_run(target)
    return RescoreOutcome(len(samples), changed, time.perf_counter() - started)
