"""Big stores for the viewer's tests and its speed script: a run of N C-Eval-like samples written in one
transaction (Store.add_sample commits each sample; 200,000 of those would take minutes)."""

from __future__ import annotations

import random
import sqlite3
import time
from pathlib import Path

from kaoshi.store import RunSpec, SampleRecord, Store
from kaoshi.store.rows import WRITTEN_COLUMNS, written_row
from kaoshi.store.schema import INSERT_TEXT

SUBJECTS = tuple(f"科目{i:02d}" for i in range(40))
CATEGORIES = ("STEM", "Humanities", "Social Science", "Other")
# The share of each outcome, in order: right, wrong, unparsed, ambiguous, error (the rest are truncated
# wrong answers, cut off at the budget).
OUTCOMES = (("correct", 0.55), ("wrong", 0.33), ("unparsed", 0.05), ("ambiguous", 0.02), ("error", 0.03))
STEM = "下列关于中国古代科学技术成就的说法中，正确的一项是（ ）。请结合所学知识，仔细阅读各选项后作答。"
EXEMPLAR = (
    "示例题目：某题干文字，用于模拟五个示例中的一个，长度与真实试题相近。\n"
    + "A. 甲\nB. 乙\nC. 丙\nD. 丁\n答案：A\n\n"
)
INSTRUCTION = "以下是中国关于{subject}考试的单项选择题，请选出其中的正确答案。\n\n" + EXEMPLAR * 5


def big_spec(name: str, n: int) -> RunSpec:
    return RunSpec(
        benchmark="ceval",
        data=None,
        split="val",
        fingerprint=f"{name:x<64}"[:64],
        n_questions=n,
        prompt="ceval-answer-only",
        prompt_version=1,
        shots=5,
        model="mock:big",
        method="generate",
        seed=0,
        limit=None,
        max_new_tokens=32,
    )


def big_sample(i: int, rng: random.Random) -> SampleRecord:
    """Question `b{i:06d}`: 4 options, a 5-shot prompt of about 600 characters, a short response."""
    subject = SUBJECTS[i % len(SUBJECTS)]
    gold = "ABCD"[i % 4]
    draw = rng.random()
    outcome = "truncated"
    for name, share in OUTCOMES:
        if draw < share:
            outcome = name
            break
        draw -= share
    wrong = "ABCD"[(i + 1) % 4]
    answers: dict[str, tuple[str, str | None, bool | None, str]] = {
        "correct": ("ok", gold, True, f"答案：{gold}。解析：根据题意，{gold}项的说法正确。"),
        "wrong": ("ok", wrong, False, f"答案：{wrong}。解析：根据题意，{wrong}项的说法正确。"),
        "unparsed": ("unparsed", None, False, "这道题我不太确定，需要更多信息才能判断。"),
        "ambiguous": ("ambiguous", None, False, "答案：A或者C，两者都有可能。"),
        "error": ("error", None, None, ""),
        "truncated": ("ok", wrong, False, f"答案：{wrong}。解析：首先，我们需要逐一分析每个选项"),
    }
    status, answer, correct, response = answers[outcome]
    options = [[letter, f"选项{letter}的文字内容，第{i}题"] for letter in "ABCD"]
    question = {"id": f"b{i:06d}", "stem": f"{STEM}（第{i}题）", "options": options, "answer": [gold]}
    prompt = (
        INSTRUCTION.format(subject=subject)
        + f"{question['stem']}\n"
        + "\n".join(f"{letter}. {text}" for letter, text in options)
    )
    return SampleRecord(
        question_id=f"b{i:06d}",
        position=i,
        qtype="single",
        gold=frozenset(gold),
        points=1.0,
        subject=subject,
        domain=None,
        category=CATEGORIES[i % len(CATEGORIES)],
        question=question,
        prompt=prompt + "\n答案：",
        status=status,  # type: ignore[arg-type]
        shots=5,
        response=None if outcome == "error" else response,
        answer=None if answer is None else frozenset(answer),
        correct=correct,
        score=None if correct is None else float(correct),
        error="timeout after 60 s" if outcome == "error" else None,
        truncated=outcome == "truncated",
    )


def write_big_run(path: Path, name: str, n: int, seed: int = 0, finish: bool = True) -> Path:
    """A run `name` of `n` samples in the store at `path` (made when missing), in one transaction."""
    with Store(path) as store:
        store.open_run(name, big_spec(name, n))
        if finish:
            store.finish_run(name)
    rng = random.Random(seed)
    columns = ", ".join(("run", *WRITTEN_COLUMNS, "created_at"))
    placeholders = ", ".join("?" for _ in range(len(WRITTEN_COLUMNS) + 2))
    now = time.time()
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("BEGIN")
        batch: list[tuple[object, ...]] = []
        texts: list[tuple[int, bytes, str]] = []
        for i in range(n):
            values, held = written_row(big_sample(i, rng))  # as the store writes a sample
            batch.append((name, *values, now))
            texts += held
            if len(batch) == 10_000:
                db.executemany(INSERT_TEXT, texts)
                db.executemany(f"INSERT INTO samples ({columns}) VALUES ({placeholders})", batch)
                batch, texts = [], []
        db.executemany(INSERT_TEXT, texts)
        db.executemany(f"INSERT INTO samples ({columns}) VALUES ({placeholders})", batch)
        db.execute("COMMIT")
    finally:
        db.close()
    return path
