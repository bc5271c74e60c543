"""The samples page's filters as SQL: outcome, question type, domain, subject, category and a text search,
each a WHERE clause over the store's samples (and the chosen grader's grades of open answers).

A sample's outcome is one SQL expression, the same rule as the HTML report's (kaoshi.report.html.outcome
after the grades are folded in): the page shows, filters and counts by that one expression.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kaoshi.errors import InputError
from kaoshi.qtypes import QUESTION_KINDS
from kaoshi.results.metrics import UNKNOWN_GROUP

PAGE_SIZE = 50
# The outcomes, in the order the filter lists them; `truncated` is a flag beside the outcome (a cut-off
# answer is also right, wrong or unparsed), filtered on its own column.
OUTCOMES = ("correct", "wrong", "unparsed", "ambiguous", "error", "truncated", "judged", "ungraded")
TRUNCATED = "truncated"
# The groupings the page filters by, coarsest first: the query parameter -> the samples column holding it.
FACETS: dict[str, str] = {"domain": "domain", "category": "category", "subject": "subject", "type": "qtype"}
LONGEST_SEARCH = 200
# A grouping's value as a query may name it: far longer than any subject, and short of what breaks the
# choices' sort (kaoshi.report.html turns each run of digits into an int: Python refuses 4,300 digits).
LONGEST_VALUE = 1000
# The last page a query may ask for: its offset, (page - 1) * PAGE_SIZE, must fit SQLite's 64-bit integer
# (beyond it OFFSET overflows). A page after a run's last is shown, empty.
LAST_PAGE = (2**63 - 1) // PAGE_SIZE + 1


def open_types() -> tuple[str, ...]:
    """The question types a judge grades (not checked against a gold answer)."""
    return tuple(sorted(name for name, kind in QUESTION_KINDS.items() if not kind.objective))


def outcome_sql() -> str:
    """The outcome of the sample row `s` joined with its grade `g` (NULL when the chosen grader has none):
    correct / wrong / unparsed / ambiguous / error / judged / ungraded. An open answer's effective score is
    the grader's points where given, else what the sample holds (kaoshi.results.grading.apply_grades)."""
    kinds = ", ".join(f"'{name}'" for name in open_types())
    return (
        "CASE WHEN s.status = 'error' THEN 'error' "
        "WHEN s.correct IS NULL THEN "
        f"(CASE WHEN s.qtype IN ({kinds}) AND COALESCE(g.points, s.score) IS NOT NULL "
        "THEN 'judged' ELSE 'ungraded' END) "
        "WHEN s.correct = 1 THEN 'correct' "
        "WHEN s.status IN ('unparsed', 'ambiguous') THEN s.status "
        "ELSE 'wrong' END"
    )


# The samples of one run with the chosen grader's grade beside each (the grader is the second parameter;
# NULL joins nothing).
SAMPLES_FROM = (
    "FROM samples s LEFT JOIN grades g "
    "ON g.run = s.run AND g.question_id = s.question_id AND g.grader = ? "
    "WHERE s.run = ?"
)


def quoted(text: str, longest: int = 40) -> str:
    """A query's value as an error message repeats it: on one line, cut short."""
    return repr(text if len(text) <= longest else text[:longest] + "…")


def page_number(text: str | None, last: int = LAST_PAGE) -> int:
    """The page a query asks for (1 when none): ASCII digits, 1 to `last`; else an InputError."""
    if not text:
        return 1
    # not int(): it takes "+5", " 5", "1_000" and other scripts' digits, and refuses 4,300 of them
    if text.isascii() and text.isdecimal() and len(text) <= len(str(last)) and 1 <= int(text) <= last:
        return int(text)
    raise InputError(f"page must be a whole number from 1 to {last}, not {quoted(text)}")


def like_pattern(text: str) -> str:
    """`text` anywhere, as a LIKE pattern with ESCAPE '\\': its own % and _ match only themselves."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def searched(question: str) -> tuple[str, ...]:
    """What the text search looks in, `question` the SQL that reads the question of `s` (schema.stored_text).
    (SQLite's json_extract ends a stem at a \u0000: a NUL there is not found.)"""
    return ("s.question_id", "s.response", f"json_extract({question}, '$.stem')")


def search_clause(text: str, question: str) -> tuple[str, list[str]]:
    """A clause true where `text` is in the id, the response or the stem, ASCII case aside, and its
    parameters.

    LIKE reads its pattern as a C string, so a NUL ends it: `%\0%` would be `%`, every sample. Such a text is
    looked for byte by byte instead (instr over BLOBs, which carry their length), both sides in lower case as
    LIKE compares them. Other texts keep LIKE, a fifth faster over a run no page of which matches."""
    columns = searched(question)
    if "\0" in text:
        found = [f"instr(CAST(lower({c}) AS BLOB), CAST(lower(?) AS BLOB)) > 0" for c in columns]
        needle = text
    else:
        found = [f"{c} LIKE ? ESCAPE '\\'" for c in columns]
        needle = like_pattern(text)
    return "(" + " OR ".join(found) + ")", [needle] * len(columns)


@dataclass(frozen=True)
class SampleFilter:
    """What the samples page shows: an outcome, a value per grouping ((none) for samples without one), a
    text searched in the id, the question and the response, and the page."""

    outcome: str | None = None
    facets: Mapping[str, str] = field(default_factory=dict)
    text: str = ""
    page: int = 1

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> SampleFilter:
        """From the page's query parameters; an unknown outcome or a bad page is an InputError."""
        outcome = params.get("outcome") or None
        if outcome is not None and outcome not in OUTCOMES:
            raise InputError(f"unknown outcome {quoted(outcome)} (choose from {', '.join(OUTCOMES)})")
        facets = {key: params[key] for key in FACETS if params.get(key)}
        for key, value in facets.items():
            if len(value) > LONGEST_VALUE:
                raise InputError(f"{key} is at most {LONGEST_VALUE} characters, not {quoted(value)}")
        text = (params.get("q") or "").strip()[:LONGEST_SEARCH]
        return cls(outcome, facets, text, page_number(params.get("page")))

    def where(self, truncated_column: str, question_column: str) -> tuple[str, list[Any]]:
        """The filter as ` AND ...` clauses to follow SAMPLES_FROM, and their parameters; the two columns as
        the store reads them (a store from before `truncated`, questions held in `texts`)."""
        clauses: list[str] = []
        values: list[Any] = []
        if self.outcome == TRUNCATED:
            clauses.append(f"{truncated_column} = 1")
        elif self.outcome is not None:
            clauses.append(f"({outcome_sql()}) = ?")
            values.append(self.outcome)
        for key, value in self.facets.items():
            column = f"s.{FACETS[key]}"
            if value == UNKNOWN_GROUP:
                clauses.append(f"({column} IS NULL OR {column} = '')")
            else:
                clauses.append(f"{column} = ?")
                values.append(value)
        if self.text:
            clause, needles = search_clause(self.text, question_column)
            clauses.append(clause)
            values += needles
        return "".join(f" AND {c}" for c in clauses), values

    @property
    def offset(self) -> int:
        return (self.page - 1) * PAGE_SIZE

    def at_page(self, page: int) -> SampleFilter:
        return replace(self, page=page)

    def without(self, key: str) -> SampleFilter:
        """The filter less one of its parts (`outcome` or a grouping), for that part's choice counts."""
        if key == "outcome":
            return replace(self, outcome=None)
        return replace(self, facets={k: v for k, v in self.facets.items() if k != key})

    def query(self, page: int | None = None) -> list[tuple[str, str]]:
        """The query parameters that show this filter (at `page`), empty ones left out."""
        pairs = [("outcome", self.outcome or ""), *self.facets.items(), ("q", self.text)]
        shown = page if page is not None else self.page
        return [(k, v) for k, v in pairs if v] + ([("page", str(shown))] if shown > 1 else [])


@dataclass(frozen=True)
class Cell:
    """One combination of the run's groupings and outcome, with how many samples have it."""

    outcome: str
    truncated: bool
    values: Mapping[str, str]  # grouping -> value ((none) where the sample has none)
    count: int

    def matches(self, chosen: SampleFilter) -> bool:
        """Whether these samples pass the filter's outcome and groupings (the text search aside)."""
        if chosen.outcome == TRUNCATED and not self.truncated:
            return False
        if chosen.outcome not in (None, TRUNCATED) and chosen.outcome != self.outcome:
            return False
        return all(self.values[key] == value for key, value in chosen.facets.items())


def choice_counts(cells: Sequence[Cell], chosen: SampleFilter, key: str) -> dict[str, int]:
    """Each value of `key` (an outcome when key is 'outcome') with the samples it would show, the other
    parts of the filter kept."""
    others = chosen.without(key)
    counts: dict[str, int] = {}
    for cell in cells:
        if not cell.matches(others):
            continue
        if key == "outcome":
            counts[cell.outcome] = counts.get(cell.outcome, 0) + cell.count
            if cell.truncated:
                counts[TRUNCATED] = counts.get(TRUNCATED, 0) + cell.count
        else:
            counts[cell.values[key]] = counts.get(cell.values[key], 0) + cell.count
    return counts


def matching(cells: Sequence[Cell], chosen: SampleFilter) -> int:
    """How many samples the filter shows, the text search aside."""
    return sum(cell.count for cell in cells if cell.matches(chosen))
