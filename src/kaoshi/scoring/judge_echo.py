"""What a judge's reply repeats rather than states as its own score: the judge's prompt echoed (its
rubric, template, question, example or the first judge's line, see `PromptEchoes`) and a rubric or scale
restated in the reply itself (`rubric_spans`).

This is the half of reading a judge's reply that says which numbers are not a verdict;
kaoshi.scoring.judge_parse finds the candidate numbers, drops those this module marks, and picks the score.
"""

from __future__ import annotations

import re
import unicodedata

from kaoshi.scoring.judge_terms import (
    ANSWER_ONE,
    ANSWER_TWO,
    CANDIDATE_MENTION,
    LIST_ITEM,
    MAX_SCORE,
    SCALE,
    SCORE_WORD,
    SENTENCE_END,
    TIER_LAST_LINE,
    Candidate,
    after_list_item,
)

# A clause: the text between commas, semicolons and sentence ends.
_CLAUSE = re.compile(r"[^,;、。!?\n]+")
_RUBRIC_HEADING = re.compile(
    r"\s*(?:评分|给分|打分|评判)?(?:标准|规则|细则|准则)(?:如下)?\s*:"
    r"|\s*(?:(?:scoring|grading|evaluation|marking)\s+)?(?:criteria|rubric|rules|scale|guidelines?)\s*:",
    re.IGNORECASE,
)
# A condition (not `even if`), to the end of its sentence or clause set (`;`), a turn (`但`), the judge
# speaking (`我给7分`) or a clause about the candidate (`…, the response deserves 8`).
_CONDITION = re.compile(
    r"如果|假如|倘若|假设|要是|只要|(?:^|(?<=[,:;。!?]))\s*(?:若(?!干)|凡)|\b(?<!even )(?<!as )if\b"
    r"|\b(?:whenever|unless)\b",
    re.IGNORECASE | re.MULTILINE,
)
_CONDITION_END = re.compile(
    r"[;。!?\n]|\.(?=\s|$)|但|然而|不过|可是|我|本人|笔者|\b(?:but|however|yet|instead|we|my)\b|(?-i:\bI\b)"
    r"|[,:]\s*" + CANDIDATE_MENTION,
    re.IGNORECASE,
)
_LEVEL = r"\d+(?:\.\d+)?(?:\s*(?:-|~|到|至)\s*\d+(?:\.\d+)?)?"
# A rubric's level, a clause of its own: `完全正确得10分`, `部分一致：0-5分`, `10分：完全正确`.
_RUBRIC_LEVEL = re.compile(
    r".{0,40}?(?:得|给|为|是|:|=)?\s*(?P<tail>" + _LEVEL + r")\s*(?:分|points?|marks?)"
    r"|(?P<head>" + _LEVEL + r")\s*(?:分|points?|marks?)?\s*(?::|=|表示|代表|for\b)\s*\D.{0,40}",
    re.IGNORECASE,
)
# What makes a clause a verdict or the scale rather than a level: the judge, a deduction, a conclusion, a
# total, a pair, the scale, an answer's label (`答案2 6分`), the candidate given its score (`学生得8分`).
_NOT_A_LEVEL = re.compile(
    r"我|最终|综合|总分|扣|因此|所以|只能|应该?给|分别|满分|分制|最高|最低|本题|分值"
    r"|\b(?:final|overall|total|deduct\w*|so|therefore|thus|respectively|full|max\w*)\b|(?-i:\bI\b)"
    r"|(?:" + ANSWER_ONE + "|" + ANSWER_TWO + r")\s*(?:的)?\s*(?:" + SCORE_WORD + r")?\s*[:=]?\s*\d"
    r"|^\s*"
    + CANDIDATE_MENTION
    + r"\s*(?:的)?\s*(?:得|获得|给予?|打|可得|应得|gets|earns|receives|deserves)",
    re.IGNORECASE,
)
_EXAMPLE = re.compile(r"例如|比如|示例|样例|举例|for\s+example|e\.g\.|such\s+as|example", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])")
# Reply and prompt are compared without whitespace, punctuation, math symbols and the words a paraphrase
# adds or drops around a number (`要点完整：10分` / `要点完整，得10分`). So compared, a copied statement
# shares `_COPY_WINDOW` characters with the prompt, and a restated number follows `_RESTATED` characters
# of the words before it in the prompt.
_COPY_WINDOW = 8
_RESTATED = 6
_CONNECTIVES = frozenset("得给为是")
_DROPPED_CATEGORIES = frozenset({"Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm"})


def _copy_key(text: str) -> tuple[str, list[int]]:
    """The text compared with the prompt (no whitespace, punctuation, math symbols or `_CONNECTIVES`), and
    for each index of `text` (and its end) the key's index there."""
    kept: list[str] = []
    offsets = [0]
    for char in text:
        keep = not (
            char.isspace() or char in _CONNECTIVES or unicodedata.category(char) in _DROPPED_CATEGORIES
        )
        if keep:
            kept.append(char)
        offsets.append(offsets[-1] + keep)
    return "".join(kept), offsets


def _common_suffix(first: str, second: str) -> int:
    length = 0
    while length < min(len(first), len(second)) and first[-1 - length] == second[-1 - length]:
        length += 1
    return length


class PromptEchoes:
    """What the reply repeats of the judge's prompt rather than states as its own score:

    - a score statement copied with at least one character of context on each side, `_COPY_WINDOW`
      characters in all (a judge's own `答案2得分：7` differs from the template's `答案2得分：X` right at the
      number; a last line has no context after it, so a second judge ending on the first judge's
      `答案2得分：8` still gives 8);
    - a number after the words that precede a number the prompt states outside a verdict (its rubric,
      intro or template; not the first judge's score, not a score in the question): the rubric's line
      restated (`…要点完整，得10分` for `要点完整：10分`), even with another number (`(d) 答案2大段照抄题目，
      得10分` for `答案2大段照抄题目：0分`); or a level restated the other way round with its own number
      (`完全正确得10分` for `10分：完全正确`);
    - a verdict the prompt gives as its example of a reply (`for example: Rating: [[5]]`);
    - the prompt's full marks (`满分10分`, `【分值】12分`) on a line of its own (`12分`), with no label.
    """

    def __init__(self, reply: str, prompt: str, prompt_candidates: list[Candidate]) -> None:
        """prompt_candidates: the score candidates judge_parse finds in the prompt itself (its verdicts,
        its example of a reply), found without echoes."""
        self._prompt, _ = _copy_key(prompt)
        self._key, self._offsets = _copy_key(reply)
        verdicts: set[tuple[int, int]] = set()
        self._examples: set[str] = set()
        for candidate in prompt_candidates:
            verdicts.add((candidate.start, candidate.end))
            line = prompt.rfind("\n", 0, candidate.statement) + 1
            if _EXAMPLE.search(prompt, line, candidate.statement):
                self._examples.add(_copy_key(prompt[candidate.statement : candidate.end])[0])
        scale = [m.span() for m in SCALE.finditer(prompt)]
        in_scale = [float(n.group()) for s, e in scale for n in _NUMBER.finditer(prompt, s, e)]
        self._full_marks = max(in_scale, default=None)
        self._stated: list[tuple[float, str, str]] = []  # (number, the words before it, after it)
        for number in _NUMBER.finditer(prompt):
            start, end = number.span()
            if (start, end) in verdicts or any(s <= start and end <= e for s, e in scale):
                continue
            line = prompt.rfind("\n", 0, start) + 1
            clause = _CLAUSE.match(prompt, end)
            after = _copy_key(clause.group() if clause else "")[0]
            after = re.sub(r"^(?:分|points?|marks?)", "", after, flags=re.IGNORECASE)
            self._stated.append((float(number.group()), _copy_key(prompt[line:start])[0], after))

    def echoed(self, text: str, candidate: Candidate, sentence: int) -> bool:
        """Whether the candidate (in the normalised reply `text`, its sentence starting at `sentence`)
        repeats the prompt."""
        if self._copied(candidate.statement, candidate.end):
            return True
        if candidate.tier == TIER_LAST_LINE and candidate.score == self._full_marks:
            return True
        if _copy_key(text[candidate.statement : candidate.end])[0] in self._examples:
            return True
        before = _copy_key(text[sentence : candidate.start])[0]
        clause = _copy_key(text[_clause_start(text, sentence, candidate.start) : candidate.start])[0]
        return any(
            _common_suffix(before, words_before) >= _RESTATED
            or (value == candidate.score and len(clause) >= 2 and clause == words_after)
            for value, words_before, words_after in self._stated
        )

    def _copied(self, start: int, end: int) -> bool:
        first, last = self._offsets[start], self._offsets[end]
        for left in range(1, max(2, _COPY_WINDOW - (last - first))):
            right = max(1, _COPY_WINDOW - left - (last - first))
            inside = first - left >= 0 and last + right <= len(self._key)
            if inside and self._key[first - left : last + right] in self._prompt:
                return True
        return False


def _clause_start(text: str, sentence: int, position: int) -> int:
    return max(sentence, *(text.rfind(mark, sentence, position) + 1 for mark in ",;、:"))


def _is_range_or_end(level: str) -> bool:
    return not re.fullmatch(r"\d+(?:\.\d+)?", level) or float(level) in (0.0, MAX_SCORE)


def rubric_spans(text: str) -> list[tuple[int, int]]:
    """Where the reply restates a rubric rather than grades: the sentence after a `评分标准：` heading (and
    the list below a heading alone on its line), a condition to the end of its scope (`如果……，得10分`), and
    two or more levels in a row (`完全正确得10分，部分正确得5分`)."""
    spans: list[tuple[int, int]] = []
    in_list = False
    for line in re.finditer(r"[^\n]+", text):
        heading = _RUBRIC_HEADING.match(line.group())
        if heading:
            end = SENTENCE_END.search(text, line.start() + heading.end())
            spans.append((line.start(), end.start() if end else len(text)))
            in_list = not line.group()[heading.end() :].strip()
        elif in_list and LIST_ITEM.match(line.group()):
            spans.append(line.span())
        else:
            in_list = False
    for condition in _CONDITION.finditer(text):
        end = _CONDITION_END.search(text, condition.end())
        spans.append((condition.start(), end.start() if end else len(text)))
    levels: list[tuple[int, int, str]] = []
    for clause in [*_CLAUSE.finditer(text), None]:
        level = None
        if clause is not None and not _NOT_A_LEVEL.search(clause.group()):
            level = _RUBRIC_LEVEL.fullmatch(after_list_item(clause.group()).strip())
        if level is not None and clause is not None:
            levels.append((*clause.span(), re.sub(r"\s", "", level.group("tail") or level.group("head"))))
            continue
        values = {value for _, _, value in levels}
        # a scale's levels name a range or one of its ends; two people's scores (`小明得7分，小红得9分`) don't
        if len(values) >= 2 and any(_is_range_or_end(value) for value in values):
            spans.extend((start, end) for start, end, _ in levels)
        levels = []
    return spans
