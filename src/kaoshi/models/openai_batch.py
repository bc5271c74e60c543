"""A provider's batch endpoint: OpenAI's Batch API, and the providers' copies of it (Alibaba Model Studio's
on its compatible-mode base URL, Together's, ...): the requests written as one JSONL file, uploaded
(`POST /files`, purpose `batch`), run as a batch (`POST /batches`) within a 24-hour window at about half
the real-time price, polled (`GET /batches/{id}`), and read back from its output and error files. Each
line of the output is the reply a real-time request gets, read by the same code (openai_api.py).

A batch is found again after its process died by listing the provider's batches (`GET /batches`, newest
first): it carries in its metadata the run, the store and the input file it was made from
(kaoshi.runner.batching). Each call is retried on the transient failures a real-time request is (429,
5xx, timeouts, connection errors), with the same backoff."""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kaoshi.models.base import GenerateRequest, ModelError, ModelOutput
from kaoshi.models.batches import WINDOW, BatchResults, BatchState
from kaoshi.models.openai_replies import FinalFailure, TransientFailure, describe_error_body, json_reply
from kaoshi.models.openai_transport import describe_client_error
from kaoshi.models.retry import Backoff, is_retryable_status, parse_retry_after
from kaoshi.models.secrets import redact, strip_credentials

if TYPE_CHECKING:
    from kaoshi.models.openai_api import OpenAIModel

_LIST_PAGE = 100


class OpenAIBatches:
    """The batch endpoint of an openai: model's first base URL."""

    def __init__(self, model: OpenAIModel) -> None:
        self.model = model
        self.base_url = model.base_urls[0]
        self.target = model.targets[self.base_url]
        self._rng = random.Random(model.options.seed)
        self._backoff = Backoff()

    @property
    def where(self) -> str:
        """The endpoint in words, without credentials."""
        return strip_credentials(self.base_url)

    # -- the input file -------------------------------------------------------------------------------
    def endpoint_of(self, request: GenerateRequest) -> str:
        """The batch endpoint a request's line goes to: `/v1/chat/completions` or `/v1/completions`."""
        path, _ = self.model.generation_body(request)
        return "/v1" + path

    def line(self, request: GenerateRequest) -> bytes:
        """The request as one line of a batch's input file (its custom_id: the request's id, custom_id())."""
        path, body = self.model.generation_body(request)
        record = {"custom_id": custom_id(request.id), "method": "POST", "url": "/v1" + path, "body": body}
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"

    # -- the calls --------------------------------------------------------------------------------------
    def upload(self, content: bytes, filename: str) -> str:
        """Upload an input file; its id."""

        async def call(client: Any) -> Any:
            import aiohttp

            form = aiohttp.FormData()
            form.add_field("purpose", "batch")
            form.add_field("file", content, filename=filename, content_type="application/jsonl")
            return await client.post(self.target.url("/files"), data=form, headers=self.target.headers)

        data = self._json(self._call(call, "upload the batch's input file"))
        if not isinstance(data.get("id"), str):
            raise ModelError(f"{self.where}: the upload's reply names no file id")
        return str(data["id"])

    def create(self, input_file: str, endpoint: str, metadata: Mapping[str, str]) -> BatchState:
        body = {
            "input_file_id": input_file,
            "endpoint": endpoint,
            "completion_window": WINDOW,
            "metadata": dict(metadata),
        }
        # Not idempotent: a failure after the provider made it (a timeout, a 5xx) must not make a second
        # batch of the same file, so it is sent once; the caller looks the batch up (runner.batching). A 429
        # says the batch was refused, and is retried.
        reply = self._request("POST", "/batches", body, "create the batch", ambiguous_retries=False)
        return self._state(reply)

    def get(self, batch_id: str) -> BatchState:
        return self._state(self._request("GET", f"/batches/{batch_id}", None, f"read batch {batch_id}"))

    def cancel(self, batch_id: str) -> BatchState:
        return self._state(
            self._request("POST", f"/batches/{batch_id}/cancel", None, f"cancel batch {batch_id}")
        )

    def listed(self, since: float) -> Iterator[BatchState]:
        """The provider's batches page by page (newest first, as OpenAI lists them), until a whole page
        was created before `since` (seconds since the epoch), the list ends, or a page repeats."""
        after: str | None = None
        seen: set[str] = set()
        while True:
            path = f"/batches?limit={_LIST_PAGE}" + (f"&after={after}" if after else "")
            page = self._request("GET", path, None, "list the batches")
            batches = [self._state(item) for item in page.get("data") or [] if isinstance(item, Mapping)]
            yield from batches
            older = all(state.created_at and state.created_at < since for state in batches)
            if not page.get("has_more") or not batches or older or batches[-1].id in seen:
                return
            seen.add(batches[-1].id)
            after = batches[-1].id

    def content(self, file_id: str) -> bytes:
        """A file's content (a batch's input, output or error file)."""

        async def call(client: Any) -> Any:
            return await client.get(self.target.url(f"/files/{file_id}/content"), headers=self.target.headers)

        return self._call(call, f"download file {file_id}")

    # -- reading a finished batch ------------------------------------------------------------------------
    def results(self, state: BatchState, requests: Mapping[str, GenerateRequest]) -> BatchResults:
        """Each of `requests` the batch answered, read as a real-time reply is, and why each other got no
        answer. A line that is not JSON, or names a request not asked, is skipped (its request, if any, is
        then missing); a file that cannot be read as lines is a ModelError (the batch is read again)."""
        outputs: dict[str, ModelOutput] = {}
        failed: dict[str, str] = {}
        for file_id in (state.output_file, state.error_file):
            if not file_id:
                continue
            for record in _records(self.content(file_id), file_id, self.where):
                written = record.get("custom_id")
                custom_id = request_of(written) if isinstance(written, str) else None
                if custom_id is None or custom_id not in requests:
                    continue
                if custom_id in outputs:
                    continue  # a request answered twice in one batch is read once
                answer, why = self._read_line(record, requests[custom_id])
                if answer is not None:
                    outputs[custom_id] = answer
                    failed.pop(custom_id, None)
                else:
                    failed[custom_id] = why
        if state.status != "completed" or state.errors:
            reason = f"the batch {state.status}" + (f" ({state.errors})" if state.errors else "")
        else:
            reason = "the batch's files hold no line for it"
        for request_id in requests:
            if request_id not in outputs and request_id not in failed:
                failed[request_id] = reason
        return BatchResults(outputs, failed)

    def _read_line(
        self, record: Mapping[str, Any], request: GenerateRequest
    ) -> tuple[ModelOutput | None, str]:
        """A line's answer, or None and why it has none. A reply with status 200 is an answer even when it
        holds no usable text (an error sample that keeps its tokens, as in real time), and so is a status no
        retry fixes (a 400 for a prompt over the context: an error sample, as in real time); a status a
        retry may fix (429, 5xx) or a line's own error (batch_expired, batch_cancelled) is a failed
        request, sent again."""
        response = record.get("response")
        error = record.get("error")
        if isinstance(response, Mapping) and response.get("status_code") == 200:
            data = response.get("body")
            if isinstance(data, Mapping):
                output = self.model.read_reply(
                    request.id, dict(data), self.model.generation_reader(request), 0.0
                )
                return self.model.redacted(replace(output, latency_s=None)), ""
            return None, "its reply has no body"
        if isinstance(response, Mapping) and response.get("status_code") is not None:
            body = response.get("body")
            shown = describe_error_body(json.dumps(body).encode()) if body is not None else "no body"
            said = self._redact(f"HTTP {response.get('status_code')}: {shown}")
            status = response.get("status_code")
            if isinstance(status, int) and not is_retryable_status(status) and status >= 400:
                return ModelOutput(request.id, error=said), ""
            return None, said
        if isinstance(error, Mapping):
            return None, self._redact(
                f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip(": ")
            )
        return None, "its line holds neither a reply nor an error"

    # -- transport --------------------------------------------------------------------------------------
    def _state(self, data: Mapping[str, Any]) -> BatchState:
        try:
            return BatchState.parse(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelError(
                f"{self.where}: a batch reply of unexpected shape ({type(exc).__name__}: {exc})"
            ) from None

    def _request(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        what: str,
        *,
        ambiguous_retries: bool = True,
    ) -> dict[str, Any]:
        async def call(client: Any) -> Any:
            return await client.request(method, self.target.url(path), json=body, headers=self.target.headers)

        return self._json(self._call(call, what, ambiguous_retries=ambiguous_retries))

    def _json(self, raw: bytes) -> dict[str, Any]:
        try:
            return json_reply(raw)
        except (TransientFailure, FinalFailure) as exc:
            raise ModelError(f"{self.where}: {self._redact(str(exc))}") from None

    def _call(self, send: Any, what: str, *, ambiguous_retries: bool = True) -> bytes:
        """The body of a successful reply to `send(client)`, retried on transient failures with the
        backend's backoff (--max-retries, --timeout); ModelError saying what could not be done.
        `ambiguous_retries`: retry also where the server may have acted (a timeout, a 5xx), not only a 429.
        Each attempt runs on an event loop of its own in a worker thread, so that a caller inside a running
        loop (a notebook) can call it too."""
        options = self.model.options
        failure = ""
        for attempt in range(options.max_retries + 1):
            with ThreadPoolExecutor(max_workers=1) as worker:
                result = worker.submit(asyncio.run, self._attempt(send)).result()
            if isinstance(result, bytes):
                return result
            failure, retry_after, final = result
            if final or (not ambiguous_retries and not failure.startswith("HTTP 429")):
                break
            if attempt < options.max_retries:
                cap = self.model.max_wait_s
                time.sleep(self._backoff.delay(attempt, self._rng, retry_after, cap))
        raise ModelError(f"{self.where}: could not {what}: {self._redact(failure)}")

    async def _attempt(self, send: Any) -> bytes | tuple[str, float | None, bool]:
        """One attempt: the reply's body, or (what failed, Retry-After, whether retrying is of no use)."""
        import aiohttp

        timeout = aiohttp.ClientTimeout(total=self.model.options.timeout_s)
        try:
            async with aiohttp.ClientSession(timeout=timeout) as client:
                response = await send(client)
                async with response:
                    status = response.status
                    raw: bytes = await response.read()
                    retry_after = parse_retry_after(response.headers.get("Retry-After"))
        except asyncio.TimeoutError:
            return f"timed out after {self.model.options.timeout_s:g} s", None, False
        except aiohttp.ClientError as exc:
            return describe_client_error(exc), None, False
        if is_retryable_status(status):
            return f"HTTP {status}: {describe_error_body(raw)}", retry_after, False
        if status >= 400:
            return f"HTTP {status}: {describe_error_body(raw)}", None, True
        return raw

    def _redact(self, text: str) -> str:
        return redact(text, self.model.secrets)


def custom_id(request_id: str) -> str:
    """A request's id as a batch line's custom_id: control characters (the mark of a sample after a
    question's first, kaoshi.models.base.request_id) and `%` written as `%XX`, since a provider may refuse
    control characters in an id; request_of reads it back."""
    return _ESCAPED.sub(lambda found: f"%{ord(found.group()):02X}", request_id)


def request_of(custom: str) -> str:
    """The request id a custom_id was written from (custom_id's inverse)."""
    return _ESCAPE.sub(lambda found: chr(int(found.group(1), 16)), custom)


_ESCAPED = re.compile(r"[%\x00-\x1f\x7f]")
_ESCAPE = re.compile(r"%([0-9A-F]{2})")


def _records(raw: bytes, file_id: str, where: str) -> Iterator[dict[str, Any]]:
    """A JSONL file's objects. A last line cut off (a download that ended early) makes the whole file
    unreadable: ModelError, so that it is downloaded again rather than read in part."""
    if raw and not raw.endswith(b"\n"):
        tail = raw.rsplit(b"\n", 1)[-1]
        try:
            json.loads(tail)
        except ValueError:
            raise ModelError(f"{where}: file {file_id} ends in the middle of a line; not read") from None
    for line in raw.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise ModelError(f"{where}: file {file_id} holds a line that is not JSON; not read") from None
        if isinstance(record, dict):
            yield record
