"""OpenAI's Batch API for the fake server (`FakeOpenAI.batch`): files and batches, worked through by
polls, with scripted faults.

Routes, under /v1 (a query string such as `?api-key=K` is ignored): POST /files (multipart: `purpose`
batch, `file`), GET /files/{id}, GET /files/{id}/content, DELETE /files/{id}, POST /batches, GET /batches
(`limit`, `after`; newest first), GET /batches/{id}, POST /batches/{id}/cancel. None of these requests is
in FakeOpenAI's `bodies`, `headers` or `paths`; they count toward its `max_requests` on their own.

A batch's progress is counted in polls, never in time. It is `validating` when created, and each
GET /batches/{id} moves it one step: in_progress (for as many polls as it takes), finalizing, then its
final status at the `polls_to_finish`-th poll (0: final at creation). Validation runs at creation: each
line valid JSON with a unique `custom_id`, method POST, url the batch's endpoint and a `body` object, at
most `max_lines` lines and `max_bytes` bytes; any problem (or a scripted failure) makes the batch `failed`,
with `errors` naming each problem and its line, and no files. At the final status every line is answered,
in input order, as a real-time request with the same body would be (`FakeOpenAI.answer`: `answers`,
`answer_for`, `prefix_cache`, `usages` included; not `faults`, `latency_s` or `outage_s`). Status 200
replies go to the output file, in a seeded shuffled order that is never the input order; other statuses
(a refused echo request, a body with no prompt) go to the error file, as do scripted failures. A
cancelled batch, and an expired one, answered the first half of its lines (input order, rounded down);
the rest go to the error file with code `batch_cancelled` or `batch_expired`. `request_counts`: total
lines, lines in the output file, lines in the error file (0, 0 until the batch is final).

Faults, set on `fake.batch` before or between requests; each counter counts down as it is used:
- `fail_lines = {KEY: N}`: a line whose custom_id is KEY, or whose prompt contains KEY (the prompt as
  FakeOpenAI's `faults` read it: the last message's content, or the completions prompt), fails the next N
  times it is run (one per batch holding it; the first key that matches counts), then succeeds: a status
  500 server_error line in the error file.
- `fail_batches = N`: the next N batches created fail validation, code `scripted`.
- `expire_batches = N`: the next N valid batches end `expired` instead of `completed`.
- `cancel_batches = N`: the next N valid batches are cancelled by someone else (the provider's console):
  their first poll finds them `cancelling`, the next `cancelled` (at creation when polls_to_finish is 0).
- `unreadable_output = N`: the next N downloads of a batch's output file get it cut in the middle of a
  line, with status 200.
- `content_errors = N`: the next N GET /files/{id}/content answer 500.
- `list_page`: the page size of GET /batches without `limit` (at most 100 either way).

Observations: `created` (each batch created, valid or not: id, endpoint, input_file_id, metadata, its
lines' custom_ids and the lines themselves, in input order), `succeeded` (custom_id -> output lines
served for it, counted when a batch reaches its final status), `uploads`, `polls` (GET /batches/{id}),
`cancels` (the batch ids a client asked to cancel), `downloads` (the file ids whose content was served
whole), `batch_usage` (prompt_tokens, completion_tokens and cached_tokens summed over the output lines)
and `requests` (each request's method and target).
"""

from __future__ import annotations

import email.message
import email.utils
import itertools
import json
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qs

ENDPOINTS = ("/v1/chat/completions", "/v1/completions")
FINAL = ("completed", "failed", "expired", "cancelled")
RUNNING = ("validating", "in_progress", "finalizing")
MAX_PAGE = 100

Reply = tuple[int, dict[str, str], bytes]


class Answerer(Protocol):
    """What answers a batch's lines: FakeOpenAI, as it answers a real-time request."""

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]: ...


@dataclass
class StoredFile:
    id: str
    filename: str
    purpose: str
    content: bytes
    created_at: int

    def as_object(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.content),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
        }


@dataclass
class Batch:
    id: str
    endpoint: str
    input_file_id: str
    completion_window: str
    metadata: dict[str, str] | None
    created_at: int
    lines: list[dict[str, Any]]
    ending: str = "completed"  # the final status its polls lead to: completed, expired, or cancelled
    polls_left: int = 0
    status: str = "validating"
    times: dict[str, int | None] = field(default_factory=dict)  # in_progress_at, completed_at, ...
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: list[dict[str, Any]] | None = None
    counts: tuple[int, int] = (0, 0)  # lines in the output file, in the error file

    def stamp(self, status: str) -> None:
        self.status = status
        self.times.setdefault(f"{status}_at", int(time.time()))

    def as_object(self) -> dict[str, Any]:
        moments = ("in_progress", "finalizing", "completed", "failed", "expired", "cancelling", "cancelled")
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "input_file_id": self.input_file_id,
            "completion_window": self.completion_window,
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "expires_at": self.created_at + 24 * 3600,
            **{f"{moment}_at": self.times.get(f"{moment}_at") for moment in moments},
            "errors": None if self.errors is None else {"object": "list", "data": self.errors},
            "request_counts": {
                "total": len(self.lines) if self.status != "failed" else 0,
                "completed": self.counts[0],
                "failed": self.counts[1],
            },
            "metadata": self.metadata,
        }


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    raw: bytes
    content_type: str
    answerer: Answerer
    ids: tuple[str, ...]  # the route's captured ids


@dataclass
class FakeBatches:
    polls_to_finish: int = 3
    max_lines: int = 50_000
    max_bytes: int = 200 * 1024 * 1024
    seed: int = 0  # the output files' shuffles
    # faults (see the module's docstring)
    fail_lines: dict[str, int] = field(default_factory=dict)
    fail_batches: int = 0
    expire_batches: int = 0
    cancel_batches: int = 0
    unreadable_output: int = 0
    content_errors: int = 0
    list_page: int = 20
    # observations
    created: list[dict[str, Any]] = field(default_factory=list)
    succeeded: Counter[str] = field(default_factory=Counter)
    uploads: int = 0
    polls: int = 0
    cancels: list[str] = field(default_factory=list)
    downloads: list[str] = field(default_factory=list)
    batch_usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0}
    )
    requests: list[str] = field(default_factory=list)
    line_attempts: Counter[str] = field(default_factory=Counter)  # fail_lines keys' failures so far
    _files: dict[str, StoredFile] = field(default_factory=dict)
    _batches: dict[str, Batch] = field(default_factory=dict)  # in creation order
    _output_files: set[str] = field(default_factory=set)
    _numbers: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @staticmethod
    def serves(target: str) -> bool:
        """Whether a request target is the Batch API's (a mangled one is then answered 404 here)."""
        segments = target.partition("?")[0].split("/")
        return "files" in segments or "batches" in segments

    def respond(self, method: str, target: str, raw: bytes, content_type: str, answerer: Answerer) -> Reply:
        """The status, extra headers and body answering one Batch API request."""
        self.requests.append(f"{method} {target}")
        path, _, query = target.partition("?")
        allowed = False
        for route_method, pattern, handler in ROUTES:
            match = pattern.fullmatch(path)
            if match is None:
                continue
            allowed = True
            if route_method == method:
                ids = tuple(match.groups())
                return handler(self, Request(method, path, parse_qs(query), raw, content_type, answerer, ids))
        if allowed:
            return _error(405, f"method {method} not allowed on {path}")
        return _error(404, f"no route {path}")

    # -- files -----------------------------------------------------------------------------------------
    def _upload(self, request: Request) -> Reply:
        try:
            fields = parse_multipart(request.raw, request.content_type)
        except ValueError as exc:
            return _error(400, f"unreadable multipart body: {exc}")
        purpose = fields.get("purpose", (None, b""))[1].decode(errors="replace")
        if purpose != "batch":
            return _error(400, f"purpose must be 'batch', not {purpose!r}", param="purpose")
        filename, content = fields.get("file", (None, b""))
        if filename is None:
            return _error(400, "a file field with a filename is required", param="file")
        self.uploads += 1
        return _json(200, self._store(filename, "batch", content).as_object())

    def _store(self, filename: str, purpose: str, content: bytes) -> StoredFile:
        stored = StoredFile(self._new_id("file-"), filename, purpose, content, int(time.time()))
        self._files[stored.id] = stored
        return stored

    def _file(self, request: Request) -> Reply:
        stored = self._files.get(request.ids[0])
        if stored is None:
            return _error(404, f"No such File object: {request.ids[0]}", param="id")
        return _json(200, stored.as_object())

    def _delete_file(self, request: Request) -> Reply:
        if self._files.pop(request.ids[0], None) is None:
            return _error(404, f"No such File object: {request.ids[0]}", param="id")
        return _json(200, {"id": request.ids[0], "object": "file", "deleted": True})

    def _content(self, request: Request) -> Reply:
        stored = self._files.get(request.ids[0])
        if stored is None:
            return _error(404, f"No such File object: {request.ids[0]}", param="id")
        if self.content_errors > 0:
            self.content_errors -= 1
            return _error(500, "The server had an error while processing your request.", kind="server_error")
        content = stored.content
        if stored.id in self._output_files and self.unreadable_output > 0:
            self.unreadable_output -= 1
            content = cut_mid_line(content)
        else:
            self.downloads.append(stored.id)
        return 200, {"Content-Type": "application/octet-stream"}, content

    # -- batches ---------------------------------------------------------------------------------------
    def _create(self, request: Request) -> Reply:
        try:
            body = json.loads(request.raw)
        except ValueError:
            return _error(400, "the body is not JSON")
        if not isinstance(body, dict):
            return _error(400, "the body is not a JSON object")
        stored = self._files.get(str(body.get("input_file_id")))
        if stored is None:
            return _error(400, f"No file found with id {body.get('input_file_id')!r}", param="input_file_id")
        endpoint = body.get("endpoint")
        if endpoint not in ENDPOINTS:
            return _error(400, f"endpoint must be one of {', '.join(ENDPOINTS)}", param="endpoint")
        if body.get("completion_window") != "24h":
            return _error(400, "completion_window must be '24h'", param="completion_window")
        metadata = body.get("metadata")
        problem = metadata_problem(metadata)
        if problem is not None:
            return _error(400, problem, param="metadata")
        lines, errors = self._read_lines(stored.content, endpoint)
        batch = Batch(self._new_id("batch_"), endpoint, stored.id, "24h", metadata, int(time.time()), lines)
        self._batches[batch.id] = batch
        self.created.append(
            {
                "id": batch.id,
                "endpoint": endpoint,
                "input_file_id": stored.id,
                "metadata": metadata,
                "custom_ids": [line.get("custom_id") for line in lines],
                "lines": lines,
            }
        )
        if not errors and self.fail_batches > 0:
            self.fail_batches -= 1
            errors = [_line_error("scripted", "scripted validation failure", None)]
        if errors:
            batch.errors = errors
            batch.stamp("failed")
            return _json(200, batch.as_object())
        if self.expire_batches > 0:
            self.expire_batches -= 1
            batch.ending = "expired"
        elif self.cancel_batches > 0:
            self.cancel_batches -= 1
            batch.ending = "cancelled"
        batch.polls_left = self.polls_to_finish
        if self.polls_to_finish <= 0:
            self._finish(batch, batch.ending, request.answerer)
        return _json(200, batch.as_object())

    def _read_lines(self, content: bytes, endpoint: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The input file's lines that are JSON objects, and the problems validation finds."""
        if len(content) > self.max_bytes:
            return [], [_line_error("file_too_large", f"over {self.max_bytes} bytes", None)]
        try:
            rows = content.decode("utf-8").split("\n")
        except UnicodeDecodeError:
            return [], [_line_error("invalid_encoding", "the file is not UTF-8", None)]
        if rows[-1] == "":
            rows.pop()
        if not rows:
            return [], [_line_error("empty_file", "the file has no lines", None)]
        if len(rows) > self.max_lines:
            return [], [_line_error("too_many_requests", f"over {self.max_lines} lines", None)]
        lines: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        seen: set[str] = set()
        for number, row in enumerate(rows, 1):
            try:
                line = json.loads(row)
            except ValueError:
                line = None
            if not isinstance(line, dict):
                errors.append(_line_error("invalid_json_line", "not a JSON object", number))
                continue
            lines.append(line)
            problem = line_problem(line, endpoint, seen)
            if problem is not None:
                errors.append(_line_error(*problem, number))
        return lines, errors

    def _batch(self, request: Request) -> Reply:
        batch = self._batches.get(request.ids[0])
        if batch is None:
            return _error(404, f"No such Batch object: {request.ids[0]}", param="id")
        self.polls += 1
        self._advance(batch, request.answerer)
        return _json(200, batch.as_object())

    def _advance(self, batch: Batch, answerer: Answerer) -> None:
        """One poll's step."""
        if batch.status in FINAL:
            return
        if batch.status == "cancelling":
            self._finish(batch, "cancelled", answerer)
        elif batch.ending == "cancelled":  # cancelled by someone else
            batch.stamp("cancelling")
        else:
            batch.polls_left -= 1
            if batch.polls_left <= 0:
                self._finish(batch, batch.ending, answerer)
            elif batch.status == "validating" or batch.polls_left > 1:
                batch.stamp("in_progress")
            else:
                batch.stamp("finalizing")

    def _cancel(self, request: Request) -> Reply:
        batch = self._batches.get(request.ids[0])
        if batch is None:
            return _error(404, f"No such Batch object: {request.ids[0]}", param="id")
        self.cancels.append(batch.id)
        if batch.status in RUNNING:
            batch.stamp("cancelling")
        elif batch.status != "cancelling":
            return _error(400, f"Cannot cancel a batch with status '{batch.status}'.")
        return _json(200, batch.as_object())

    def _list(self, request: Request) -> Reply:
        try:
            limit = int(request.query.get("limit", [self.list_page])[-1])
        except ValueError:
            return _error(400, "limit must be an integer", param="limit")
        limit = min(max(limit, 1), MAX_PAGE)
        newest_first = list(reversed(self._batches))
        start = 0
        if "after" in request.query:
            after = request.query["after"][-1]
            if after not in self._batches:
                return _error(400, f"No such Batch object: {after}", param="after")
            start = newest_first.index(after) + 1
        page = newest_first[start : start + limit]
        listing = {
            "object": "list",
            "data": [self._batches[batch_id].as_object() for batch_id in page],
            "first_id": page[0] if page else None,
            "last_id": page[-1] if page else None,
            "has_more": start + limit < len(newest_first),
        }
        return _json(200, listing)

    # -- answering -------------------------------------------------------------------------------------
    def _finish(self, batch: Batch, status: str, answerer: Answerer) -> None:
        """Answer the batch's lines and write its files: all of them (completed), or the first half."""
        batch.times.setdefault("in_progress_at", int(time.time()))
        done = batch.lines if status == "completed" else batch.lines[: len(batch.lines) // 2]
        outputs: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for line in done:
            record = self._run(line, answerer)
            (outputs if record["response"]["status_code"] == 200 else errors).append(record)
        code = "batch_expired" if status == "expired" else "batch_cancelled"
        for line in batch.lines[len(done) :]:
            message = f"This request could not be executed before the batch was {status}."
            error = {"code": code, "message": message}
            errors.append(
                {
                    "id": self._new_id("batch_req_"),
                    "custom_id": line["custom_id"],
                    "response": None,
                    "error": error,
                }
            )
        order = list(range(len(outputs)))
        random.Random(f"{self.seed}:{batch.id}").shuffle(order)
        if len(order) > 1 and order == sorted(order):
            order = order[1:] + order[:1]
        outputs = [outputs[i] for i in order]
        if outputs:
            stored = self._store(f"{batch.id}_output.jsonl", "batch_output", _jsonl(outputs))
            self._output_files.add(stored.id)
            batch.output_file_id = stored.id
        if errors:
            batch.error_file_id = self._store(f"{batch.id}_error.jsonl", "batch_output", _jsonl(errors)).id
        batch.counts = (len(outputs), len(errors))
        for record in outputs:
            self.succeeded[record["custom_id"]] += 1
            self._add_usage(record["response"]["body"].get("usage"))
        if status == "completed":
            batch.times.setdefault("finalizing_at", int(time.time()))
        batch.stamp(status)

    def _run(self, line: dict[str, Any], answerer: Answerer) -> dict[str, Any]:
        """One line's output record: the real-time answer to its body, or a scripted failure."""
        custom_id, body = line["custom_id"], line["body"]
        prompt = prompt_text(body)
        key = next((k for k in self.fail_lines if k == custom_id or k in prompt), None)
        if key is not None and self.line_attempts[key] < self.fail_lines[key]:
            self.line_attempts[key] += 1
            status = 500
            reply: dict[str, Any] = {"error": {"message": "scripted line failure", "type": "server_error"}}
        else:
            try:
                status, reply = answerer.answer(body)
            except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
                status = 400
                message = f"invalid request body: {exc!r}"
                reply = {"error": {"message": message, "type": "invalid_request_error"}}
        response = {"status_code": status, "request_id": self._new_id("req_"), "body": reply}
        return {"id": self._new_id("batch_req_"), "custom_id": custom_id, "response": response, "error": None}

    def _add_usage(self, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        details = usage.get("prompt_tokens_details")
        cached = details.get("cached_tokens", 0) if isinstance(details, dict) else 0
        self.batch_usage["prompt_tokens"] += int(usage.get("prompt_tokens", 0))
        self.batch_usage["completion_tokens"] += int(usage.get("completion_tokens", 0))
        self.batch_usage["cached_tokens"] += int(cached or usage.get("prompt_cache_hit_tokens", 0))

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._numbers):06d}"


Handler = Callable[[FakeBatches, Request], Reply]
_ID = "([^/]+)"
ROUTES: list[tuple[str, re.Pattern[str], Handler]] = [
    ("POST", re.compile("/v1/files"), FakeBatches._upload),
    ("GET", re.compile(f"/v1/files/{_ID}"), FakeBatches._file),
    ("DELETE", re.compile(f"/v1/files/{_ID}"), FakeBatches._delete_file),
    ("GET", re.compile(f"/v1/files/{_ID}/content"), FakeBatches._content),
    ("POST", re.compile("/v1/batches"), FakeBatches._create),
    ("GET", re.compile("/v1/batches"), FakeBatches._list),
    ("GET", re.compile(f"/v1/batches/{_ID}"), FakeBatches._batch),
    ("POST", re.compile(f"/v1/batches/{_ID}/cancel"), FakeBatches._cancel),
]


def parse_multipart(raw: bytes, content_type: str) -> dict[str, tuple[str | None, bytes]]:
    """A multipart/form-data body's fields: name -> (filename or None, content)."""
    kind, params = header_params(content_type)
    boundary = params.get("boundary")
    if kind != "multipart/form-data" or not boundary:
        raise ValueError(f"Content-Type {content_type!r} is not multipart/form-data with a boundary")
    parts = raw.split(b"--" + boundary.encode())
    if len(parts) < 3 or not parts[-1].startswith(b"--"):
        raise ValueError("no closing boundary")
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in parts[1:-1]:
        head, separator, content = part.removeprefix(b"\r\n").partition(b"\r\n\r\n")
        if not separator or not content.endswith(b"\r\n"):
            raise ValueError("a part without headers or its closing line break")
        headers = {}
        for line in head.decode().split("\r\n"):
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        _, names = header_params(headers.get("content-disposition", ""))
        if "name" not in names:
            raise ValueError("a part without a name")
        fields[names["name"]] = (names.get("filename"), content[:-2])
    return fields


def header_params(value: str) -> tuple[str, dict[str, str]]:
    """A header's main value (lower case) and its parameters (RFC 2231 values decoded)."""
    message = email.message.Message()
    message["x"] = value
    params = message.get_params(header="x") or [("", "")]
    decoded = {name.lower(): email.utils.collapse_rfc2231_value(text) for name, text in params[1:]}
    return params[0][0].lower(), decoded


def metadata_problem(metadata: object) -> str | None:
    """What is wrong with a batch's metadata (at most 16 keys of 64 characters, string values of at most
    512), or None."""
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        return "metadata must be an object"
    if len(metadata) > 16:
        return f"metadata has {len(metadata)} keys; at most 16 are allowed"
    for key, value in metadata.items():
        if len(key) > 64:
            return f"metadata key {key[:20]!r}... is longer than 64 characters"
        if not isinstance(value, str):
            return f"metadata value of {key!r} must be a string"
        if len(value) > 512:
            return f"metadata value of {key!r} is longer than 512 characters"
    return None


def line_problem(line: dict[str, Any], endpoint: str, seen: set[str]) -> tuple[str, str] | None:
    """The code and message of what is wrong with an input line, or None; notes its custom_id in `seen`."""
    custom_id = line.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        return "missing_custom_id", "custom_id must be a non-empty string"
    if custom_id in seen:
        return "duplicate_custom_id", f"custom_id {custom_id!r} appears more than once"
    seen.add(custom_id)
    if line.get("method") != "POST":
        return "invalid_method", f"method must be POST, not {line.get('method')!r}"
    if line.get("url") != endpoint:
        return "invalid_url", f"url {line.get('url')!r} is not the batch's endpoint {endpoint}"
    if not isinstance(line.get("body"), dict):
        return "invalid_body", "body must be an object"
    return None


def prompt_text(body: dict[str, Any]) -> str:
    """The text `fail_lines` keys are looked for in: the last message's content, or the prompt."""
    try:
        prompt = body["messages"][-1]["content"] if "messages" in body else body.get("prompt", "")
    except (KeyError, IndexError, TypeError):
        return ""
    return "\n".join(map(str, prompt)) if isinstance(prompt, list) else str(prompt)


def cut_mid_line(content: bytes) -> bytes:
    """The file cut in the middle of its middle line (on a character boundary)."""
    text = content.decode("utf-8", errors="replace")
    lines = text.split("\n")
    middle = (len(lines) - (lines[-1] == "")) // 2
    start = sum(len(line) + 1 for line in lines[:middle])
    return text[: start + max(1, len(lines[middle]) // 2)].encode()


def _line_error(code: str, message: str, line: int | None) -> dict[str, Any]:
    return {"code": code, "message": message, "param": None, "line": line}


def _jsonl(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records).encode()


def _json(status: int, payload: dict[str, Any]) -> Reply:
    return status, {}, json.dumps(payload, ensure_ascii=False).encode()


def _error(status: int, message: str, param: str | None = None, kind: str = "invalid_request_error") -> Reply:
    error = {"message": message, "type": kind, "param": param, "code": None}
    return _json(status, {"error": error})
