"""Reading an OpenAI-compatible server's reply: the JSON body, error objects, the answer text and the
top log-probabilities. A reply a hostile or broken server sends (not JSON, nested 100,000 levels deep,
a 5,000-digit number, an error object with status 200, no answer) raises one of the two failures below,
never anything that would end the run."""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kaoshi.models.base import CapabilityError
from kaoshi.models.reasoning import split_reasoning
from kaoshi.models.retry import is_retryable_status

# An OpenAI reply nests 6 levels (choices -> logprobs -> content -> top_logprobs -> entry -> bytes); a
# deeper one is refused before anything walks it (json.loads itself gives up at about 1,000 levels with a
# RecursionError, and repr / dumps of a few hundred levels can too).
MAX_REPLY_NESTING = 64


class TransientFailure(Exception):
    """A failure the same request may not meet again (429, 5xx, a timeout, an unreadable body). `busy`:
    the server answered that it is busy (429), so it is alive."""

    def __init__(self, message: str, retry_after: float | None = None, busy: bool = False) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.busy = busy


class FinalFailure(Exception):
    """A failure no retry within the run will fix (4xx, a reply without an answer); stored as the
    sample's error, so resuming the run asks again."""


class RetriesExhausted(FinalFailure):
    """Transient failures until the retries ran out: the server's state, not what the request held."""


def json_reply(raw: bytes) -> dict[str, Any]:
    """The body of a 2xx reply as a JSON object. A body that is not one (a proxy's HTML page, a cut-off
    reply, one too deep or with numbers too long to read) is retried. So is an error object: the status
    said success, so the server or a proxy in front of it failed, unless the object's code is an HTTP
    status that says the request itself can never succeed (400, 404, ...)."""
    data = _parse_json(raw)
    if not isinstance(data, dict):
        raise TransientFailure(f"the response body is {kind(data)}, not a JSON object")
    message = error_message(data)
    if message is None:
        return data
    failure = f"the server replied with an error: {message}"
    if _is_permanent_code(_error_code(data)):
        raise FinalFailure(failure)
    raise TransientFailure(failure)


def _parse_json(raw: bytes) -> object:
    try:
        data = _loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise TransientFailure(f"the response body is not JSON: {describe_body(raw)}") from None
    except RecursionError:
        raise TransientFailure(_TOO_DEEP) from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise TransientFailure(f"the response body is not readable JSON ({str(exc)[:120]})") from None
    if json.detect_encoding(raw).startswith("utf-8"):
        too_deep = _brackets_nest_past(raw, MAX_REPLY_NESTING)
    else:  # UTF-16 / 32: a character's bytes may read as brackets
        too_deep = _nesting_exceeds(data, MAX_REPLY_NESTING)
    if too_deep:
        raise TransientFailure(_TOO_DEEP)
    return data


# A run of digits long enough for an integer past 64 bits, which orjson reads as a float: found by
# writing every digit as 0, a point as itself and everything else as a space (C speed; a regex takes
# longer than orjson).
_DIGITS_AS_ZEROS = bytes(48 if 48 <= byte <= 57 else byte if byte == 46 else 32 for byte in range(256))
_LONG_DIGITS = b"0" * 19


def _may_hold_long_integer(raw: bytes) -> bool:
    """Whether the body may hold an integer of 19 digits or more (past 64 bits from 9,223,372,036,854,775,808
    on). A run of that many digits right after a point is a fraction: the log-probabilities a server
    writes from float32 values look so (-0.00012299999798182398, twenty digits), and reading those with
    json would take three times as long. Any other run counts, digits in strings too (json then reads a
    body orjson would have read the same)."""
    digits = raw.translate(_DIGITS_AS_ZEROS)
    start = digits.find(_LONG_DIGITS)
    while start != -1:
        if digits.rfind(b".", 0, start) <= digits.rfind(b" ", 0, start):
            return True  # the run starts after a space (anything but a point), or at the body's start
        # further on in the same run (38 digits or more) the point still comes last: the same verdict
        start = digits.find(_LONG_DIGITS, start + len(_LONG_DIGITS))
    return False


@functools.cache
def _orjson() -> Any:
    try:
        import orjson
    except ImportError:
        return None
    return orjson


def _loads(raw: bytes) -> object:
    """json.loads, through orjson where it is installed and reads the body as json would: an echo reply's
    thousands of floats in a quarter of the time. What orjson refuses (NaN, 1e400, lone surrogates, deep
    nesting, UTF-16) or would read otherwise (integers past 64 bits become floats) goes to json, whose
    reading the checks here were written for."""
    fast = _orjson()
    if fast is not None and not _may_hold_long_integer(raw):
        try:
            return fast.loads(raw)
        except fast.JSONDecodeError:
            pass
    return json.loads(raw)


_TOO_DEEP = f"the response body nests more than {MAX_REPLY_NESTING} levels deep, not an API reply"


# What a UTF-8 JSON text's nesting is read from: its quotes and brackets, and the characters that may
# follow a backslash (in UTF-8 every byte of a non-ASCII character is >= 0x80, so these bytes are these
# characters).
_ESCAPED = b"\\/bfnrtu"
_ALL_BUT_STRUCTURE = bytes(range(256)).translate(None, b'"[]{}' + _ESCAPED)
_OBJECTS_AS_LISTS = bytes.maketrans(b"{}", b"[]")


def _brackets_nest_past(raw: bytes, limit: int) -> bool:
    """Whether a UTF-8 JSON text, already parsed, nests lists and objects more than `limit` levels, read
    from its bytes: about a sixth of the time `_nesting_exceeds` takes on an echo reply's thousands of
    small objects (measured 0.1 against 0.63 ms on a 40 kB reply). Escaped backslashes and quotes are
    dropped, then the strings (quotes now always alternate open, close), and the brackets left, which
    balance, lose their innermost pairs once a level (objects read as lists). A key given twice counts
    each value given, where json keeps the last: a deep value json would drop is refused all the same."""
    structure = raw.translate(None, _ALL_BUT_STRUCTURE)
    if b"\\" in structure:
        structure = structure.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = structure.translate(None, _ESCAPED)  # other escapes, and those letters in text
    if b'"' in structure:
        structure = b"".join(structure.split(b'"')[::2])
    structure = structure.translate(_OBJECTS_AS_LISTS)  # one kind of pair, so a pass is one level
    for _ in range(limit):
        if not structure:
            return False
        structure = structure.replace(b"[]", b"")
    return bool(structure)


def _nesting_exceeds(data: object, limit: int) -> bool:
    """Whether lists and objects nest more than `limit` levels: the containers of each level gathered in
    one comprehension (an echo reply's thousands of small objects take a third of the time a walk
    popping each one off a stack takes), never recursing."""
    level = [data] if isinstance(data, (dict, list)) else []
    for _ in range(limit):
        level = [
            child
            for value in level
            for child in (value.values() if isinstance(value, dict) else value)
            if isinstance(child, (dict, list))
        ]
        if not level:
            return False
    return True


def _error_code(data: dict[str, Any]) -> object:
    """The code of an error object: `error.code` / `error.status`, or vLLM's top-level `code`."""
    error = data.get("error")
    if isinstance(error, dict):
        return error.get("code", error.get("status"))
    return data.get("code")


def _is_permanent_code(code: object) -> bool:
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    if not isinstance(code, int) or isinstance(code, bool):
        return False
    return 400 <= code < 600 and not is_retryable_status(code)


def error_message(data: object) -> str | None:
    """The message of an API error object, if any: {"error": {"message": ...}}, {"error": "..."}, or
    vLLM's {"object": "error", "message": ...}."""
    if not isinstance(data, dict):
        return None
    if data.get("error"):
        error = data["error"]
        message = error.get("message") if isinstance(error, dict) else error
    elif data.get("object") == "error":
        error = message = data.get("message")
    else:
        return None
    if not message:
        message = json.dumps(error, ensure_ascii=False)
    return " ".join(str(message).split())[:300]


def describe_error_body(raw: bytes) -> str:
    """The useful part of a 4xx body: the API's error message, else a short account of the body."""
    try:
        message = error_message(_parse_json(raw))
    except TransientFailure:
        message = None
    return message if message is not None else describe_body(raw)


def describe_body(raw: bytes) -> str:
    """A short account of a body that is not the expected JSON, for error messages."""
    text = raw[:100_000].decode("utf-8", "replace").strip()
    if not text:
        return "an empty body"
    if text.startswith("<") or "<html" in text[:500].lower():
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
        named = f" ({' '.join(title.group(1).split())[:80]!r})" if title else ""
        return f"an HTML page{named}, not an API reply (check --base-url)"
    return repr(" ".join(text[:1000].split())[:200])


def kind(value: object) -> str:
    """What a JSON value is, for messages about a reply of the wrong shape."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "an empty string" if not value else "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def token_counts(data: dict[str, Any]) -> tuple[int | None, int | None]:
    """Prompt and completion tokens from `usage`. Usage is optional in the protocol and some servers and
    proxies drop or mangle it; a bad one only loses the counts, never an answer that was paid for."""
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return None, None
    return _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))


def reasoning_tokens(data: dict[str, Any]) -> int | None:
    """The reply's reasoning tokens (`usage.completion_tokens_details.reasoning_tokens`, part of the
    completion tokens), where the server counts them; None where it does not, or sends something else."""
    usage = data.get("usage")
    details = usage.get("completion_tokens_details") if isinstance(usage, dict) else None
    return _count(details.get("reasoning_tokens")) if isinstance(details, dict) else None


def cached_tokens(data: dict[str, Any]) -> int | None:
    """The prompt tokens the server read from its prompt cache (part of the prompt tokens):
    `usage.prompt_tokens_details.cached_tokens` (OpenAI and the servers that copy it), else DeepSeek's
    `usage.prompt_cache_hit_tokens`; None where the server says neither, or sends something else."""
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return None
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict) and "cached_tokens" in details:
        return _count(details.get("cached_tokens"))
    return _count(usage.get("prompt_cache_hit_tokens"))


def served_model(data: dict[str, Any], asked: str) -> str | None:
    """The model a reply says answered, where it names another than the one asked for (a gateway routing
    elsewhere, a dated snapshot of an alias); None where it names the same one or none."""
    named = data.get("model")
    if not isinstance(named, str) or not named.strip() or named == asked:
        return None
    return " ".join(named.split())[:200]


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def first_choice(data: dict[str, Any]) -> dict[str, Any]:
    choices = data.get("choices")
    if choices is None or choices == []:
        raise FinalFailure("the response has no choices")
    if not isinstance(choices, list):
        raise FinalFailure(f"the response's choices is {kind(choices)}, not a list")
    if not isinstance(choices[0], dict):
        raise FinalFailure(f"the response's first choice is {kind(choices[0])}, not an object")
    choice: dict[str, Any] = choices[0]
    return choice


@dataclass(frozen=True)
class ReplyParts:
    """A choice's answer text, the reasoning a reasoning model sent beside it (`reasoning_content`, or
    `reasoning`; else a think block that opens the text, models/reasoning.py), and whether the reply
    stopped at the token budget (finish_reason "length")."""

    text: str
    reasoning: str | None
    cut_off: bool


def reply_parts(choice: dict[str, Any], max_chars: int) -> ReplyParts:
    """A choice's answer, reasoning and cut-off. A reply cut off at the token budget before any answer
    (a reasoning model still reasoning) is an empty answer, graded wrong and counted cut off, as every
    official scorer counts it: the model failed the question, the server did not fail the request. A
    reply that ended after reasoning without an answer is likewise an empty answer, graded wrong. A reply
    that ended with nothing at all is the sample's error (the same command asks again)."""
    message: dict[str, Any] = {}
    if "message" in choice:
        if not isinstance(choice["message"], dict):
            raise FinalFailure(f"the reply's message is {kind(choice['message'])}, not an object")
        message = choice["message"]
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal.strip():
            raise FinalFailure(f"the model refused: {' '.join(refusal[:1000].split())[:200]}")
        text, field = message.get("content"), "message.content"
    else:
        text, field = choice.get("text"), "text"
    if text is not None and not isinstance(text, str):
        raise FinalFailure(f"the reply's {field} is {kind(text)}, not text")
    reasoning = _reasoning(message, max_chars)
    if reasoning is None and text:
        # A server without a reasoning parser sends the think block in the text itself.
        thought, text = split_reasoning(text)
        reasoning = thought[:max_chars] if thought is not None else None
    cut_off = choice.get("finish_reason") == "length"
    if not text or not text.strip():
        if cut_off or reasoning is not None:
            # The model reasoned and gave no answer (cut off, or it stopped there): it failed the question,
            # an empty answer graded wrong; an error would leave it out of the accuracy and raise it.
            return ReplyParts(text or "", reasoning, cut_off=cut_off)
        what = f"no {field}" if text is None else "empty completion"
        raise FinalFailure(_no_answer_reason(choice, reasoning, what))
    if len(text) > max_chars:
        raise FinalFailure(
            f"the reply's {field} holds {len(text):,} characters, over the limit of {max_chars:,} "
            "(--max-reply-chars)"
        )
    return ReplyParts(text, reasoning, cut_off)


def _reasoning(message: dict[str, Any], max_chars: int) -> str | None:
    """The reasoning a chat message carries beside its answer (vLLM and DeepSeek write
    `reasoning_content`, others `reasoning`), kept to `max_chars` characters."""
    for field in ("reasoning_content", "reasoning"):
        value = message.get(field)
        if isinstance(value, str) and value.strip():
            return value[:max_chars]
    return None


def _no_answer_reason(choice: dict[str, Any], reasoning: str | None, what: str) -> str:
    """Why a reply that was not cut off holds no answer text, e.g. 'empty completion
    (finish_reason=stop)'; one holding only reasoning says so."""
    finish = choice.get("finish_reason")
    reason = f"{what} (finish_reason={finish[:40]})" if isinstance(finish, str) else what
    if reasoning is not None:
        reason += f"; the reply holds only reasoning ({len(reasoning)} characters)"
    return reason


def top_logprobs(choice: dict[str, Any]) -> dict[str, float]:
    """Token -> log-probability at the first generated position (chat and legacy completion shapes);
    tokens are stripped of surrounding spaces, keeping the best score for each. A value that is not a
    log-probability (missing, not a number, NaN, infinite, above 0) makes the whole reply unusable."""
    logprobs = choice.get("logprobs")
    pairs = _top_pairs(logprobs) if isinstance(logprobs, dict) else []
    if not pairs:
        raise FinalFailure("the response has no top log-probabilities (does the endpoint support logprobs?)")
    best: dict[str, float] = {}
    for token, value in pairs:
        if not isinstance(token, str):
            raise FinalFailure(
                f"the reply's top log-probabilities hold a token that is {kind(token)}, not text"
            )
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value > 0
        ):
            shown = "missing" if value is _MISSING else repr(value)[:40]
            raise FinalFailure(
                f"the reply's log-probability of token {token[:40]!r} is {shown}, not a number <= 0"
            )
        key = token.strip()
        best[key] = max(float(value), best.get(key, float("-inf")))
    return best


_MISSING = object()


def _top_pairs(logprobs: dict[str, Any]) -> list[tuple[object, object]]:
    """(token, log-probability) pairs at the first position: chat `content[0].top_logprobs` (a list of
    objects) or legacy completion `top_logprobs[0]` (token -> value)."""
    content = logprobs.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        top = content[0].get("top_logprobs")
        if not isinstance(top, list):
            return []
        if not all(isinstance(entry, dict) for entry in top):
            raise FinalFailure("the reply's top log-probabilities are not all objects")
        return [(entry.get("token"), entry.get("logprob", _MISSING)) for entry in top]
    legacy = logprobs.get("top_logprobs")
    if isinstance(legacy, list) and legacy and isinstance(legacy[0], dict):
        return list(legacy[0].items())
    return []


def check_next_token_rankable(candidates: Sequence[str]) -> None:
    """Refuse candidates that one next token cannot rank (chat messages, whose endpoint gives no prompt
    log-probabilities): when an answer extends another ('A' and 'AB', multiple-choice letter sets) the
    first token's log-probability is the same for both. Plain prompts score whole answers instead
    (openai_loglik.py)."""
    for shorter in candidates:
        longer = next((c for c in candidates if c != shorter and c.startswith(shorter)), None)
        if longer is not None:
            raise CapabilityError(
                "the openai backend ranks answers by the next token's log-probability in chat messages, "
                f"which cannot tell {shorter!r} from {longer!r} (multiple choice); with --no-chat (the "
                "default for --method loglik) it scores whole answers through a completions endpoint "
                "that echoes prompt log-probabilities (vLLM, llama-cpp-python's server), or use --method "
                "generate"
            )
