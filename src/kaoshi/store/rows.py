"""Rows of the store as records and back: JSON columns, enum columns checked as they are read, and the
status a run has from its lease holders."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, TypeVar

from kaoshi.data.model import gold_from_json, gold_to_json
from kaoshi.enums import TextEnum
from kaoshi.scoring.grade import MultiPolicy
from kaoshi.store.errors import StoreError
from kaoshi.store.leases import LeaseHolder, owner_gone
from kaoshi.store.pairing import question_fingerprint
from kaoshi.store.records import (
    GradeRecord,
    GradeStatus,
    Method,
    RunRecord,
    RunSpec,
    RunStatus,
    SampleRecord,
    SampleStatus,
)
from kaoshi.store.schema import TEXT_REFS
from kaoshi.store.writes import PendingWrite

SAMPLE_COLUMNS = (
    "question_id",
    "position",
    "qtype",
    "gold",
    "points",
    "subject",
    "domain",
    "category",
    "question",
    "prompt",
    "status",
    "shots",
    "extracted_by",
    "extractor_response",
    "response",
    "logprobs",
    "answer",
    "correct",
    "score",
    "latency_s",
    "tokens_in",
    "tokens_out",
    "error",
    "truncated",
    "served_model",
    "reasoning",
    "tokens_reasoning",
    "tokens_cached",
    "request_key",
    "answered_from",
    "batch_id",
    "extractor_usage",
)
# What a sample is written with: its columns, its question's content fingerprint (store.pairing) and group,
# which the summaries read instead of decoding each question (store.columns), and the digests of its prompt
# and question, held in `texts` (schema.TEXT_REFS); never read into a SampleRecord.
WRITTEN_COLUMNS = (*SAMPLE_COLUMNS, "fingerprint", "question_group", "prompt_ref", "question_ref")
_PROMPT, _QUESTION = SAMPLE_COLUMNS.index("prompt"), SAMPLE_COLUMNS.index("question")
GRADE_COLUMNS = ("question_id", "grader", "status", "score", "points", "rounds", "prompt_version")

RUN_QUERY = (
    "SELECT name, spec, status, created_at, finished_at, "
    "(SELECT COUNT(*) FROM samples WHERE run=runs.name), "
    "(SELECT pid FROM run_owners WHERE run=runs.name), (SELECT host FROM run_owners WHERE run=runs.name) "
    "FROM runs"
)


# json.dumps with these settings builds an encoder a call; one made once writes the same text.
_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True)


def dumps(value: Any) -> str:
    return _ENCODER.encode(value)


def loads(value: str | None) -> Any:
    return None if value is None else json.loads(value)


def stored_json(value: str | None, path: Path, row: str, column: str) -> Any:
    """A JSON column read from the store; text that is not JSON (a row written by hand or by another
    program, a damaged file) is a StoreError naming the store, the row and the column."""
    try:
        return loads(value)
    except (ValueError, TypeError, RecursionError) as exc:
        raise StoreError(f"{path}: {row}: its {column} is not readable JSON ({str(exc)[:120]})") from None


Stored = TypeVar("Stored", bound=TextEnum)


def stored(kind: type[Stored], value: Any, path: Path, row: str, column: str) -> Stored:
    """A value read from the store as a member of `kind`. One that is none of them (a row written by a
    newer kaoshi, another program or by hand) is a StoreError naming the store, the row and the value, and
    listing the known values: never read as some default."""
    try:
        return kind(value)
    except ValueError:
        raise StoreError(
            f"{path}: {row}: unknown {column} {value!r} (known: {kind.known()}); was it written by a newer "
            "kaoshi?"
        ) from None


def run_from_row(row: tuple[Any, ...], holders: dict[str, list[LeaseHolder]], path: Path) -> RunRecord:
    name, spec, status, created_at, finished_at, n_samples, pid, host = row
    where = f"table runs, run {name!r}"
    values = stored_json(spec, path, where, "spec")
    if not isinstance(values, dict):
        raise StoreError(f"{path}: {where}: its spec is not a JSON object")
    if "method" in values:
        values["method"] = stored(Method, values["method"], path, where, "method (in its spec)")
    if "multi_policy" in values:  # specs from before the policy was recorded are exact
        values["multi_policy"] = stored(
            MultiPolicy, values["multi_policy"], path, where, "multi_policy (in its spec)"
        )
    live, holder = live_status(
        stored(RunStatus, status, path, where, "status"), holders.get(name, []), pid, host
    )
    try:
        run_spec = RunSpec.from_json(values)
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"{path}: {where}: its spec cannot be read ({type(exc).__name__}: {exc})") from None
    return RunRecord(name, run_spec, live, created_at, finished_at, n_samples, holder)


def live_status(
    stored: RunStatus, holders: list[LeaseHolder], pid: int | None, host: str | None
) -> tuple[RunStatus, str | None]:
    """A run's status from its processes: running while a holder of its lease beats; held (naming it)
    while one is alive but silent; interrupted once every holder, or the process that opened it, died."""
    if stored is RunStatus.FINISHED:
        return stored, None
    now = time.time()
    alive = [h for h in holders if not owner_gone(h.pid, h.host)]
    if any(not h.silent(now) for h in alive):
        return RunStatus.RUNNING, None  # a process joined on the run goes on after another left
    if alive:
        return RunStatus.HELD, alive[0].describe_silence(now)
    if holders or (stored is RunStatus.RUNNING and owner_gone(pid, host)):
        return RunStatus.INTERRUPTED, None  # killed or crashed without a chance to say so
    return stored, None


def grade_from_row(row: tuple[Any, ...], path: Path, run: str) -> GradeRecord:
    question_id, grader, status, score, points, rounds, prompt_version = row
    where = f"table grades, run {run!r}, question {question_id!r}, grader {grader!r}"
    status = stored(GradeStatus, status, path, where, "status")
    rounds = stored_json(rounds, path, where, "rounds")
    return GradeRecord(question_id, grader, status, score, points, tuple(rounds or ()), prompt_version)


def sample_values(sample: SampleRecord) -> tuple[Any, ...]:
    return (
        sample.question_id,
        sample.position,
        sample.qtype,
        dumps(gold_to_json(sample.gold)),
        sample.points,
        sample.subject,
        sample.domain,
        sample.category,
        dumps(sample.question),
        sample.prompt,
        sample.status,
        sample.shots,
        sample.extracted_by,
        sample.extractor_response,
        sample.response,
        None if sample.logprobs is None else dumps(sample.logprobs),
        dumps(gold_to_json(sample.answer)),
        None if sample.correct is None else int(sample.correct),
        sample.score,
        sample.latency_s,
        sample.tokens_in,
        sample.tokens_out,
        sample.error,
        int(sample.truncated),
        sample.served_model,
        sample.reasoning,
        sample.tokens_reasoning,
        sample.tokens_cached,
        sample.request_key,
        sample.answered_from,
        sample.batch_id,
        None if sample.extractor_usage is None else dumps(sample.extractor_usage),
    )


def text_digest(text: str) -> bytes:
    """The key of a text in `texts` (schema.TEXT_REFS), after its question's position: a 128-bit BLAKE2b
    digest."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def written_row(sample: SampleRecord) -> tuple[tuple[Any, ...], tuple[tuple[int, bytes, str], ...]]:
    """The values of WRITTEN_COLUMNS, and the (position, digest, text) rows of `texts` they refer to
    (written with schema.INSERT_TEXT in the same transaction). A prompt or question is held in `texts` and
    its own column left empty; an empty one (a vote's prompt) stays in the row."""
    values = list(sample_values(sample))
    refs: list[bytes | None] = []
    texts = []
    for index in (_PROMPT, _QUESTION):
        text = values[index]
        if text:
            digest = text_digest(text)
            texts.append((sample.position, digest, text))
            values[index] = ""
            refs.append(digest)
        else:
            refs.append(None)
    group = dumps(sample.question.get("group"))
    return (*values, question_fingerprint(sample), group, *refs), tuple(texts)


def _insert(table: str, extra: tuple[str, ...]) -> str:
    columns = ", ".join((*extra, *WRITTEN_COLUMNS))
    placeholders = ", ".join("?" for _ in range(len(extra) + len(WRITTEN_COLUMNS) + 2))
    return f"INSERT OR REPLACE INTO {table} (run, {columns}, created_at) VALUES ({placeholders})"


# A first sample goes to `samples`, a question's later ones (--repeats) to `repeat_samples`.
_INSERT_FIRST = _insert("samples", ())
_INSERT_REPEAT = _insert("repeat_samples", ("sample",))


def sample_write(run: str, sample: SampleRecord, created_at: float) -> PendingWrite:
    """The write of one sample of `run` (an answer: kept in memory while the store refuses it); a later
    write for the same question and sample replaces it."""
    values, texts = written_row(sample)
    if sample.sample == 0:
        return PendingWrite(_INSERT_FIRST, (run, *values, created_at), answer=True, texts=texts)
    return PendingWrite(_INSERT_REPEAT, (run, sample.sample, *values, created_at), answer=True, texts=texts)


def missing_text(path: Path, row: str, column: str) -> StoreError:
    """The error of a sample whose `column` is held in `texts` (schema.TEXT_REFS) under a digest that names
    no text there."""
    return StoreError(
        f"{path}: {row}: its {column} is held in the table texts, which does not have it (a store damaged "
        "or edited by hand)"
    )


def sample_from_row(row: tuple[Any, ...], path: Path, run: str, sample: int = 0) -> SampleRecord:
    """A row of `samples` (sample 0) or of `repeat_samples` (the row's `sample`, read after the others)."""
    values = dict(zip(SAMPLE_COLUMNS, row, strict=True))
    table = "samples" if sample == 0 else f"repeat_samples, sample {sample}"
    where = f"table {table}, run {run!r}, question {values['question_id']!r}"
    for column in TEXT_REFS:
        if values[column] is None:  # its digest names no text of the store (schema.stored_text)
            raise missing_text(path, where, column)
    values["status"] = stored(SampleStatus, values["status"], path, where, "status")
    for column in ("gold", "answer", "question", "logprobs", "extractor_usage"):
        values[column] = stored_json(values[column], path, where, column)
    values["gold"] = gold_from_json(values["gold"])
    values["answer"] = gold_from_json(values["answer"])
    values["correct"] = None if values["correct"] is None else bool(values["correct"])
    values["truncated"] = bool(values["truncated"])
    return SampleRecord(**values, sample=sample)
