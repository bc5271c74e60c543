"""kaoshi run --batch: a run's generation requests sent through the provider's batch endpoint at about half
the real-time price (kaoshi.models.batches), and each answer stored as a real-time one is.

The batches live in the store with the run (kaoshi.store.batches): a process killed while it waits resumes
polling the same batches with the same command, and a batch made just before a kill is found again among
the provider's by the input file its metadata names. So a question is never sent in two batches that both
answer it. A line the provider failed, or one a batch left undone (expired, cancelled), is sent again in
a new batch, up to `rounds` batches in all; past that it is left unasked (the run stays unfinished and
says why) or, with `fallback="realtime"`, asked in real time. The run's cost cap is checked as the lines
are written: a batch holds only what the cap admits."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from kaoshi.analysis.cost import approximate_tokens
from kaoshi.data.model import Question
from kaoshi.models.base import CapabilityError, GenerateRequest, Model, ModelError, ModelOutput
from kaoshi.models.batches import MAX_BYTES, MAX_LINES, BatchEndpoint, BatchState, parts
from kaoshi.runner.gate import RequestGate
from kaoshi.runner.grouping import AnswerGroup
from kaoshi.runner.llm_extract import rescue_unparsed
from kaoshi.runner.samples import PendingQuestion, build_sample
from kaoshi.runner.spending import Spending
from kaoshi.store.batches import EXTRACTOR, MODEL, BatchRecord
from kaoshi.store.leases import Lease
from kaoshi.store.records import RunSpec, SampleRecord, SampleStatus
from kaoshi.store.sqlite import Store

FALLBACKS = ("batch", "realtime")
# How far before a `creating` row's time the provider's batches are listed to find its batch: the local
# clock and the provider's may differ.
LOOKUP_MARGIN_S = 3600.0


@dataclass(frozen=True)
class BatchWait:
    """Where a run's batches stand while it waits on them: shown on the progress line."""

    batches: int  # being waited on
    statuses: tuple[tuple[str, int], ...]  # the provider's statuses, with how many batches have each
    requests: int
    completed: int
    failed: int
    waited_s: float

    def describe(self) -> str:
        """'2 batches (in_progress 2): 412 of 1,000 done, 3 failed; waited 0:05:12'."""
        statuses = ", ".join(f"{status} {count}" for status, count in self.statuses)
        failed = f", {self.failed:,} failed" if self.failed else ""
        waited = int(self.waited_s)
        clock = f"{waited // 3600}:{waited % 3600 // 60:02d}:{waited % 60:02d}"
        plural = "batch" if self.batches == 1 else "batches"
        return (
            f"{self.batches} {plural} ({statuses}): {self.completed:,} of {self.requests:,} done{failed}; "
            f"waited {clock}"
        )


@dataclass(frozen=True)
class BatchPolicy:
    """How --batch sends a run: `poll_s` between polls; a request is sent in at most `rounds` batches;
    `fallback`: what becomes of one still unanswered then ("batch": left unasked, "realtime": asked in real
    time); the provider's limits on one input file (lines, bytes); `on_wait`: each poll's state."""

    poll_s: float = 30.0
    rounds: int = 3
    fallback: str = "batch"
    max_lines: int = MAX_LINES
    max_bytes: int = MAX_BYTES
    on_wait: Callable[[BatchWait], None] | None = None

    def __post_init__(self) -> None:
        if self.fallback not in FALLBACKS:
            raise ValueError(f"--batch-fallback must be one of {', '.join(FALLBACKS)}, not {self.fallback!r}")
        if self.rounds < 1 or self.poll_s < 0 or self.max_lines < 1 or self.max_bytes < 1:
            raise ValueError("a batch policy needs rounds >= 1, poll_s >= 0 and positive limits")


class BatchesUnanswered(Exception):
    """Requests no batch answered in `rounds` tries: the run is left unfinished (the same command tries
    again; --batch-fallback realtime asks them in real time)."""

    def __init__(self, count: int, rounds: int, why: str) -> None:
        super().__init__(
            f"{count} request(s) got no answer in {rounds} batch(es) (last: {why}); they are not stored: the "
            "same command sends them again, --batch-fallback realtime asks them in real time"
        )
        self.count, self.why = count, why


@dataclass(frozen=True)
class BatchOutcome:
    """What the batches left: questions another process claimed, and those to ask in real time."""

    skipped: list[PendingQuestion]
    realtime: list[PendingQuestion]


def check_batchable(model: Model, spec: RunSpec) -> BatchEndpoint:
    """The model's batch endpoint; CapabilityError, before anything is sent, where --batch cannot be."""
    endpoint = model.batch_endpoint()
    if endpoint is None:
        raise CapabilityError(f"model {model.spec!r} has no batch endpoint: --batch is for openai:MODEL")
    if spec.method.value != "generate":
        raise CapabilityError("--batch sends generation requests: use it with --method generate")
    return endpoint


class BatchSession:
    """The batch mechanics for one owner (a run) and role (its questions, or a judge's calls on its answers):
    batches found again after a kill, requests written as input files and sent, polled until final, and
    each answer handed over with its batch id. A batch is marked collected only once its answers have been
    handed over and `settle` has run (the caller's commit), so a kill in between reads it again."""

    def __init__(
        self,
        store: Store,
        owner: str,
        role: str,
        endpoint: BatchEndpoint,
        policy: BatchPolicy,
        *,
        take: Callable[[str], bool] = lambda _: True,
        admit: Callable[[list[GenerateRequest]], list[GenerateRequest]] = list,
        unanswered: Callable[[int], None] = lambda _: None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store, self.owner, self.role, self.endpoint, self.policy = store, owner, role, endpoint, policy
        self.take, self.admit, self.clock, self.sleep = take, admit, clock, sleep
        self.on_unanswered = unanswered  # how many admitted requests a batch left unanswered
        self.book = store.batches
        self._store_id = self.book.store_id()
        self._why: dict[str, str] = {}  # why a request's last batch gave it no answer
        # the batches each request was in this session (a later session gives each its rounds again)
        self._sent: Counter[str] = Counter()
        self.given_up: list[str] = []  # sent in `rounds` batches with no answer

    def open_batches(self) -> list[BatchRecord]:
        """The owner's batches of this role not yet collected, those made around a kill found again."""
        self._found_again()
        return self.book.of_run(self.owner, self.role, open_only=True)

    def answers(
        self,
        requests: Mapping[str, GenerateRequest],
        polled: list[BatchRecord],
        to_send: list[str],
        settle: Callable[[], None] = lambda: None,
    ) -> Iterator[tuple[str, ModelOutput]]:
        """Poll `polled`, send `to_send` (request ids of `requests`), and send again what a batch leaves
        unanswered, until every request is answered or has had its rounds: each answer as (request id,
        output). Requests of a polled batch missing from `requests` (answered meanwhile) are not read."""
        started = self.clock()
        mine = list(polled)
        for record in mine:
            self._sent.update(record.requests)
        while True:
            sendable = self._rounds_left(to_send)
            mine += self._send(requests, sendable)
            if not mine:
                return
            retry: list[str] = []
            yield from self._wait(mine, requests, started, retry, settle)
            mine, to_send = [], retry

    def why(self, request_id: str) -> str:
        """Why the request's last batch gave it no answer."""
        return self._why.get(request_id, "unknown")

    def unanswered(self) -> BatchesUnanswered | None:
        """The requests given up, as an error to raise; None when there are none."""
        if not self.given_up:
            return None
        return BatchesUnanswered(
            len(self.given_up), self.policy.rounds, self._why.get(self.given_up[0], "unknown")
        )

    # -- sending ----------------------------------------------------------------------------------------
    def _rounds_left(self, request_ids: list[str]) -> list[str]:
        """The requests that may go in one more batch; those sent in `rounds` batches this session are given
        up (the next session gives them their rounds again)."""
        if not request_ids:
            return []
        spent = {r for r in request_ids if self._sent[r] >= self.policy.rounds}
        self.given_up += [r for r in request_ids if r in spent]
        return [r for r in request_ids if r not in spent]

    def _send(self, requests: Mapping[str, GenerateRequest], request_ids: list[str]) -> list[BatchRecord]:
        """Write the requests admitted as input files within the provider's limits, and make a batch of
        each: recorded before and after the call that makes it."""
        if not request_ids:
            return []
        admitted = self.admit([requests[r] for r in request_ids])
        # Requests that share a prompt prefix (a subject's exemplars, the system prompt) side by side, in
        # the same input file: a provider that caches prompt prefixes within a batch reads them once. The
        # order of a batch's lines changes no answer.
        admitted.sort(key=lambda request: (request.messages or (), request.prompt))
        lines = [self.endpoint.line(request) for request in admitted]
        made: list[BatchRecord] = []
        start = 0
        for end in parts(lines, self.policy.max_lines, self.policy.max_bytes):
            part = admitted[start:end]
            content = b"".join(lines[start:end])
            start = end
            endpoint = self.endpoint.endpoint_of(part[0])
            input_file = self.endpoint.upload(content, f"kaoshi-{self.role}-{self.owner[:80]}.jsonl")
            ids = tuple(request.id for request in part)
            self._sent.update(ids)
            self.take(input_file)  # before the row: no process beside this one takes it for a dead one's
            record = self.book.creating(self.owner, self.role, input_file, self.endpoint.where, ids)
            metadata = {
                "kaoshi_run": self.owner[:512],
                "kaoshi_role": self.role[:512],
                "kaoshi_store": self._store_id,
                "kaoshi_input": input_file,
            }
            try:
                state = self.endpoint.create(input_file, endpoint, metadata)  # sent once: never retried
            except ModelError:
                # Whether the provider made it is unknown (a timeout, a dropped connection, a 5xx): looked up
                # among its batches; not found, the row stays `creating` and the next command looks again
                # before it sends anything (a listing may lag).
                found = self._look_up({input_file}, [record])
                if input_file not in found:
                    raise
                state = found[input_file]
            self.book.created(self.owner, input_file, state.id, state.status)
            made.append(replace(record, batch_id=state.id, status=state.status))
        return made

    # -- waiting ----------------------------------------------------------------------------------------
    def _wait(
        self,
        records: list[BatchRecord],
        requests: Mapping[str, GenerateRequest],
        started: float,
        retry: list[str],
        settle: Callable[[], None],
    ) -> Iterator[tuple[str, ModelOutput]]:
        """Poll the batches until each is final and read, handing over each answer; what they left
        unanswered goes into `retry`."""
        waiting = {record.input_file: record for record in records}
        states: dict[str, BatchState] = {}
        unreadable: dict[str, int] = {}
        first = True
        while waiting:
            if not first:
                self.sleep(self.policy.poll_s)
            first = False
            for input_file, record in list(waiting.items()):
                assert record.batch_id is not None
                state = self.endpoint.get(record.batch_id)
                states[input_file] = state
                if state.status != record.status:
                    self.book.status(self.owner, input_file, state.status)
                    waiting[input_file] = record = replace(record, status=state.status)
                if not state.final:
                    continue
                asked = {r: requests[r] for r in record.requests if r in requests}
                try:
                    results = self.endpoint.results(state, asked)
                except ModelError:
                    unreadable[input_file] = unreadable.get(input_file, 0) + 1
                    if unreadable[input_file] > self.policy.rounds:
                        raise
                    continue  # read again at the next poll
                for request_id, output in results.outputs.items():
                    yield request_id, replace(output, batch_id=state.id)
                settle()
                self.book.collected(self.owner, input_file, state.status)
                self._why.update(results.failed)
                self.on_unanswered(sum(r in results.failed for r in record.requests))
                retry += [r for r in record.requests if r in results.failed]
                del waiting[input_file]
            if waiting:
                self._report(list(states.values()), started, waiting)

    def _report(self, states: list[BatchState], started: float, waiting: Mapping[str, BatchRecord]) -> None:
        if self.policy.on_wait is None:
            return
        counts: dict[str, int] = {}
        for state in states:
            counts[state.status] = counts.get(state.status, 0) + 1
        self.policy.on_wait(
            BatchWait(
                batches=len(waiting),
                statuses=tuple(sorted(counts.items())),
                requests=sum(s.total for s in states),
                completed=sum(s.completed for s in states),
                failed=sum(s.failed for s in states),
                waited_s=self.clock() - started,
            )
        )

    # -- finding batches again ---------------------------------------------------------------------------
    def _found_again(self) -> None:
        """Batches recorded as `creating` by a process that is gone (it died around the call that makes
        them): recorded with their id where the provider made them, forgotten where it did not (their
        requests are sent again). A row a live process beside this one holds is that one's."""
        records = self.book.of_run(self.owner, self.role, open_only=True)
        creating = {r.input_file for r in records if r.creating and self.take(r.input_file)}
        if not creating:
            return
        found = self._look_up(creating, records)
        for input_file in creating:
            if input_file in found:
                state = found[input_file]
                self.book.created(self.owner, input_file, state.id, state.status)
            else:
                self.book.never_made(self.owner, input_file)

    def _look_up(self, input_files: set[str], records: list[BatchRecord]) -> dict[str, BatchState]:
        """The provider's batches made from these input files (their metadata names them), listed back to
        an hour before the earliest was recorded (a margin for clocks that differ)."""
        since = min(r.submitted_at for r in records if r.input_file in input_files) - LOOKUP_MARGIN_S
        found: dict[str, BatchState] = {}
        for state in self.endpoint.listed(since):
            metadata = state.metadata
            input_file = metadata.get("kaoshi_input") or state.input_file
            if input_file in input_files and metadata.get("kaoshi_store", self._store_id) == self._store_id:
                found.setdefault(input_file, state)
                if len(found) == len(input_files):
                    break
        return found


class BatchAsker:
    """Sends the questions this process claims in batches, waits, and stores each answer. With an LLM
    extractor, the answers the rules left unparsed are read by it in batches of its own (role `extractor`)
    before they are stored: a kill meanwhile leaves them unstored and their model batch uncollected, so
    the next command reads the model batch again and polls the extractor's."""

    def __init__(
        self,
        name: str,
        spec: RunSpec,
        model: Model,
        store: Store,
        lease: Lease,
        policy: BatchPolicy,
        request_of: Callable[[PendingQuestion], GenerateRequest],
        stored: Callable[[SampleRecord], None],
        extractor: Model | None = None,
        spending: Spending | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.name, self.spec, self.store, self.lease, self.policy = name, spec, store, lease, policy
        self.request_of, self.stored, self.extractor, self.spending = request_of, stored, extractor, spending
        self._gate = RequestGate(lease, spending)
        # every question this process was asked to settle, across its calls: a batch taken over from a
        # process that died holds questions of an earlier call's list
        self._by_id: dict[str, PendingQuestion] = {}
        self._requests: dict[str, GenerateRequest] = {}
        self.session = BatchSession(
            store,
            name,
            MODEL,
            check_batchable(model, spec),
            policy,
            take=lambda input_file: bool(lease.claim([_batch_claim(input_file)])),
            admit=self._admit,
            unanswered=spending.release if spending is not None else lambda _: None,
            clock=clock,
            sleep=sleep,
        )

    def ask(self, pending: Sequence[PendingQuestion]) -> BatchOutcome:
        self._by_id.update((p.request_id, p) for p in pending)
        self._requests.update((p.request_id, self.request_of(p)) for p in pending)
        opened = self.session.open_batches()
        in_batches = {request_id for record in opened for request_id in record.requests}
        mine = []
        for record in opened:  # a batch a process alive beside this one polls is that one's
            if self.session.take(record.input_file):
                self.lease.claim(list(record.requests))  # and its questions this one's
                mine.append(record)
        finished = self.store.finished_keys(self.name)  # what a process beside this one stored meanwhile
        fresh = [p for p in pending if p.request_id not in in_batches and p.key not in finished]
        claimed = self.lease.claim([p.request_id for p in fresh])
        skipped = [p for p in fresh if p.request_id not in claimed]
        to_send = [p.request_id for p in fresh if p.request_id in claimed]
        self.session.given_up = []
        group = AnswerGroup(self.store, self.name, self.stored)
        unparsed: list[tuple[Question, SampleRecord]] = []

        def settle() -> None:
            """A batch's answers handed over: stored (those left unparsed once the extractor read them)."""
            group.commit()
            if unparsed:
                for sample in self._rescue(unparsed):
                    group.add(sample, 0.0)
                unparsed.clear()
                group.commit()

        asked = {r: self._requests[r] for r in self._requests if r in self._by_id}
        for request_id, output in self.session.answers(asked, mine, to_send, settle=settle):
            question = self._by_id[request_id]
            sample = build_sample(question, output, self.spec)
            if self.extractor is not None and sample.status == SampleStatus.UNPARSED:
                unparsed.append((question.question, sample))
            else:
                group.add(sample, 0.0)
        settle()
        if self._gate.stopped is not None:
            raise self._gate.stopped
        given_up = self.session.given_up
        if given_up and self.policy.fallback != "realtime":
            raise self.session.unanswered() or AssertionError("given up with no error")
        return BatchOutcome(skipped, [self._by_id[request_id] for request_id in given_up])

    def _rescue(self, unparsed: list[tuple[Question, SampleRecord]]) -> list[SampleRecord]:
        """The extractor's reading of answers the rules left unparsed: in its own batches where it has a
        batch endpoint, else in real time."""
        assert self.extractor is not None
        extractor = self.extractor
        if extractor.batch_endpoint() is None:
            return rescue_unparsed(extractor, unparsed, self.spec)

        def generate(requests: list[GenerateRequest]) -> Iterator[ModelOutput]:
            return batched_generate(self.store, self.name, EXTRACTOR, extractor, requests, self.policy)

        return rescue_unparsed(extractor, unparsed, self.spec, generate)

    def _admit(self, requests: list[GenerateRequest]) -> list[GenerateRequest]:
        """The requests the run's gate lets out, in order: each at its own estimated cost while no answer
        has a cost yet (a batch's lines all go out before the first answer comes back)."""
        admitted = []
        for request in requests:
            if not self._gate.admit(self._expected(request)):
                break
            admitted.append(request)
        return admitted

    def _expected(self, request: GenerateRequest) -> float | None:
        """What a request may cost at most, at the batch share: its prompt's tokens as --estimate
        approximates them, and its whole budget of new tokens."""
        if self.spending is None:
            return None
        text = request.prompt if request.messages is None else "".join(c for _, c in request.messages)
        tokens = approximate_tokens(text)
        return self.spending.price.cost(tokens, request.max_new_tokens, batch=True)


def batched_generate(
    store: Store,
    owner: str,
    role: str,
    model: Model,
    requests: Sequence[GenerateRequest],
    policy: BatchPolicy,
) -> Iterator[ModelOutput]:
    """`model.generate(requests)` through the model's batch endpoint, for the calls made on a stored run
    (a judge's: role `judge:GRADER`): the batches kept with the run under `role`, found again after a kill;
    each output handed over as its batch is read, before the batch is marked collected. A request still
    unanswered after the policy's rounds comes back as an error (asked again by the next command)."""
    endpoint = model.batch_endpoint()
    if endpoint is None:
        raise CapabilityError(f"model {model.spec!r} has no batch endpoint: --batch is for openai:MODEL")
    session = BatchSession(store, owner, role, endpoint, policy)
    by_id = {request.id: request for request in requests}
    # the batches of this role that ask about these requests (an extractor's batch for another model
    # batch's answers stays open for that one)
    opened = [record for record in session.open_batches() if not by_id.keys().isdisjoint(record.requests)]
    in_batches = {request_id for record in opened for request_id in record.requests}
    to_send = [request.id for request in requests if request.id not in in_batches]
    for _, output in session.answers(by_id, opened, to_send, settle=store.flush):
        yield output
    for request_id in session.given_up:
        yield ModelOutput(
            request_id,
            error=f"no batch answered it in {policy.rounds} batch(es) (last: {session.why(request_id)}); the "
            "next command sends it again",
        )


def _batch_claim(input_file: str) -> str:
    """The claim (kaoshi.store.leases) of polling a batch, beside the questions' claims."""
    return f"batch:{input_file}"
