"""Writes tests/golden/: a store made by kaoshi as it was before the benchmark packages (issue 29), and
what each reporting command printed from it then. tests/golden/test_golden.py re-reports the store with
today's code and requires the same bytes, so a refactor that changes a number, a label or an order fails.

Run once, on the commit named in tests/golden/WRITTEN_BY; never re-run it to make the test pass (that
would compare today's code with itself). Run: `python -m tests.golden.make_golden`.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import kaoshi
from kaoshi.benchmarks import load_exam_result

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from tests.golden.commands import COMMANDS, kaoshi_command, run_command  # noqa: E402


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


def ceval_folder(root: Path) -> Path:
    """Three C-Eval subjects in three categories, with our own questions."""
    header = ["id", "question", "A", "B", "C", "D", "answer", "explanation"]
    for subject in ("computer_network", "college_physics", "modern_chinese_history"):
        write_csv(
            root / "dev" / f"{subject}_dev.csv",
            header,
            [
                [str(i), f"例题{i}：下列哪一项正确？", "甲", "乙", "丙", "丁", "ABCD"[i % 4], f"解析{i}"]
                for i in range(5)
            ],
        )
        write_csv(
            root / "val" / f"{subject}_val.csv",
            header,
            [
                [str(i), f"第{i}题：选出正确的一项。", "一", "二", "三", "四", "ABCD"[(i * 3) % 4], ""]
                for i in range(6)
            ],
        )
        write_csv(
            root / "test" / f"{subject}_test.csv",
            header[:6],
            [[str(i), f"测试题{i}：哪一项对？", "一", "二", "三", "四"] for i in range(4)],
        )
    return root


def cmmlu_folder(root: Path) -> Path:
    header = ["", "Question", "A", "B", "C", "D", "Answer"]
    for subject in ("agronomy", "chinese_history"):
        for split, n in (("dev", 5), ("test", 8)):
            write_csv(
                root / "data" / split / f"{subject}.csv",
                header,
                [
                    [str(i), f"{subject} 问题{i}？", "甲", "乙", "丙", "丁", "ABCD"[(i * 7) % 4]]
                    for i in range(n)
                ],
            )
    (root / "README.md").write_text("# CMMLU\n", encoding="utf-8")
    return root


def sample_script(path: Path, every: int) -> Path:
    """Right on every `every`-th objective question of the sample exam, wrong elsewhere."""
    rows = []
    for i, q in enumerate(load_exam_result("sample").exam.questions):
        right = i % every == 0
        if q.type.value == "open":
            rows.append({"id": q.id, "response": "参考回答：要点一、要点二。"})
        elif q.type.value == "judge":
            good = q.answer if right else not q.answer
            rows.append({"id": q.id, "response": f"答案：{'正确' if good else '错误'}"})
        elif q.type.value == "cloze":
            rows.append({"id": q.id, "response": "答案：" + (str(q.answer) if right else "不知道")})
        else:
            gold = "".join(sorted(q.answer))  # type: ignore[arg-type]
            wrong = next((letter for letter in q.letters if letter not in gold), gold[:-1])
            rows.append({"id": q.id, "response": f"答案：{gold if right else wrong}"})
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def judge_reply(prompt: str) -> str:
    return "评分：7分" if len(prompt) % 2 else "评分：4分"


def main() -> None:
    out = HERE
    store = out / "store.sqlite"
    for stale in out.glob("store.sqlite*"):
        stale.unlink()
    expected = out / "expected"
    shutil.rmtree(expected, ignore_errors=True)
    expected.mkdir()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)

        def cli(*args: str) -> None:
            done = subprocess.run(
                [*kaoshi_command(), *args, "--store", str(store)], capture_output=True, text=True
            )
            if done.returncode != 0:
                raise SystemExit(f"{args}: {done.stderr}")

        good = sample_script(tmp / "good.jsonl", 2)
        poor = sample_script(tmp / "poor.jsonl", 5)
        cli("run", "--benchmark", "sample", "--model", f"mock:{good}", "--run-name", "sample-good")
        cli("run", "--benchmark", "sample", "--model", f"mock:{poor}", "--run-name", "sample-poor")
        cli("run", "--benchmark", "sample", "--model", "random", "--run-name", "sample-random", "--seed", "3")
        cli(
            "run",
            "--benchmark",
            "sample",
            "--model",
            "constant:A",
            "--method",
            "loglik",
            "--run-name",
            "sample-loglik",
        )
        kaoshi.judge("sample-good", judge_reply, store=store)
        cli("rescore", "sample-poor", "--run-name", "sample-poor-partial", "--multi-policy", "partial")
        cli("vote", "sample-good", "sample-poor", "sample-random", "--run-name", "sample-vote")
        ceval = ceval_folder(tmp / "ceval")
        cli("run", "--data", str(ceval), "--split", "val", "--model", "random", "--run-name", "ceval-random")
        cli("run", "--data", str(ceval), "--split", "val", "--model", "constant:B", "--run-name", "ceval-b")
        cli(
            "run",
            "--data",
            str(ceval),
            "--split",
            "test",
            "--model",
            "constant:D",
            "--run-name",
            "ceval-test",
        )
        cmmlu = cmmlu_folder(tmp / "CMMLU")
        cli("run", "--data", str(cmmlu), "--model", "random", "--run-name", "cmmlu-random", "--seed", "1")
        cli("run", "--data", str(cmmlu), "--model", "constant:C", "--shots", "0", "--run-name", "cmmlu-c")
    subprocess.run([*kaoshi_command(), "store", "checkpoint", "--store", str(store)], check=True)
    for name, args in COMMANDS.items():
        (expected / f"{name}.txt").write_bytes(run_command(args, store, out))
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    (out / "WRITTEN_BY").write_text(f"kaoshi {kaoshi.__version__} at {commit}", encoding="utf-8")


if __name__ == "__main__":
    main()
