"""A run whose outputs have a profile worth showing (kaoshi.analysis.outputs): answers of known token counts,
two cut off at the budget (one of them in a loop), one error, and a known model time."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from tests.support.files import write_jsonl

QUESTIONS = load_exam_result("sample").exam.questions
REASONING = "首先分析题干。选项A的说法与教材一致，选项B混淆了概念，选项C的年代有误，选项D以偏概全。"
LOOP = REASONING + "所以答案是A。" * 60 + "所以答"  # cut off mid-unit, as the budget cuts a loop
CUT_OFF = REASONING + "".join(f"再看第{i}种情况：若条件{i}成立，则结论{i + 1}随之成立，" for i in range(40))
LOOPED, CUT, MISSING = QUESTIONS[0].id, QUESTIONS[1].id, QUESTIONS[2].id
DELAY = 0.01  # seconds each scripted answer takes (the mock sleeps and reports it as the latency)


def output_run(store: Path, script: Path, run: str = "outputs") -> Path:
    """Run the mock over the sample exam into `store`: 43 answers and an error (no line for MISSING), LOOPED
    and CUT cut off at the budget. The mock reports no token counts: the test writes them as a backend
    would have (tokens_in 200; tokens_out 512 for the cut-off answers, 30 for the others; reasoning tokens
    10 fewer than the output tokens)."""
    rows = []
    for question in QUESTIONS:
        if question.id == MISSING:
            continue
        text = {"judge": "答案：正确", "open": "参考回答"}.get(question.type.value, "答案：A")
        row: dict[str, object] = {"id": question.id, "response": text, "delay": DELAY}
        if question.id in (LOOPED, CUT):
            row.update(response=LOOP if question.id == LOOPED else CUT_OFF, truncated=True)
        rows.append(row)
    write_jsonl(script, rows)
    run_args = ["run", "--benchmark", "sample", "--model", f"mock:{script}", "--run-name", run]
    assert main([*run_args, "--store", str(store)]) == 0  # MISSING's error is stored, the others answered
    with sqlite3.connect(store) as db:
        db.execute(
            "UPDATE samples SET tokens_in = 200, tokens_out = CASE WHEN truncated THEN 512 ELSE 30 END, "
            "tokens_reasoning = CASE WHEN truncated THEN 502 ELSE 20 END WHERE run = ? AND status != 'error'",
            (run,),
        )
    db.close()
    return store
