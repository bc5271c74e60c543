"""`kaoshi.evaluate`: an exam and a model in, a stored run and its numbers out (what `kaoshi run` does)."""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kaoshi.analysis.cost import Price
from kaoshi.api.boards import keep_board
from kaoshi.api.summary import StoreLike, read_summary
from kaoshi.benchmarks import load_exam_result as load_benchmark
from kaoshi.data import LoadResult
from kaoshi.data.model import Exam
from kaoshi.errors import InputError
from kaoshi.models.base import Model, ModelOptions
from kaoshi.models.batches import MAX_BYTES, MAX_LINES
from kaoshi.models.function import FunctionModel
from kaoshi.models.registry import default_chat_before_load, resolve_model
from kaoshi.results.aggregate import RunSummary
from kaoshi.runner.batching import FALLBACKS
from kaoshi.runner.batching import BatchesUnanswered as BatchesUnanswered  # re-exported
from kaoshi.runner.batching import BatchPolicy as BatchPolicy  # re-exported: kaoshi.evaluate(batch=...)
from kaoshi.runner.batching import BatchWait as BatchWait  # re-exported: BatchPolicy.on_wait's argument
from kaoshi.runner.cache import CachePolicy as CachePolicy  # re-exported: kaoshi.evaluate(cache=...)
from kaoshi.runner.config import BACKEND_OPTIONS, RunConfig, unknown_option
from kaoshi.runner.keywords import BackendKeywords, RunKeywords, Unpack
from kaoshi.runner.prepare import PreparedRun, check_before_load, prepare_run
from kaoshi.runner.run import ProgressCallback, RunOutcome, execute_run
from kaoshi.runner.spending import CostCapReached, Spending
from kaoshi.store import RunSpec, SampleRecord, SampleStatus, Store, StoreError
from kaoshi.store.leases import Lease

if TYPE_CHECKING:
    import pandas


ModelLike = str | Model | Callable[[Any], str]
IN_MEMORY = ":memory:"
_log = logging.getLogger("kaoshi")
# What an error says of how it reached the question, not of its cause: the request of several
# questions it rode in, a question left unsent after another failed.
_CARRIER = re.compile(
    r"^(?:a list of \d+ prompts failed: |not sent: the server failed an earlier question of this request: )+"
)

BATCH_FALLBACKS = FALLBACKS  # what kaoshi run --batch-fallback takes
BATCH_MAX_LINES, BATCH_MAX_BYTES = MAX_LINES, MAX_BYTES  # a provider's limits on a batch's input file


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: what was answered is saved; the same call (or command) resumes it."""

    def __init__(self, name: str, saved: int, store: Path | None) -> None:
        super().__init__(f"{saved} sample(s) of run {name!r} are saved")
        self.name, self.saved, self.store = name, saved, store


class RunCapped(Exception):
    """The run reached its cost cap (max_cost): nothing more was sent, what was answered is saved, and the
    same call without the cap (or with a higher one) goes on."""

    def __init__(self, name: str, saved: int, spent: float, cap: float, store: Path | None) -> None:
        super().__init__(f"run {name!r} spent {spent:,.4f} of its cap {cap:,.4f}; {saved} sample(s) saved")
        self.name, self.saved, self.spent, self.cap, self.store = name, saved, spent, cap, store


def spending_of(price: Price | None, max_cost: float | None) -> Spending | None:
    """The cost cap of a run (None without one); InputError for a cap without a price or below 0."""
    if max_cost is None:
        return None
    if price is None:
        raise InputError("a cost cap (--max-cost) needs the price of the tokens (--price IN,OUT[,CACHED])")
    if max_cost < 0:
        raise InputError(f"--max-cost must be >= 0, got {max_cost:g}")
    return Spending(price, max_cost)


@dataclass(frozen=True)
class EvalResult:
    """A run as evaluate left it. `samples` are the stored records (`kaoshi samples NAME --format jsonl`),
    read from the store when first asked for; `summary` the numbers of `kaoshi report NAME --format json`;
    `store` is None for an in-memory run."""

    name: str
    spec: RunSpec
    store: Path | None
    new_samples: int
    already_done: int
    errors: int
    summary: RunSummary
    reused: int = 0  # answers taken from the run named by --reuse-from (spec.reused_from)
    cached: int = 0  # answers taken from the cache (kaoshi.runner.cache), not asked again
    # the samples when read already (an in-memory run's, read before its store is gone); else None
    read_samples: tuple[SampleRecord, ...] | None = field(default=None, repr=False, compare=False)

    @cached_property
    def samples(self) -> tuple[SampleRecord, ...]:
        """The run's stored samples (its first a question), in question order."""
        if self.read_samples is not None:
            return self.read_samples
        with self._opened() as store:
            return tuple(store.iter_samples(self.name))

    @property
    def accuracy(self) -> float | None:
        """Share of the checked answers that are correct (None when nothing could be checked)."""
        return self.summary.overall.accuracy

    def error_causes(self) -> list[tuple[str, int]]:
        """The run's error samples by cause, most first: what the server (or the model) did, once for
        all the questions it happened to (a request of several questions counts each)."""
        texts = Counter(_CARRIER.sub("", s.error) for s in self._error_samples() if s.error is not None)
        # one cause however many attempts it took ('HTTP 500 (gave up after 7 attempts)', '... 1 attempt')
        causes: dict[str, Counter[str]] = {}
        for text, count in texts.items():
            causes.setdefault(text.split(" (gave up after ")[0], Counter())[text] += count
        named = [(wordings.most_common(1)[0][0], wordings.total()) for wordings in causes.values()]
        return sorted(named, key=lambda item: (-item[1], item[0]))

    def _error_samples(self) -> tuple[SampleRecord, ...]:
        if self.read_samples is not None or "samples" in self.__dict__:  # read already
            return self.samples
        with self._opened() as store:  # only the errors: a run of 100,000 answers reads a handful
            return tuple(store.iter_samples(self.name, status=SampleStatus.ERROR))

    def _opened(self) -> Store:
        if self.store is None:  # an in-memory run's result is made with its samples
            raise StoreError(f"run {self.name!r} was kept in memory and its samples were not read")
        return Store(self.store, read_only=True)

    def to_pandas(self) -> pandas.DataFrame:
        """One row per sample (the jsonl fields); needs pandas (`pip install 'kaoshi[pandas]'`)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("to_pandas needs pandas: pip install 'kaoshi[pandas]'") from None
        return pandas.DataFrame([sample.to_json() for sample in self.samples])

    def __repr__(self) -> str:
        accuracy = "n/a" if self.accuracy is None else f"{100 * self.accuracy:.1f}%"
        return (
            f"EvalResult(name={self.name!r}, model={self.spec.model!r}, method={self.spec.method.value!r}, "
            f"samples={self.summary.overall.n}, errors={self.errors}, accuracy={accuracy})"
        )


def evaluate(
    exam: Exam | LoadResult | str,
    model: ModelLike,
    config: RunConfig | None = None,
    *,
    run_name: str | None = None,
    store: StoreLike = None,
    join: bool = False,
    on_sample: ProgressCallback | None = None,
    on_plan: Callable[[int, int], None] | None = None,
    notify: Callable[[str], None] | None = None,
    price: Price | None = None,
    max_cost: float | None = None,
    cache: CachePolicy | None = None,
    batch: BatchPolicy | None = None,
    **overrides: Unpack[RunKeywords],
) -> EvalResult:
    """Evaluate `model` on `exam` into a store, resuming a run of the same name; the options are those of
    `kaoshi run` (the same options record the same run spec, so either resumes the other's runs).

    exam: an Exam, a LoadResult, or a benchmark name for `kaoshi.load_exam`.
    model: a spec string ("smollm2", "hf:ID", "openai:MODEL", "random", ...), a `kaoshi.models.Model`
        (`kaoshi.models.from_transformers(model, tokenizer)` for weights already in memory), or a callable
        prompt -> answer text. A model evaluate loads is closed at the end; one passed in is left open.
    config: the run's options (`kaoshi.RunConfig`: method, prompt, shots, limit, limit_total,
        max_new_tokens, ..., and `backend`, the `kaoshi.models.ModelOptions`: seed, batch_size, adapter,
        device, ...); default: `kaoshi run`'s defaults. `limit=N` takes the first N questions of each
        subject (its domain where it has none), `limit_total=N` at most N in all after it.
    **overrides: options by name, over `config`'s (typed: kaoshi.runner.keywords.RunKeywords): a RunConfig
        field (`method="loglik"`, `shard="2/8"`, `limit=10`), or a backend's setting (ModelOptions fields:
        seed, batch_size, adapter, device, dtype, base_url, concurrency, max_length, ...); TypeError naming
        the close ones for any other name. A model passed in runs with the settings it was loaded with;
        one asked otherwise is a TypeError.
    store: a path, an open `kaoshi.store.Store`, or None for an in-memory store (gone with the result).
    run_name: default <exam>-<split>-<model>-<method>-<N>shot, then -limit<N> / -total<N> for the limits;
        the same name resumes.
    join: when another live process is executing the run (otherwise a StoreError naming it), work beside
        it, asking only the questions nobody has claimed; the run is finished by whichever ends last.
    notify: receives warnings and notes as lines (default: the `kaoshi` logger).
    price, max_cost: what the run's tokens cost (kaoshi.api.costs.parse_price("IN,OUT[,CACHED]")) and the
        most it may cost, its earlier sessions' answers included: once reached nothing more is sent, what is
        in flight is stored, and RunCapped is raised; the same call without it (or a higher one) goes on.
    cache: which answers are taken from the cache instead of asked (kaoshi.runner.cache.CachePolicy; default:
        greedy answers of a provider's model, from this store's other runs).
    batch: send the generation requests through the provider's batch endpoint at its batch price
        (kaoshi.runner.batching.BatchPolicy: poll interval, rounds, fallback), waiting for the batches; an
        interrupted call resumes the same batches. BatchesUnanswered when requests stay unanswered after
        its rounds (they are not stored; the same call sends them again).
    Ctrl-C raises RunInterrupted once the answers so far are saved.
    """
    options = (config or RunConfig()).override(**overrides)
    if isinstance(exam, str):
        exam = load_benchmark(exam)
    if isinstance(exam, LoadResult):
        exam = exam.exam
    if isinstance(model, Model):
        options = replace(options, backend=_loaded_with(model, options.backend, given=overrides))
    return evaluate_prepared(
        exam,
        model,
        options,
        run_name=run_name,
        store=store,
        join=join,
        on_sample=on_sample,
        on_plan=on_plan,
        notify=notify or _log.warning,
        spending=spending_of(price, max_cost),
        cache=cache,
        batch=batch,
    )


def _loaded_with(model: Model, asked: ModelOptions, given: Collection[str]) -> ModelOptions:
    """The settings a model already loaded runs with: its own, which the spec records. TypeError for a
    setting asked otherwise (`given` by keyword, or set on the config's backend): it would not reach the
    model, and the spec would record what the model never used."""
    default = ModelOptions()
    refused = [
        name
        for name in BACKEND_OPTIONS
        if (name in given or getattr(asked, name) != getattr(default, name))
        and getattr(asked, name) != getattr(model.options, name)
    ]
    if refused:
        shown = ", ".join(
            f"{name}={getattr(asked, name)!r} (loaded with {getattr(model.options, name)!r})"
            for name in refused
        )
        raise TypeError(
            f"{shown}: would not reach a model already loaded; pass them to kaoshi.load_model (or "
            "from_transformers) instead"
        )
    return model.options


def load_model(spec: str, **backend: Unpack[BackendKeywords]) -> Model:
    """Load a backend once to evaluate it several times (e.g. both methods); close it when done.

    spec: "smollm2", "hf:ID_OR_FOLDER", "gguf:FILE", "openai:MODEL", "vllm:ID", "random", ...;
    **backend: `kaoshi.models.ModelOptions` fields (seed, batch_size, adapter, device, dtype, base_url,
    max_length, ...)."""
    return resolve_model(spec, backend_options(backend))


def backend_options(backend: Mapping[str, Any], **fixed: Any) -> ModelOptions:
    """ModelOptions from backend keywords (load_model's, judge's), with `fixed` the ones the caller sets
    itself; TypeError naming an unknown one."""
    unknown = sorted(set(backend) - set(BACKEND_OPTIONS))
    if unknown:
        raise unknown_option(unknown[0])
    return ModelOptions(**backend, **fixed)


def evaluate_prepared(
    exam: Exam,
    model: ModelLike,
    options: RunConfig,
    *,
    run_name: str | None,
    store: StoreLike,
    notify: Callable[[str], None],
    join: bool = False,
    on_sample: ProgressCallback | None = None,
    on_plan: Callable[[int, int], None] | None = None,
    spending: Spending | None = None,
    cache: CachePolicy | None = None,
    batch: BatchPolicy | None = None,
) -> EvalResult:
    """evaluate with its options already gathered (the `kaoshi run` command calls this); `spending`: its
    cost cap (spending_of).

    A run is prepared, its store opened, its spec checked and its lease taken, its model loaded (after
    the check: a refused spec costs no load), run, and then closed: the model if this call loaded it, the
    store if this call opened it. Into a store file not made yet, the model loads before the file is
    made, so that a bad model spec leaves no empty store behind."""
    given = as_model(model, options.backend)
    spec_text = model_spec_text(model, given)
    chat = chat_before_load(given, spec_text, options)
    prepared = prepare_run(exam, spec_text, options, chat=chat, run_name=run_name, notify=notify)
    session = _Session(join, notify, on_sample, on_plan, spending, cache or CachePolicy(), batch)
    with ExitStack() as stack:
        run_model = stack.enter_context(_RunModel(given, prepared.spec.model, options.backend))
        if _makes_store_file(store):
            run_model.load()
        opened = stack.enter_context(_opened_store(store))
        return _evaluate_in(opened, prepared, run_model, session)


def _makes_store_file(store: StoreLike) -> bool:
    """Whether opening the store makes its file."""
    return store is not None and not isinstance(store, Store) and not Path(store).exists()


def _opened_store(store: StoreLike) -> AbstractContextManager[Store]:
    """The run's store: the caller's Store (left open), or a file or one in memory (None), closed when
    the run ends."""
    if isinstance(store, Store):
        return nullcontext(store)
    return Store(Path(IN_MEMORY if store is None else store))


class _RunModel:
    """The run's model: the caller's (never closed here), or loaded from the spec when first needed and
    closed once when the run ends."""

    def __init__(self, given: Model | None, spec: str, options: ModelOptions) -> None:
        self.given, self.spec, self.options = given, spec, options
        self._loaded: Model | None = None

    def load(self) -> Model:
        if self.given is not None:
            return self.given
        if self._loaded is None:
            self._loaded = resolve_model(self.spec, self.options)
        return self._loaded

    def close(self) -> None:
        """Close the model if it was loaded here (once, however often asked)."""
        loaded, self._loaded = self._loaded, None
        if loaded is not None:
            loaded.close()

    def __enter__(self) -> _RunModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class _Session:
    """How a run is executed, whatever store and model it has: joined or not, where its notes, answers and
    plans go, its cost cap, which answers it takes from the cache and whether it sends batches."""

    join: bool
    notify: Callable[[str], None]
    on_sample: ProgressCallback | None
    on_plan: Callable[[int, int], None] | None
    spending: Spending | None
    cache: CachePolicy
    batch: BatchPolicy | None = None  # send through the provider's batch endpoint (--batch)


def _evaluate_in(store: Store, prepared: PreparedRun, run_model: _RunModel, session: _Session) -> EvalResult:
    """Check the spec and take the run's lease before the model loads (minutes for a 7B model), run, read
    back."""
    check_before_load(store, prepared)
    in_memory = store.path == Path(IN_MEMORY)
    with store.hold(prepared.name, join=session.join) as lease:
        for dead in lease.taken_over:
            session.notify(
                f"note: took over run {prepared.name!r} from {dead.describe(time.time())}, which is gone; "
                "the questions it had claimed are asked again"
            )
        outcome = _run(prepared, run_model, store, lease, session)
        run_model.close()  # its memory (a GPU's) is free before the board is counted
        summary = None
        if not in_memory and not lease.others_alive():
            # the run's answers are in: its numbers are counted by SQLite (kaoshi report's) and kept with its
            # answer rows, so that the next `kaoshi report RUN` reads them, then its benchmark's board is
            # counted from them and kept, so that the next `kaoshi leaderboard` reads it (a process that
            # joined this run and answers it still keeps them when it ends)
            summary = read_summary(store, prepared.name, keep=True)
            keep_board(store, prepared.spec.benchmark)
    # the samples are read when asked for, but those of a store in memory, gone with it
    return EvalResult(
        name=prepared.name,
        spec=store.get_run(prepared.name).spec,
        store=None if in_memory else store.path,
        new_samples=outcome.new_samples,
        already_done=outcome.already_done,
        errors=outcome.errors,
        summary=read_summary(store, prepared.name, keep=True) if summary is None else summary,
        reused=outcome.reused,
        cached=outcome.cached,
        read_samples=tuple(store.iter_samples(prepared.name)) if in_memory else None,
    )


def model_spec_text(model: ModelLike, given: Model | None) -> str:
    """The model's spec as a run records it: the string given, or the given backend's own."""
    return model if isinstance(model, str) else given.spec if given is not None else ""


def chat_before_load(given: Model | None, spec_text: str, options: RunConfig) -> bool | None:
    """The run's chat form where it is known before a model loads: the run's own (--chat / --no-chat),
    the given backend's default, or what the backend's class declares; None where only the loaded model
    knows (its tokenizer's chat template)."""
    if options.chat is not None:
        return options.chat
    if given is not None:
        return given.default_chat_for(options.method)
    return default_chat_before_load(spec_text, options.method)


def as_model(model: ModelLike | None, options: ModelOptions) -> Model | None:
    """The backend object for a model given as an object (None for a spec string, loaded later)."""
    if model is None or isinstance(model, str):
        return None
    if isinstance(model, Model):
        return model
    if hasattr(model, "config") and hasattr(model, "generate"):
        raise TypeError(
            "a transformers model needs its tokenizer: kaoshi.models.from_transformers(model, tokenizer)"
        )
    if callable(model):
        return FunctionModel(model, options)
    raise TypeError(f"model must be a spec string, a kaoshi.models.Model or a callable, not {type(model)}")


def _run(
    prepared: PreparedRun, run_model: _RunModel, store: Store, lease: Lease, session: _Session
) -> RunOutcome:
    model = run_model.load()
    spec = (
        prepared.spec
        if prepared.chat_known
        else replace(prepared.spec, chat=model.default_chat_for(prepared.spec.method))
    )
    try:
        with _extractor(spec.llm_extractor, run_model.options) as extractor:
            return execute_run(
                name=prepared.name,
                exam=prepared.exam,
                spec=spec,
                model=model,
                template=prepared.template,
                store=store,
                on_sample=session.on_sample,
                on_plan=session.on_plan,
                extractor=extractor,
                lease=lease,
                spending=session.spending,
                cache=session.cache,
                batch=session.batch,
            )
    except CostCapReached as capped:
        saved, where = _stopped(store, lease, prepared.name)
        raise RunCapped(prepared.name, saved, capped.spent, capped.cap, where) from None
    except KeyboardInterrupt:
        saved, where = _stopped(store, lease, prepared.name)
        raise RunInterrupted(prepared.name, saved, where) from None
    except BatchesUnanswered:
        _stopped(store, lease, prepared.name)
        raise


@contextmanager
def _extractor(spec: str | None, options: ModelOptions) -> Iterator[Model | None]:
    """The LLM extractor a run's spec names (None: none), closed when the run ends. It is a model of its
    own: not the run's replicas, adapter or GPUs."""
    if not spec:
        yield None
        return
    extractor = resolve_model(spec, replace(options, ray=False, replicas=1, ray_address=None, adapter=None))
    try:
        yield extractor
    finally:
        extractor.close()


def _stopped(store: Store, lease: Lease, name: str) -> tuple[int, Path | None]:
    """A run stopped before its end (Ctrl-C, its cost cap): marked interrupted unless a process joined on
    it still answers it; how many of its samples are saved, and where (None: a store in memory)."""
    if not lease.others_alive():
        store.interrupt_run(name)
    return len(store.finished_ids(name)), None if store.path == Path(IN_MEMORY) else store.path
