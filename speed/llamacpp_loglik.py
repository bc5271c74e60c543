"""llama.cpp log-likelihood: the `llamacpp` backend now against the backend before, same model, same
questions, same process.

Before (kaoshi up to 96982cf, kept below as `CandidateByCandidate`): each candidate ran on its own (all its
tokens but the last, from the end of the context) and every token's log-softmax was a Python loop over the
49,152-entry vocabulary. Now: every candidate path runs in a sequence of its own sharing the context's KV
cells, all of a question's in one `llama_decode`, and each row's normaliser is one vectorised numpy call.
`OneContext` is the step between: vectorised, candidate paths one call each on `Llama`'s own context. All
keep the shared prefix of consecutive questions in llama.cpp's KV cache.

Sets (our own generated questions): (a) multiple choice with 4-6 options and every letter set a candidate
(15-63 per question, each with the answer end), kaoshi's `default` template, zero-shot; (b) C-Eval 5-shot
single choice (`ceval-answer-only`). Completion form (the backend scores plain text only).

    .venv/bin/python speed/llamacpp_loglik.py      # needs llama-cpp-python (see speed/README.md)
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ceval_data import write_ceval  # noqa: E402

import kaoshi  # noqa: E402
from kaoshi.data.model import Exam, Question, QuestionType  # noqa: E402
from kaoshi.models import ModelOptions  # noqa: E402
from kaoshi.models.hf import smollm2_path  # noqa: E402
from kaoshi.models.llamacpp import LlamaCppModel  # noqa: E402

WORK = HERE / "work"


def python_log_softmax_at(row: Sequence[float], token: int) -> float:
    """The backend's log-softmax before: a Python loop over the vocabulary."""
    peak = max(row)
    log_norm = peak + math.log(sum(math.exp(v - peak) for v in row))
    # float(): under numpy 2 the old expression came out as np.float32, which kaoshi refuses as a score
    # (so the old backend errored on every candidate with a real llama.cpp); the baseline is timed as meant.
    return float(float(row[token]) - log_norm)


class OneContext(LlamaCppModel):
    """The backend now, without the scoring context of many sequences: candidate paths one call each."""

    _sequences = None  # type: ignore[assignment]


class CandidateByCandidate(LlamaCppModel):
    """The backend before: each candidate run from the end of the context, scored token by token."""

    _sequences = None  # type: ignore[assignment]

    def _score_continuations(self, n_context: int, continuations: list[list[int]]) -> list[float]:
        scores = []
        for continuation in continuations:
            self.llm.n_tokens = n_context
            self.llm.eval(continuation[:-1])
            scores.append(
                sum(
                    python_log_softmax_at(self.llm.scores[n_context - 1 + offset], token)
                    for offset, token in enumerate(continuation)
                )
            )
        return scores


def multi_choice_exam(count: int, seed: int = 5) -> Exam:
    """Multiple-choice questions with 4-6 options (our own): which numbers are multiples of k."""
    rng = random.Random(seed)
    questions = []
    for i in range(count):
        k = rng.choice((3, 4, 5, 7))
        numbers = rng.sample(range(10, 99), 4 + i % 3)
        if not any(n % k == 0 for n in numbers):
            numbers[0] = k * rng.randint(3, 12)
        letters = "ABCDEF"[: len(numbers)]
        options = tuple(zip(letters, (str(n) for n in numbers), strict=True))
        answer = frozenset(letter for letter, n in zip(letters, numbers, strict=True) if n % k == 0)
        questions.append(
            Question(f"m{i}", QuestionType.MULTI, f"下列数中，哪些是{k}的倍数？", options, answer)
        )
    return Exam("multiples", tuple(questions), metadata={"benchmark": "kaoshi"})


def timed(exam: Exam, model: LlamaCppModel, prompt: str) -> tuple[float, dict[str, dict[str, float]]]:
    started = time.perf_counter()
    result = kaoshi.evaluate(exam, model, method="loglik", prompt=prompt, chat=False)
    elapsed = time.perf_counter() - started
    return elapsed, {s.question_id: dict(s.logprobs or {}) for s in result.samples}


def best(scores: dict[str, float]) -> str:
    return max(scores, key=scores.__getitem__)


def largest_difference(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]]) -> float:
    return max(abs(a[q][c] - b[q][c]) for q in a for c in a[q])


def main() -> None:
    WORK.mkdir(exist_ok=True)
    data = write_ceval(WORK / "ceval-llamacpp", {"high_school_mathematics": 20}, seed=11)
    sets: list[tuple[str, Exam, str]] = [
        ("multiple choice, 4-6 options (15-63 candidates)", multi_choice_exam(24), "default"),
        ("C-Eval 5-shot single choice", kaoshi.load_exam("ceval", data, split="val"), "ceval-answer-only"),
    ]
    spec = f"llamacpp:{smollm2_path()}"
    options = ModelOptions(max_length=2048)
    now, one, before = (
        LlamaCppModel(spec, options),
        OneContext(spec, options),
        CandidateByCandidate(spec, options),
    )
    rows: list[dict[str, Any]] = []
    for title, exam, prompt in sets:
        # Warm both up: first llama.cpp calls allocate, and each then holds the set's shared prefix alike.
        for model in (now, one, before):
            timed(exam, model, prompt)
        new_s, new_scores = timed(exam, now, prompt)
        one_s, _ = timed(exam, one, prompt)
        old_s, old_scores = timed(exam, before, prompt)
        candidates = sum(len(v) for v in new_scores.values())
        same_choice = sum(best(new_scores[q]) == best(old_scores[q]) for q in new_scores)
        rows.append(
            {
                "set": title,
                "questions": len(exam),
                "candidates": candidates,
                "before_s": round(old_s, 2),
                "one_context_s": round(one_s, 2),
                "now_s": round(new_s, 2),
                "ratio": round(old_s / new_s, 1),
                "max_abs_diff": largest_difference(new_scores, old_scores),
                "same_choice": f"{same_choice}/{len(exam)}",
            }
        )
        print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    print(
        "| set | questions | candidates | before | one context | now | ratio | max \\|Δ log p\\| "
        "| same choice |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['set']} | {r['questions']} | {r['candidates']} | {r['before_s']} s | "
            f"{r['one_context_s']} s | {r['now_s']} s | "
            f"**{r['ratio']}x** | {r['max_abs_diff']:.1e} | {r['same_choice']} |"
        )


if __name__ == "__main__":
    main()
