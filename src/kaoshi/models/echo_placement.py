"""Placing an echo reply's tokens on the prompt's text where they do not simply spell it: the slow path of
openai_echo.py, for replies that show characters split over byte tokens.

How servers show a token that is not whole text, and what it may stand for:
- vLLM (and Hugging Face decoding) writes each partial UTF-8 byte as U+FFFD, beside the characters the
  token does hold whole: '\\ufffd', ' \\ufffd', '中国\\ufffd'. Such a reply is *marked*; an empty token in it
  is a token whose text a decoder stripped (SentencePiece's '▁' alone) or a special token: whitespace.
- llama-cpp-python decodes each token alone with errors='ignore': partial bytes vanish, so a piece is ''
  and a token holding a character's tail and whole characters shows the whole ones only. Such a reply is
  *unmarked*; an empty token in it is a piece of a character.
- OpenAI writes a token that is not UTF-8 as 'bytes:\\xe7\\xa1', vLLM with token ids as 'token_id:…'.
- Special tokens appear by name ('<s>', '<|begin_of_text|>') and stand for no text.

Each whole-text token is placed where the one before it ended (or after whitespace a SentencePiece token
is shown without, or, in an unmarked reply, after the one character whose tail bytes it hides). The
tokens between two placed ones (a *run*) must account for the characters between them: a regular
expression made from what each shows (visible characters as themselves, each stretch of partial bytes as
one or more characters of several UTF-8 bytes, shared by the pieces on either side, a stripped token as
whitespace) must match those characters exactly. A run whose tokens could be divided between the
candidate and its neighbours in more than one way is refused, as is any whole-text token that is not the
prompt's next text: never a guess. Characters only pieces stand for are not shown by the tokens, and the
reply's text must vouch for them (openai_echo.read_echo).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# A special token's name as servers write it ('<s>', '<|begin_of_text|>'): it stands for no text.
SPECIAL_TOKEN = re.compile(r"<[^<>\s]{1,60}>")
# How servers write a token that is not whole text: OpenAI's partial UTF-8, vLLM's token ids.
RAW_TOKEN_PREFIXES = ("bytes:", "token_id:")
# Tokens after the prompt: the one `max_tokens: 1` asks for.
GENERATED_TOKENS = 1
_SEVERAL_BYTES = "[^\\x00-\\x7f]"  # a character of several UTF-8 bytes, the only kind a piece can split
_UNSPLIT = re.compile("[\\x00-\\x7f]")


class PlacementError(Exception):
    """The tokens are not the prompt's, or cannot be shown to be (openai_echo raises it as EchoMismatch)."""


def is_text(token: object) -> bool:
    """Whether a token string is whole text (not part of a character, not an id)."""
    return (
        isinstance(token, str)
        and bool(token)
        and "\ufffd" not in token
        and not token.startswith(RAW_TOKEN_PREFIXES)
    )


def is_special(token: object, text: str, position: int) -> bool:
    """A special token's name ('<s>') where the prompt does not hold that text."""
    return (
        isinstance(token, str)
        and SPECIAL_TOKEN.fullmatch(token) is not None
        and not text.startswith(token, position)
    )


@dataclass(frozen=True)
class Bounds:
    """The prompt's text and the scored text's place in it."""

    text: str
    start: int
    end: int
    candidate: str

    def holds(self, span: tuple[int, int]) -> bool:
        """Whether a token with this span holds characters of the scored text."""
        first, stop = span
        return (first < self.end and stop > self.start) or (first == stop and self.start <= first < self.end)


def placed_spans(tokens: Sequence[Any], bounds: Bounds) -> tuple[list[tuple[int, int]], bool]:
    """Each token's span [start, stop) in characters of the prompt (the generated token's at its end),
    and whether some characters were not shown by the tokens (only pieces, hidden bytes or a dropped
    space stand for them). Raises PlacementError where the tokens spell another text or cannot be
    divided between the candidate and its neighbours in one way only."""
    text = bounds.text
    plain = _Plain(tokens)
    marked = "\ufffd" in plain.joined
    spans: list[tuple[int, int]] = [(len(text), len(text))] * len(tokens)
    position = 0
    run: list[int] = []
    unshown = False
    previous: str | None = None  # the last whole-text token placed
    after = 0  # tokens after the prompt
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if position >= len(text) and not run:
            after = len(tokens) - index
            break
        if not run:  # whole-text tokens spelling the prompt from here, placed together at C speed
            count, stop = plain.spelled(index, text, position)
            if count:
                plain.place(spans, index, count, position, bounds)
                index, position, previous = index + count, stop, str(tokens[index + count - 1])
                continue
        if not is_text(token) or is_special(token, text, position):
            run.append(index)
            index += 1
            continue
        found = _place(token, tokens, run, bounds, position, marked, previous)
        if found is None:
            # not the prompt's next text: the run may account for the rest of the prompt (this token then
            # being the generated one), or, once the scored text is placed, the rest is shown otherwise
            ending = _cover(tokens, run, bounds, position, len(text), marked) if run else None
            if ending is None and position < bounds.end:
                raise PlacementError(
                    f"the reply's tokens spell another text: token {token[:40]!r} where the prompt sent "
                    f"holds {text[position : position + 12]!r} (character {position})"
                )
            for held in run:  # past the scored text: where exactly does not change the score
                spans[held] = (position, len(text))
            if ending is not None:
                _assign(spans, ending)
            unshown, run, position = True, [], len(text)
            after = len(tokens) - index
            break
        first, stop, covered = found
        _assign(spans, covered)
        spans[index] = (first, stop)
        shows_text = any(SPECIAL_TOKEN.fullmatch(str(tokens[i])) is None for i in run)
        unshown = unshown or covered.hidden or shows_text
        run, position, previous = [], stop, token
        index += 1
    if run:  # the prompt ends in pieces, maybe followed by a generated piece
        covered = _cover_to_end(tokens, run, bounds, position, marked, spare=True)
        _assign(spans, covered)
        after += covered.spare
        unshown, position = True, len(text)
    if position < bounds.end:
        raise PlacementError(f"the echoed prompt stops before candidate {bounds.candidate!r} ends")
    if after > GENERATED_TOKENS:
        raise PlacementError(
            f"the reply holds {after} tokens after the prompt where one was generated: it echoes a longer "
            "prompt"
        )
    return spans, unshown or position < len(text)


class _Plain:
    """The reply's tokens as one text where every token is a string, for placing a stretch of whole-text
    tokens that spell the prompt with one comparison (a 5-shot prompt echoes thousands of tokens, and a
    few pieces of split characters would otherwise send every one through Python)."""

    def __init__(self, tokens: Sequence[Any]) -> None:
        self.usable = set(map(type, tokens)) <= {str}
        shown = list(tokens) if self.usable else [t if isinstance(t, str) else "" for t in tokens]
        self.tokens = shown
        self.joined = "".join(shown)
        self.ends = list(itertools.accumulate(map(len, shown), initial=0))
        self.stops = self._stops(shown)

    def _stops(self, shown: list[str]) -> list[int]:
        """Where a stretch of whole-text tokens stops: an empty token, one with a piece, an id, a special
        name. Found by searching the joined text for what marks them (C speed), not token by token."""
        found: set[int] = set()
        lengths = list(map(len, shown))
        zero = -1
        while True:
            try:
                zero = lengths.index(0, zero + 1)
            except ValueError:
                break
            found.add(zero)
        for mark in ("\ufffd", "<", *RAW_TOKEN_PREFIXES):
            at = self.joined.find(mark)
            while at != -1:
                index = bisect.bisect_right(self.ends, at) - 1
                if not is_text(shown[index]) or SPECIAL_TOKEN.fullmatch(shown[index]):
                    found.add(index)
                at = self.joined.find(mark, self.ends[index + 1])
        return sorted(found)

    def spelled(self, index: int, text: str, position: int) -> tuple[int, int]:
        """How many whole-text tokens from `index` spell the prompt from `position` on (0 when fewer than
        two), and where they stop in it."""
        if not self.usable:
            return 0, position
        limit = (
            self.stops[bisect.bisect_left(self.stops, index)]
            if self.stops and self.stops[-1] >= index
            else len(self.tokens)
        )
        begin = self.ends[index]

        def spells(count: int) -> bool:
            length = self.ends[index + count] - begin
            return text.startswith(
                self.joined[begin : begin + length], position
            ) and position + length <= len(text)

        low, high = 0, limit - index  # the longest count that spells, found by halving
        while low < high:
            middle = (low + high + 1) // 2
            if spells(middle):
                low = middle
            else:
                high = middle - 1
        if low < 2:
            return 0, position
        return low, position + self.ends[index + low] - begin

    def place(
        self, spans: list[tuple[int, int]], index: int, count: int, position: int, bounds: Bounds
    ) -> None:
        """The spans of `count` tokens spelling the prompt from `position`, set where they are near the
        scored text (the others are never read)."""
        shift = position - self.ends[index]
        low = bisect.bisect_left(self.ends, bounds.start - 1 - shift, index, index + count + 1)
        high = bisect.bisect_right(self.ends, bounds.end + 1 - shift, index, index + count + 1)
        for i in range(max(index, low - 1), min(index + count, high + 1)):
            spans[i] = (self.ends[i] + shift, self.ends[i + 1] + shift)


@dataclass(frozen=True)
class _Covered:
    """The spans of a run's tokens; `hidden`: the placed token was moved over characters nothing shows
    (hidden bytes, a dropped space); `spare`: tokens of the run left after the prompt's end."""

    spans: dict[int, tuple[int, int]]
    hidden: bool = False
    spare: int = 0


def _assign(spans: list[tuple[int, int]], covered: _Covered) -> None:
    for index, span in covered.spans.items():
        spans[index] = span


def _place(
    token: str,
    tokens: Sequence[Any],
    run: list[int],
    bounds: Bounds,
    position: int,
    marked: bool,
    previous: str | None,
) -> tuple[int, int, _Covered] | None:
    """Where a whole-text token stands after the run waiting before it: its start, its stop and the
    run's spans; None when it cannot stand anywhere the run accounts for."""
    text = bounds.text
    if not run:
        if text.startswith(token, position):
            return position, position + len(token), _Covered({})
        blank = position
        while blank < len(text) and text[blank].isspace():
            blank += 1
        if blank > position and text.startswith(token, blank):  # shown without its space
            return position, blank + len(token), _Covered({}, hidden=True)
        if position == 0 and token[:1] == " " and text.startswith(token[1:], 0) and len(token) > 1:
            # SentencePiece's dummy prefix: llama.cpp adds a space before the prompt's first word
            return 0, len(token) - 1, _Covered({}, hidden=True)
        several = position < len(text) and not _UNSPLIT.match(text[position])
        if not marked and several and text.startswith(token, position + 1):
            # the tail bytes of one character, hidden in the token
            return position, position + 1 + len(token), _Covered({}, hidden=True)
        return None
    _refuse_a_hidden_head(tokens, run, bounds, position, marked, previous)
    reach = min(len(text), position + 8 + sum(4 * max(1, len(str(tokens[i]))) for i in run))
    for first in range(position, reach + 1):
        if not text.startswith(token, first):
            continue
        covered = _cover(tokens, run, bounds, position, first, marked)
        if covered is not None:
            return first, first + len(token), covered
    return None


def _refuse_a_hidden_head(
    tokens: Sequence[Any], run: list[int], bounds: Bounds, position: int, marked: bool, previous: str | None
) -> None:
    """In an unmarked reply, pieces that begin the candidate right after a whole-text token ending in
    whitespace: byte-level tokenizers join a space with the letters after it, so that token may hold the
    head of the candidate's first character, shown only as the space. Whether it does, the reply does not
    say (vLLM's would show ' \\ufffd')."""
    if marked or position != bounds.start or previous is None or not previous[-1:].isspace():
        return
    if not is_special(tokens[run[0]], bounds.text, position):
        raise PlacementError(
            f"cannot tell whether the server's token {previous!r} holds bytes of candidate "
            f"{bounds.candidate!r}'s first character (the server drops the partial bytes of the tokens it "
            "shows); use a server that shows them (vLLM) or a context that does not end in a space"
        )


def _cover_to_end(
    tokens: Sequence[Any], run: list[int], bounds: Bounds, position: int, marked: bool, spare: bool
) -> _Covered:
    """The run accounting for the rest of the prompt; with `spare`, its last token may instead be the
    generated one (after the prompt). Where both are possible and the last token would hold scored
    characters in one, nothing tells where the candidate ends."""
    ending = f"cannot tell where candidate {bounds.candidate!r} ends and the generated token begins"
    whole = _cover(tokens, run, bounds, position, len(bounds.text), marked)
    shorter = _cover(tokens, run[:-1], bounds, position, len(bounds.text), marked) if spare else None
    if whole is not None and shorter is not None and bounds.holds(whole.spans[run[-1]]):
        raise PlacementError(f"the reply's last tokens are pieces of characters: {ending}")
    if whole is not None:
        return whole
    if shorter is not None:
        return _Covered(shorter.spans, spare=1)
    raise PlacementError(f"the reply's last tokens cannot be placed on the prompt's text: {ending}")


def _cover(
    tokens: Sequence[Any], run: list[int], bounds: Bounds, first: int, stop: int, marked: bool
) -> _Covered | None:
    """The spans of the run's tokens when together they account for exactly text[first:stop], None when
    they cannot. Matched twice, each stretch of pieces taking as much and as little as it may: where the
    two disagree on which tokens hold the scored text, the run cannot be divided one way only."""
    if not run:
        return _Covered({}) if first == stop else None
    elements = _elements(tokens, run, bounds.text, first, marked)
    greedy = _match(elements, bounds.text, first, stop, lazy=False)
    if greedy is None:
        return None
    lazy = _match(elements, bounds.text, first, stop, lazy=True)
    if lazy is not None and {i for i, s in greedy.items() if bounds.holds(s)} != {
        i for i, s in lazy.items() if bounds.holds(s)
    }:
        shown = ", ".join(repr(tokens[i]) for i in run)[:120]
        raise PlacementError(
            f"cannot tell which of the server's tokens {shown} hold candidate {bounds.candidate!r}'s "
            "characters"
        )
    return _Covered(greedy)


@dataclass(frozen=True)
class _Element:
    kind: str  # "text": these characters; "bytes": characters of several bytes; "blank"; "none"
    owners: tuple[int, ...]
    literal: str = ""


def _elements(
    tokens: Sequence[Any], run: list[int], text: str, position: int, marked: bool
) -> list[_Element]:
    """What each token of a run shows, in order; adjacent stretches of partial bytes are one stretch
    (the pieces of one character share it)."""
    elements: list[_Element] = []

    def add(kind: str, owner: int, literal: str = "") -> None:
        if kind == "bytes" and elements and elements[-1].kind == "bytes":
            elements[-1] = _Element("bytes", (*elements[-1].owners, owner))
        else:
            elements.append(_Element(kind, (owner,), literal))

    for index in run:
        token = tokens[index]
        if is_special(token, text, position):
            add("none", index)
        elif token == "" and marked:
            add("blank", index)
        elif not isinstance(token, str) or token == "" or token.startswith(RAW_TOKEN_PREFIXES):
            add("bytes", index)
        else:  # visible characters and U+FFFD for partial bytes
            for part in re.split("(\ufffd+)", token):
                if part:
                    add("bytes" if part[0] == "\ufffd" else "text", index, part)
    return elements


def _match(
    elements: list[_Element], text: str, first: int, stop: int, lazy: bool
) -> dict[int, tuple[int, int]] | None:
    """Each owner's span when the elements match text[first:stop] exactly; a token owning several
    elements spans them all, and the pieces of one stretch share its span."""
    laziness = "?" if lazy else ""
    patterns = {"bytes": f"({_SEVERAL_BYTES}+{laziness})", "blank": f"(\\s*{laziness})", "none": "()"}
    pattern = "".join(
        f"({re.escape(element.literal)})" if element.kind == "text" else patterns[element.kind]
        for element in elements
    )
    found = re.compile(pattern).fullmatch(text, first, stop)
    if found is None:
        return None
    spans: dict[int, tuple[int, int]] = {}
    for number, element in enumerate(elements, start=1):
        span = found.span(number)
        for owner in element.owners:
            known = spans.get(owner)
            spans[owner] = span if known is None else (min(known[0], span[0]), max(known[1], span[1]))
    return spans
