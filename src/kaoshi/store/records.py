"""What the store holds: the frozen run spec, run records and one sample per (run, question)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from kaoshi.data.model import Gold


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines a run's numbers; written beside its results."""

    benchmark: str
    data: str | None
    split: str | None
    fingerprint: str
    n_questions: int
    prompt: str
    prompt_version: int
    shots: int
    model: str
    method: str
    seed: int
    limit: int | None
    max_new_tokens: int
    on_invalid: str = "fail"
    clean: bool = False
    chat: bool = False
    system: str | None = None
    exemplars: tuple[str, ...] = ()  # pinned exemplar ids (--exemplars)
    llm_extractor: str | None = None  # model spec asked to read answers the rules left unparsed
    multi_policy: str = "exact"  # multiple-choice scoring: exact / partial / f1
    partial_credit: float = 0.5  # fraction of the points a correct subset earns under "partial"
    rescored_from: str | None = None  # the run whose stored responses this run re-scored
    shuffle_seed: int | None = None  # --shuffle-options: the seed the options were permuted with
    members: tuple[str, ...] = ()  # a vote: the runs whose answers it combines
    # kaoshi run --adapter: the LoRA adapter's path, base model, training data and overlap with this exam
    adapter: dict[str, Any] = field(default_factory=dict)
    # subject -> standard score (LHMKE): reports scale each subject's points to it. Only reporting
    # depends on it, so it may change when a run resumes.
    standard_scores: dict[str, float] = field(default_factory=dict)
    # Backend settings that can change results (base URL, dtype, context length); never an API key.
    model_settings: dict[str, Any] = field(default_factory=dict)
    kaoshi_version: str = ""

    # Fields that may change between a run and its resumption without changing its numbers.
    RESUMABLE_CHANGES = frozenset({"kaoshi_version", "standard_scores"})

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> RunSpec:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in value.items() if k in known}
        for name in ("exemplars", "members"):  # JSON has lists; the spec compares as a tuple
            if name in values:
                values[name] = tuple(values[name])
        return cls(**values)

    def differences(self, other: RunSpec) -> list[tuple[str, Any, Any]]:
        mine, theirs = self.to_json(), other.to_json()
        return [
            (name, mine[name], theirs[name])
            for name in mine
            if name not in self.RESUMABLE_CHANGES and mine[name] != theirs[name]
        ]


@dataclass(frozen=True)
class RunRecord:
    name: str
    spec: RunSpec
    status: str  # running / finished
    created_at: float
    finished_at: float | None
    n_samples: int


@dataclass(frozen=True)
class SampleRecord:
    question_id: str
    position: int  # the question's place in the exam, for stable ordering
    qtype: str
    gold: Gold
    points: float
    subject: str | None
    domain: str | None
    category: str | None
    question: dict[str, Any]  # the question's content, so re-scoring needs no data file
    prompt: str  # the text sent, or the chat messages as JSON
    status: str  # ok / unparsed / ambiguous / error
    shots: int = 0  # exemplars actually in the prompt (fewer than asked when the context is short)
    extracted_by: str = "rules"  # rules / loglik / llm
    extractor_response: str | None = None  # the LLM extractor's raw reply, when it was asked
    response: str | None = None
    logprobs: dict[str, float] | None = None
    answer: Gold = None
    correct: bool | None = None
    score: float | None = None
    latency_s: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class GradeRecord:
    """One grader's grade of one open answer (an LLM judge setup, kept beside the run's samples).

    score is on the judge's 0-10 scale; points is that share of the question's points. rounds holds, per
    judge call, the judge spec, the prompt, the raw reply and the parsed score (two rounds in a debate).
    status: ok / unparsed / error, or `partial` when a debate's first round is stored and its second is
    still to come.
    """

    question_id: str
    grader: str
    status: str
    score: float | None
    points: float | None
    rounds: tuple[dict[str, Any], ...] = ()
