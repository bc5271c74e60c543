"""RunConfig: every option of a run, written once. `kaoshi.evaluate(exam, model, config, **overrides)` takes
it (or its fields by name, typed by kaoshi.runner.keywords), and `kaoshi run`'s options are generated from
its fields' metadata (kaoshi/option_fields.py, kaoshi/cli/config_options.py): a field is an option of the
same name."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from kaoshi.errors import InputError
from kaoshi.models.base import ModelOptions
from kaoshi.option_fields import cli, nested
from kaoshi.results.standard import STANDARD_SCORES_OPTION
from kaoshi.runner.samples import METHODS
from kaoshi.runner.shards import parse_shard
from kaoshi.scoring import MULTI_POLICIES


def budget_help() -> str:
    """Each prompt's generation budget, for `run --help` (read when the help is made: a benchmark or
    template registered later is listed too)."""
    # Every template by name imports each benchmark and jinja2 (about 60 ms), which only the help of
    # `kaoshi run` reads, not a command that reads a run's settings.
    # Late import: `kaoshi report` and the other readers of RunConfig start without them.
    from kaoshi.benchmarks.templates import all_templates

    by_budget: dict[str, list[str]] = {}
    for name, template in all_templates().items():  # built once, not once per name
        by_budget.setdefault(template.budget.describe(), []).append(name)
    return "; ".join(f"{', '.join(names)}: {budget}" for budget, names in by_budget.items())


def _max_new_tokens_help() -> str:
    return (
        f"new tokens for every generated answer (default: the prompt's own budget: {budget_help()}; these "
        "are for models that answer directly: a reasoning model thinks first and needs thousands, e.g. "
        "8192 or more)"
    )


def parse_switch(text: str) -> bool:
    """`on` / `off` (also true/false, 1/0) as a bool; ValueError otherwise."""
    value = {"on": True, "true": True, "1": True, "off": False, "false": False, "0": False}.get(
        text.strip().lower()
    )
    if value is None:
        raise ValueError(f"expected on or off, got {text!r}")
    return value


def comma_ids(text: str) -> tuple[str, ...]:
    """ "a, b,c" as ("a", "b", "c")."""
    return tuple(i.strip() for i in text.split(",") if i.strip())


@dataclass(frozen=True)
class RunConfig:
    """How a run is made, besides the exam and the model: each field is the `kaoshi run` option of that
    name (its help is the field's metadata), and the same config records the same run spec.

    backend: what the model is loaded with (kaoshi.models.ModelOptions: seed, batch_size, adapter,
    base_url, device, dtype, ...); the run reads its seed and adapter from there. A path may be given as
    a str, exemplars as any sequence and shard as "I/N"; they are stored as Path, tuple and (I, N).
    """

    method: str = field(default="generate", metadata=cli(choices=METHODS))
    prompt: str | None = field(
        default=None, metadata=cli("template name or file:PATH.j2 (default: the benchmark's own)")
    )
    shots: int | None = field(
        default=None, metadata=cli("solved exemplars from the dev pool (default: the template's)", type=int)
    )
    chat: bool | None = field(
        default=None,
        metadata=cli(
            "send chat messages (--chat) or plain text (--no-chat); default: the backend's",
            action="negatable",
        ),
    )
    system: str | None = field(
        default=None, metadata=cli("a system prompt (chat) or text before the prompt (completion)")
    )
    # question ids pinned as the solved exemplars
    exemplars: tuple[str, ...] = field(
        default=(),
        metadata=cli("comma-separated question ids to use as the solved exemplars", type=comma_ids),
    )
    exemplars_file: Path | None = field(
        default=None,
        metadata=cli(
            "solved exemplars from a kaoshi JSONL file, for any template (its hash is in the run spec)",
            type=Path,
            metavar="FILE",
        ),
    )
    # Per subject, as lm-evaluation-harness's --limit is per task: a smoke test sees every subject.
    limit: int | None = field(
        default=None,
        metadata=cli(
            "evaluate only the first N questions of each subject (of each domain where questions have no "
            "subject, e.g. QualBench; questions with neither count as one group), in the exam's order",
            type=int,
            metavar="N",
        ),
    )
    limit_total: int | None = field(
        default=None,
        metadata=cli("evaluate at most the first N questions in all (after --limit)", type=int, metavar="N"),
    )
    # a stratified random sample of the exam (kaoshi.data.subsets), drawn with `seed`
    sample: int | None = field(
        default=None,
        metadata=cli(
            "evaluate N questions drawn at random with --seed, stratified by subject (else domain, else "
            "type); the report estimates the full exam's accuracy from them, with an interval",
            type=int,
            metavar="N",
        ),
    )
    # a seed that permutes each choice question's options
    shuffle_options: int | None = field(
        default=None,
        metadata=cli(
            "permute each choice question's options (contamination check; see kaoshi contamination)",
            type=int,
            metavar="SEED",
        ),
    )
    # (I, N): only shard I of N of the questions (kaoshi merge)
    shard: tuple[int, int] | None = field(
        default=None,
        metadata=cli(
            "evaluate only shard I of N of the questions (by question id; join with kaoshi merge)",
            parse=parse_shard,
            metavar="I/N",
        ),
    )
    # its options (--seed, --batch-size, --adapter, then the backends' sections) are listed from here
    backend: ModelOptions = field(default_factory=ModelOptions, metadata=nested())
    allow_overlap: bool = field(
        default=False,
        metadata=cli(
            "evaluate even questions the adapter was trained on (recorded in the run spec)",
            action="store_true",
        ),
    )
    # Decoding of generated answers (kaoshi.models.Sampling): greedy unless set.
    temperature: float = field(
        default=0.0,
        metadata=cli(
            "sampling temperature for generated answers (default 0: greedy; reasoning models' publishers "
            "sample, e.g. 0.6 with --top-p 0.95)",
            type=float,
        ),
    )
    top_p: float | None = field(
        default=None, metadata=cli("nucleus sampling: keep this much mass", type=float)
    )
    top_k: int | None = field(default=None, metadata=cli("sample among the K likeliest tokens", type=int))
    thinking: bool | None = field(
        default=None,
        metadata=cli(
            "switch a model's thinking on or off (the chat template's enable_thinking; for servers "
            "chat_template_kwargs.enable_thinking and enable_thinking); default: the model's own",
            parse=parse_switch,
            metavar="on|off",
        ),
    )
    repeats: int = field(
        default=1,
        metadata=cli(
            "ask each question K times (avg@k, maj@k, pass@k in the report; use with --temperature)",
            type=int,
            metavar="K",
        ),
    )
    reuse_from: str | None = field(
        default=None,
        metadata=cli(
            "take the answers of run NAME that finished within their budget and ask only the others (e.g. "
            "again with a larger --max-new-tokens)",
            metavar="NAME",
        ),
    )
    # None keeps the prompt's own budget
    max_new_tokens: int | None = field(
        default=None, metadata=cli(_max_new_tokens_help, type=int, metavar="N")
    )
    max_new_tokens_open: int | None = field(
        default=None,
        metadata=cli(
            "new tokens for open (subjective) answers (default: --max-new-tokens, else the protocol's)",
            type=int,
            metavar="N",
        ),
    )
    # None takes the exam's own rule (GAOKAO-Bench: partial), else exact
    multi_policy: str | None = field(
        default=None,
        metadata=cli(
            "multiple choice: exact set, partial credit for a correct subset, or per-option F1 "
            "(default: {default})",
            choices=MULTI_POLICIES,
            default_help="the benchmark's own rule, gaokao-bench: partial; else exact",
        ),
    )
    partial_credit: float = field(
        default=0.5,
        metadata=cli("share of the points a correct subset earns (partial; default: {default})", type=float),
    )
    # subject -> standard score, over the exam file's own
    standard_scores: Mapping[str, float] = field(default_factory=dict, metadata=STANDARD_SCORES_OPTION)
    llm_extractor: str | None = field(
        default=None,
        metadata=cli("a model that reads answers the rules leave unparsed (off by default)", metavar="SPEC"),
    )

    def __post_init__(self) -> None:
        given: Mapping[str, Any] = {
            "exemplars": tuple(self.exemplars),
            "exemplars_file": None if self.exemplars_file is None else Path(self.exemplars_file),
            "shard": parse_shard(self.shard) if isinstance(self.shard, str) else self.shard,
            "standard_scores": dict(self.standard_scores or {}),
        }
        for name, value in given.items():
            object.__setattr__(self, name, value)
        if not isinstance(self.backend, ModelOptions):
            raise TypeError(f"backend must be a kaoshi.models.ModelOptions, not {type(self.backend)}")

    @property
    def seed(self) -> int:
        """The run's seed (the backend's: it seeds the model too): chooses the exemplars and the sample,
        and each sample's seed derives from it."""
        return self.backend.seed

    @property
    def adapter(self) -> Path | None:
        """The LoRA adapter the model is loaded with (the backend's), as the run spec records it."""
        return None if self.backend.adapter is None else Path(self.backend.adapter)

    def override(self, **overrides: Any) -> RunConfig:
        """This config with some options changed: its own fields, or the backend's (ModelOptions) by name;
        TypeError naming the close and the known options for any other name."""
        unknown = sorted(set(overrides) - set(RUN_OPTIONS) - set(BACKEND_OPTIONS))
        if unknown:
            raise unknown_option(unknown[0], RUN_OPTIONS)
        own = {name: value for name, value in overrides.items() if name in RUN_OPTIONS}
        backend = {name: value for name, value in overrides.items() if name in BACKEND_OPTIONS}
        if backend:
            own["backend"] = replace(own.get("backend", self.backend), **backend)
        return replace(self, **own) if own else self

    def check(self) -> None:
        """InputError naming the option when a value cannot be used (the backend's are checked when its
        ModelOptions is made)."""
        if self.method not in METHODS:
            raise InputError(f"unknown method {self.method!r} (known: {', '.join(METHODS)})")
        if self.shots is not None and self.shots < 0:
            raise InputError("--shots must be >= 0")
        if self.multi_policy is not None and self.multi_policy not in MULTI_POLICIES:
            raise InputError(
                f"unknown multi policy {self.multi_policy!r} (known: {', '.join(MULTI_POLICIES)})"
            )
        if not 0 <= self.partial_credit <= 1:
            raise InputError("--partial-credit must be between 0 and 1")
        if not self.temperature >= 0:
            raise InputError(f"--temperature must be >= 0, got {self.temperature:g}")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise InputError(f"--top-p must be in (0, 1], got {self.top_p:g}")
        decoding = [
            flag
            for flag, given in (
                ("--temperature", self.temperature != 0),
                ("--top-p", self.top_p is not None),
                ("--top-k", self.top_k is not None),
                ("--thinking", self.thinking is not None),  # off is a setting too
            )
            if given
        ]
        if decoding and self.method != "generate":
            raise InputError(
                f"{', '.join(decoding)}: how generated answers are decoded; a --method loglik run ranks "
                "its answers (use --method generate)"
            )
        if self.repeats > 1 and self.method != "generate":
            raise InputError(
                "--repeats asks k generated answers a question; a --method loglik run ranks the same "
                "answers each time (use --method generate)"
            )
        for name in (
            "limit", "limit_total", "sample", "max_new_tokens", "max_new_tokens_open", "top_k", "repeats"
        ):  # fmt: skip
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise InputError(f"--{name.replace('_', '-')} must be > 0")
        if self.shard is not None and not 1 <= self.shard[0] <= self.shard[1]:
            raise InputError(f"--shard must be I/N with 1 <= I <= N, got {self.shard[0]}/{self.shard[1]}")
        if self.sample is not None:
            # a sample estimates the exam it is drawn from: of a smoke test's first questions, or of one
            # shard, it would estimate neither
            given = [flag for flag, value in (("--limit", self.limit), ("--limit-total", self.limit_total),
                                              ("--shard", self.shard)) if value is not None]  # fmt: skip
            if given:
                raise InputError(f"--sample draws from the whole exam: leave out {', '.join(given)}")
        if self.allow_overlap and self.adapter is None:
            raise InputError("--allow-overlap is for runs with --adapter")


# The names RunConfig.override (and so kaoshi.evaluate) takes: its own fields, and the backend's
# (ModelOptions) fields; kaoshi.load_model takes the backend's. No name is both
# (tests/unit/test_run_keywords.py).
RUN_OPTIONS: tuple[str, ...] = tuple(f.name for f in fields(RunConfig))
BACKEND_OPTIONS: tuple[str, ...] = tuple(f.name for f in fields(ModelOptions))


def unknown_option(name: str, run_options: Sequence[str] = ()) -> TypeError:
    """The TypeError for an option that is neither one of `run_options` nor a backend's: the known ones
    listed, and the close ones (a misspelling) named."""
    groups = {"run options": run_options, "backend options": BACKEND_OPTIONS}
    listed = "; ".join(f"{group}: {', '.join(sorted(names))}" for group, names in groups.items() if names)
    close = get_close_matches(name, [*run_options, *BACKEND_OPTIONS], n=3)
    guess = f"; did you mean {' or '.join(repr(known) for known in close)}?" if close else ""
    return TypeError(f"unknown option {name!r} ({listed}){guess}")
