"""From an exam, a model spec and the run's options to what a run needs: its name, template and spec.

`kaoshi.evaluate` and `kaoshi run` both go through `prepare_run`, so the same options record the same run
spec (and so resume the same run) whichever way a run is started."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from kaoshi.benchmarks import default_template_name, get_template
from kaoshi.benchmarks.loading import load_exemplars
from kaoshi.data.model import Exam
from kaoshi.data.shuffle import shuffle_exam
from kaoshi.errors import InputError
from kaoshi.finetune.adapter import check_overlap, run_record
from kaoshi.models.base import ModelOptions
from kaoshi.models.registry import adapter_backends, spec_capabilities
from kaoshi.models.secrets import strip_credentials
from kaoshi.prompts import RenderOptions, Template
from kaoshi.prompts.registry import exemplars_for_run
from kaoshi.runner.asked import sample_record
from kaoshi.runner.config import RunConfig
from kaoshi.runner.shards import shard_count, shard_name
from kaoshi.scoring.grade import MultiPolicy
from kaoshi.store.records import Method, RunSpec
from kaoshi.store.sqlite import Store
from kaoshi.version import __version__

Notify = Callable[[str], None]


@dataclass(frozen=True)
class PreparedRun:
    """A run ready to start. `chat_known` is False when only the loaded model knows its chat form (the
    spec then says False until the model is loaded, and resuming checks everything but chat)."""

    name: str
    exam: Exam
    template: Template
    spec: RunSpec
    chat_known: bool


@dataclass(frozen=True)
class PromptSetup:
    """How a run's prompts are made: the exam with its exemplar pool, the template, the shots asked for
    and the exemplar ids pinned (asked for, or a template's fixed demos found once for the whole run)."""

    exam: Exam
    template: Template
    shots: int
    exemplars: tuple[str, ...]
    exemplars_digest: str | None  # the content hash of options.exemplars_file

    def render_options(self, chat: bool, system: str | None) -> RenderOptions:
        return RenderOptions(self.shots, chat, system, self.exemplars)


def prompt_setup(exam: Exam, options: RunConfig, notify: Notify) -> PromptSetup:
    """The template (options.prompt, else the benchmark's own), shots and exemplars for `exam`."""
    if options.shots is not None and options.shots < 0:
        raise InputError("--shots must be >= 0")
    template = get_template(options.prompt or default_template_name(str(exam.metadata.get("benchmark", ""))))
    shots = options.shots
    if shots is None:
        shots = len(options.exemplars) if options.exemplars else template.default_shots
    digest = None
    if options.exemplars_file is not None:
        pool, digest = load_exemplars(options.exemplars_file)
        exam = replace(exam, fewshot=pool)
    for question_id in options.exemplars:  # before any run is opened: a typo leaves nothing behind
        exam.question(question_id)
    pinned, notes = exemplars_for_run(template, exam, tuple(options.exemplars))
    for note in notes:
        notify(f"warning: {note}")
    return PromptSetup(exam, template, shots, pinned, digest)


def default_run_name(exam_name: str, split: str | None, model: str, method: str, shots: int) -> str:
    """`<exam>[-<split>]-<model>-<method>[-<N>shot]`, made safe for a file name."""
    parts = [exam_name, *([split] if split else []), model, method, *([f"{shots}shot"] if shots else [])]
    raw = "-".join(parts)
    return re.sub(r"[^\w.\-]+", "_", raw)


def sampling_suffix(options: RunConfig) -> str:
    """What a default run name adds for decoding set away from greedy and for k samples a question
    (`-t0.6-p0.95-think-x5`): a sampled run and the greedy one are different runs."""
    parts = []
    if options.temperature:
        parts.append(f"t{options.temperature:g}")
    if options.top_p is not None:
        parts.append(f"p{options.top_p:g}")
    if options.top_k is not None:
        parts.append(f"topk{options.top_k}")
    if options.thinking is not None:
        parts.append("think" if options.thinking else "nothink")
    if options.seed and (options.temperature or options.repeats > 1):
        parts.append(f"seed{options.seed}")
    if options.repeats > 1:
        parts.append(f"x{options.repeats}")
    return "".join(f"-{part}" for part in parts)


def limit_suffix(per_subject: int | None, total: int | None) -> str:
    """`-limit<N>` (--limit N) and `-total<N>` (--limit-total N), appended to a default run name: a smoke
    test and the full run are different runs."""
    suffix = "" if per_subject is None else f"-limit{per_subject}"
    return suffix if total is None else f"{suffix}-total{total}"


def recorded_settings(options: ModelOptions) -> dict[str, object]:
    """The backend settings that can change a run's numbers, for the run spec (never a secret)."""
    settings = {
        # never a password or key: the spec is shown by `runs`, reports and the HTML report
        "base_url": recorded_base_url(options.base_url),
        "dtype": options.dtype,
        "max_length": options.max_length,
        "trust_remote_code": options.trust_remote_code,
        "extra_body": dict(options.extra_body) if options.extra_body else None,
    }
    return {k: v for k, v in settings.items() if v not in (None, False, "auto")}


def recorded_base_url(base_url: str | tuple[str, ...] | None) -> str | list[str] | None:
    """One endpoint as given; several as a sorted list (the order they are given in changes nothing)."""
    if not base_url:
        return None
    if isinstance(base_url, str):
        return strip_credentials(base_url.rstrip("/"))
    urls = sorted({strip_credentials(url.rstrip("/")) for url in base_url})
    return urls[0] if len(urls) == 1 else urls


def _warn_of_settings_in_metadata(exam: Exam, notify: Notify) -> None:
    """A loader that still puts a run setting in the exam's free-form metadata (how a plugin said it before
    ExamSettings) is told that it is not read, where it says otherwise than the exam's settings."""
    for key in ("multi_policy", "standard_scores"):
        if key in exam.metadata and exam.metadata[key] != getattr(exam.settings, key):
            notify(
                f"warning: the exam's metadata sets {key}={exam.metadata[key]!r}, which no run reads: "
                f"a loader sets it as Exam(settings=ExamSettings({key}=...)) (kaoshi.data)"
            )


def prepare_run(
    exam: Exam,
    model: str,
    options: RunConfig,
    *,
    chat: bool | None,
    run_name: str | None = None,
    notify: Notify,
) -> PreparedRun:
    """The exam as evaluated (limited, shuffled, with the exemplar pool), its template and the run spec.

    model: the model's spec string as recorded. chat: the run's chat form when known before loading the
    model (options.chat, else the backend's default where its class says it), else None. run_name: None
    names the run by default_run_name, with the limits, shuffle seed and shard appended."""
    options.check()
    exam = exam.limited(options.limit_total, per_subject=options.limit)
    if options.shuffle_options is not None:
        exam = shuffle_exam(exam, options.shuffle_options)
    # A shard renders its prompts from the whole exam (exemplars, a template's demos) and asks only its
    # questions (runner/run.py), so its prompts and spec are those of a one-process run.
    asked = None if options.shard is None else shard_count(exam, *options.shard)
    # a sample too asks its part of the exam and renders its prompts from the whole of it
    sample = None if options.sample is None else sample_record(exam, options.sample, options.seed)
    setup = prompt_setup(exam, options, notify)
    exam, template, shots, pinned = setup.exam, setup.template, setup.shots, setup.exemplars
    benchmark = str(exam.metadata.get("benchmark", ""))
    _warn_of_settings_in_metadata(exam, notify)
    adapter = adapter_record(options, model, exam, notify) if options.adapter is not None else {}
    loaded_with = exam.metadata.get("loaded_with", {})
    split = loaded_with.get("split") or exam.metadata.get("split")
    objective_tokens, open_tokens = template.budget.resolved(
        options.max_new_tokens, options.max_new_tokens_open
    )
    settings = recorded_settings(options.backend)
    spec = RunSpec(
        benchmark=benchmark,
        data=loaded_with.get("data"),
        split=split,
        fingerprint=exam.fingerprint,
        n_questions=len(exam),
        prompt=template.name,
        prompt_version=template.version,
        shots=shots,
        model=model,
        method=Method.parse(options.method),
        seed=options.seed,
        limit=options.limit_total,
        limit_per_subject=options.limit,
        max_new_tokens=objective_tokens,
        max_new_tokens_open=open_tokens,
        on_invalid=loaded_with.get("on_invalid", "fail"),
        clean=bool(loaded_with.get("clean", False)),
        chat=bool(chat),
        system=options.system,
        exemplars=pinned,
        exemplars_file=setup.exemplars_digest,
        llm_extractor=options.llm_extractor,
        model_settings=settings,
        # the exam's own settings (GAOKAO-Bench's loader: partial credit), the run's options over them
        multi_policy=MultiPolicy.parse(options.multi_policy or exam.settings.multi_policy),
        partial_credit=options.partial_credit,
        shuffle_seed=options.shuffle_options,
        adapter=adapter,
        standard_scores={**exam.settings.standard_scores, **options.standard_scores},
        kaoshi_version=__version__,
        shard=None if options.shard is None else f"{options.shard[0]}/{options.shard[1]}",
        shard_questions=asked,
        temperature=options.temperature,
        top_p=options.top_p,
        top_k=options.top_k,
        thinking=options.thinking,
        repeats=options.repeats,
        reused_from=options.reuse_from,
        sample=sample,
    )
    name = run_name
    if name is None:
        name = default_run_name(exam.name, split, model, options.method, shots)
        name += limit_suffix(options.limit, options.limit_total)
        if options.sample is not None:
            name += f"-sample{options.sample}seed{options.seed}"
        name += sampling_suffix(options)
        if options.shuffle_options is not None:
            name += f"-shuffled{options.shuffle_options}"
        if options.shard is not None:
            name = shard_name(name, *options.shard)
    return PreparedRun(name, exam, template, spec, chat_known=chat is not None)


def adapter_record(options: RunConfig, model: str, exam: Exam, notify: Notify) -> dict[str, object]:
    """Check the adapter against the model and the evaluated questions; what the run spec records."""

    assert options.adapter is not None
    capabilities = spec_capabilities(model)
    if capabilities is None or not capabilities.adapters:
        raise InputError(
            f"--adapter needs a local transformers model ({', '.join(adapter_backends())}), got {model!r}"
        )
    manifest, overlap = check_overlap(options.adapter, exam.questions, options.allow_overlap)
    if manifest.get("base") not in (None, model):
        notify(f"warning: the adapter was trained on {manifest['base']!r}, applied here to {model!r}")
    if overlap:
        notify(
            f"warning: {overlap} evaluated question(s) were in the adapter's training data (--allow-overlap)"
        )
    return run_record(options.adapter, manifest, overlap)


def check_before_load(store: Store, prepared: PreparedRun) -> None:
    """Refuse a changed spec before paying for the model load (minutes for a 7B model)."""
    ignore = frozenset() if prepared.chat_known else frozenset({"chat"})
    store.check_resumable(prepared.name, prepared.spec, ignore=ignore)
