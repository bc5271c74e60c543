"""Reading results at a million samples: every reading command against SQLite's own aggregate over the same
rows (issue 42).

The script builds a kaoshi store of N samples for each size: RUNS runs (default 10, N / RUNS samples
each) of different models on one QualBench-shaped exam (the six domains, single / multi / true-false
questions, the authors' 1-shot prompt of ~570 characters (~600 with options) that repeats its type's
demo, replies of ~75 characters; some errors, unparsed and ambiguous answers and replies cut off at the
budget). The tables are made by kaoshi (Store, open_run with a real RunSpec, finish_run); the samples go
in with sqlite3 `executemany` in large transactions, each row `written_row(SampleRecord)` with the texts
it holds (its prompt and question, each once in the store): exactly what kaoshi writes. Each run's counts
are then kept as its process keeps them at its end (kaoshi.api.summary.keep_counts). A row is read back
as kaoshi reads it (sample_from_row), and `kaoshi samples` must print JSON.

Each reading command runs as its own process (`.venv/bin/kaoshi ... --store PATH`) on the store the OS
already holds in its page cache: its wall time and its peak RSS (GNU time's, where /usr/bin/time is;
else os.wait4's, which also counts this script's memory at the fork), with a per-command timeout
(reported as "timeout"). The viewer's pages are asked cold: a fresh process per page imports
kaoshi.view, makes the app (create_app) and asks one URL through Starlette's TestClient. The floor of
each is the SQL that reads what it shows, with Python's sqlite3 on the same file in this process (best of
3, a fresh read-only connection each; each command is tried --repeats times, 3 by default, and its best
try shown with the most memory any try took, each try in the JSON): runs -> count, outcomes and points per
run; report -> counts, correct, sum(score), sum(points) of each run in one pass grouped by
domain/subject/category/type; two runs -> the same for both plus their paired per-question outcomes (a
join on question id: what a paired bootstrap reads); first line of samples -> the run's first row by
position (LIMIT 1); every sample -> all of the run's rows by position, fetched without decoding.

The leaderboard, `report A`, `report A B` and `compare A B` run twice: first with what the store keeps
of them dropped (each counts its runs, pairing them where there are several, then keeps what it counted:
kaoshi.store.summaries, kaoshi.api.kept), then as a later one reads it, from what was kept; the viewer's
pages read what was kept too. A reused store is first opened for writing, as any kaoshi command that
writes opens it, so that it has this kaoshi's tables. kaoshi's modules are compiled to bytecode first and
the commands run from it, as an installed kaoshi does (where PYTHONDONTWRITEBYTECODE is set, each command
would otherwise compile what it imports).

Run: .venv/bin/python speed/store_scale.py [--sizes 100000,1000000] [--runs 10] [--timeout 600]
     [--json OUT] [--dir DIR [--reuse]] [--commands runs,report,...] [--repeats 3]
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import json
import os
import platform
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kaoshi.api.summary import keep_counts
from kaoshi.benchmarks.qualbench.domains import QUALBENCH_DOMAINS
from kaoshi.benchmarks.qualbench.paper_prompt import PAPER_INSTRUCTIONS
from kaoshi.data.model import QuestionType
from kaoshi.store import Method, RunSpec, SampleRecord, SampleStatus, Store
from kaoshi.store.rows import SAMPLE_COLUMNS, WRITTEN_COLUMNS, sample_from_row, written_row
from kaoshi.store.schema import INSERT_TEXT, select_list
from kaoshi.version import __version__
from kaoshi.view.urls import compare_url, run_url

ROOT = Path(__file__).resolve().parents[1]
KAOSHI = Path(sys.executable).parent / "kaoshi"
LOCAL = "http://127.0.0.1:8000"
FLOOR_REPEATS = 3
BATCH = 50_000  # rows a transaction

# --- the exam and the runs -------------------------------------------------------------------------------

DOMAINS = tuple(QUALBENCH_DOMAINS)  # the data's own names (消防, not 消防安全), with their categories
TYPE_SHARES = ((QuestionType.SINGLE, 0.58), (QuestionType.MULTI, 0.20), (QuestionType.TRUE_FALSE, 0.22))
MODELS = (
    "qwen2.5-7b-instruct",
    "qwen2.5-14b-instruct",
    "qwen2.5-72b-instruct",
    "glm-4-9b-chat",
    "deepseek-v3",
    "yi-1.5-34b-chat",
    "internlm2.5-20b-chat",
    "baichuan2-13b-chat",
    "llama-3.1-8b-instruct",
    "gpt-4o-mini",
)
# One fixed solved demo a type, as the authors' prompt has (the start of each stem is theirs).
DEMOS = {
    QuestionType.SINGLE: (
        "酸碱灭火器是一种内部装有65％的工业硫酸和碳酸氢钠的水溶液作灭火剂的灭火器，使用时将筒身颠倒，"
        "两种药液混合后产生二氧化碳气体，将药液喷出灭火。下列关于酸碱灭火器适用范围的说法，正确的是（ ）。\n"
        "A．适用于扑救油类火灾\nB．适用于扑救竹、木、棉、毛、草、纸等一般可燃物质的初起火灾\n"
        "C．适用于扑救带电设备火灾\nD．适用于扑救忌水、忌酸物质的火灾",
        "B",
        "酸碱灭火器喷出的是含二氧化碳的酸性水溶液，能冷却燃烧物并隔绝空气，适用于扑救竹、木、棉、毛、草、纸等"
        "一般可燃物质的初起火灾；但不能用于油类火灾、带电设备火灾以及忌水、忌酸物质的火灾，故选B。",
    ),
    QuestionType.MULTI: (
        "关于运行速度的说法，正确的有下列哪些选项？在公路路线设计和安全性评价中，设计人员应根据路段的线形条件、车辆性能和驾驶行为，"
        "对运行速度进行测算并检验相邻路段的协调性。\nA．运行速度是指中等技术水平的驾驶员能够安全驾驶的速度\n"
        "B．运行速度通常取第85百分位车速\nC．运行速度一般低于设计速度\nD．相邻路段运行速度差应加以控制",
        "ABD",
        "运行速度是在良好气候条件下、实际道路状况中，中等技术水平的驾驶员能够保持的安全行驶速度，通常采用"
        "测定速度的第85百分位值；设计中要求控制相邻路段运行速度的差值；运行速度可能高于设计速度，C错误。",
    ),
    QuestionType.TRUE_FALSE: (
        "基本建设投资和更新改造投资的综合范围为总投资50万元以上（含50万元）的项目，按照统计制度的规定，"
        "城镇和工矿区私人建房投资也纳入这一统计范围进行核算。",
        "错误",
        "按照固定资产投资统计制度，基本建设和更新改造投资的统计起点为计划总投资50万元及以上的建设项目，"
        "城镇和工矿区私人建房投资单独统计，不包括在基本建设和更新改造投资的综合范围之内；"
        "题干将私人建房投资纳入综合范围，与统计制度的规定不符，故判断为错误。",
    ),
}
TOPICS = {
    "安全生产": (
        "危险化学品储存",
        "有限空间作业",
        "特种设备检验",
        "安全生产责任制",
        "隐患排查治理",
        "应急预案演练",
    ),
    "消防": (
        "建筑防火分区",
        "自动喷水灭火系统",
        "火灾自动报警系统",
        "消防车道设置",
        "疏散楼梯间",
        "灭火器配置",
    ),
    "建筑工程": ("混凝土结构施工", "基坑支护", "脚手架搭设", "工程质量验收", "施工组织设计", "模板工程"),
    "经济金融": ("货币政策工具", "汇率制度", "商业银行资本充足率", "通货膨胀", "财政赤字", "金融市场监管"),
    "石油天然气": ("油气集输", "井控管理", "长输管道防腐", "天然气净化", "钻井液性能", "储罐区防火"),
    "银行保险": ("保险合同订立", "再保险安排", "反洗钱义务", "信贷资产分类", "偿付能力监管", "理财产品销售"),
}
CLAUSES = (
    "根据国家现行标准和行业规范的规定",
    "结合某企业在生产经营过程中发生的实际情况",
    "在对相关单位开展监督检查时发现",
    "按照有关法律法规和管理制度的要求",
    "依据相关技术规范中的强制性条文",
    "考虑到作业现场的环境条件和人员配置",
)
ASKS = {
    QuestionType.SINGLE: "下列说法中，正确的是（ ）。",
    QuestionType.MULTI: "下列说法中，正确的有（ ）。",
    QuestionType.TRUE_FALSE: "上述做法符合规定要求。",
}
OPTION_TEXTS = (
    "应当由具备相应资质的单位组织实施，并留存完整的记录",
    "可由现场负责人根据经验自行决定是否执行",
    "须经技术负责人审核批准后方可实施",
    "应每年至少进行一次全面检查和评估",
    "发现问题后应立即停止作业并报告",
    "可以先行实施，事后再补办相关手续",
    "应当纳入年度计划并明确责任人员",
    "不属于强制性要求，可视情况执行",
)
REASONS = (
    "根据相关规范的规定，该项要求属于强制性条文，必须严格执行；其他选项的表述与规定不符，或者混淆了适用条件，"
    "因此不能选择，应予排除，本题选该项。",
    "题干所述情形应由具备相应资质的单位负责，并按规定程序审批、备案，故该选项正确；其余选项存在明显错误，"
    "不符合现行的管理要求，均应排除。",
    "结合行业管理要求分析，该做法能够有效防范风险并落实主体责任，符合现行标准的规定，因此选择该选项作为本题的正确答案，其余不选。",
    "依据有关法律法规，责任主体应当履行相应的管理义务，选项中只有该项的说法完整且准确，其余选项的表述均不够妥当，故不选择这些选项。",
)
# The share of each outcome besides right and wrong: unparsed, ambiguous, error, cut off at the budget.
OTHER_OUTCOMES = (("unparsed", 0.04), ("ambiguous", 0.01), ("error", 0.02), ("truncated", 0.03))


@dataclass(frozen=True)
class Question:
    id: str
    position: int
    qtype: QuestionType
    domain: str
    gold: frozenset[str] | bool
    content: dict[str, Any]
    prompt: str


def make_question(i: int, rng: random.Random) -> Question:
    """Question `i` of the exam: its content as kaoshi stores it and the authors' 1-shot prompt."""
    domain = DOMAINS[i % len(DOMAINS)]
    draw, qtype = rng.random(), QuestionType.TRUE_FALSE
    for kind, share in TYPE_SHARES:
        if draw < share:
            qtype = kind
            break
        draw -= share
    topic = rng.choice(TOPICS[domain])
    stem = (
        f"{rng.choice(CLAUSES)}，某单位在开展{topic}工作时（第{i}题），{rng.choice(CLAUSES)}，"
        f"对{topic}的管理要求进行了梳理和{rng.choice(('复核', '评估', '整改'))}。该单位现有从业人员"
        f"{rng.randrange(50, 3000)}人，其中{rng.randrange(3, 40)}人专职负责{topic}，近{rng.randrange(2, 6)}年"
        f"{rng.choice(('未发生', '发生过一起', '发生过两起'))}相关事故或事件。检查中发现其{topic}台账记录"
        f"{rng.choice(('不完整', '更新不及时', '与现场不符'))}，部分作业人员未经专门培训即上岗作业。"
        + ASKS[qtype]
    )
    options: list[list[str]] = []
    gold: frozenset[str] | bool
    if qtype is QuestionType.TRUE_FALSE:
        gold = rng.random() < 0.5
        body = stem
    else:
        texts = rng.sample(OPTION_TEXTS, 4)
        options = [[letter, f"{topic}{text}"] for letter, text in zip("ABCD", texts, strict=True)]
        count = 1 if qtype is QuestionType.SINGLE else rng.choice((2, 3, 3, 4))
        gold = frozenset(rng.sample("ABCD", count))
        body = stem + "\n" + "\n".join(f"{letter}．{text}" for letter, text in options)
    demo, demo_answer, demo_explanation = DEMOS[qtype]
    prompt = (
        f"{PAPER_INSTRUCTIONS[qtype]}\n题目：{demo}\n答案：{demo_answer}\n解析：{demo_explanation}\n\n"
        f"题目：{body}\n答案："
    )
    content = {
        "answer": sorted(gold) if isinstance(gold, frozenset) else gold,
        "category": QUALBENCH_DOMAINS[domain],
        "domain": domain,
        "explanation": rng.choice(REASONS),
        "id": str(i),
        "options": options,
        "points": 1.0,
        "split": "test",
        "stem": stem,
        "subject": None,
        "type": qtype.value,
    }
    return Question(str(i), i, qtype, domain, gold, content, prompt)


def answer_text(answer: frozenset[str] | bool) -> str:
    if isinstance(answer, bool):
        return "正确" if answer else "错误"
    return "".join(sorted(answer))


def wrong_answer(question: Question, rng: random.Random) -> frozenset[str] | bool:
    if isinstance(question.gold, bool):
        return not question.gold
    if question.qtype is QuestionType.SINGLE:
        return frozenset(rng.choice(sorted(set("ABCD") - question.gold)))
    picked = frozenset(rng.sample("ABCD", rng.choice((1, 2, 3))))
    return picked if picked != question.gold else frozenset("ABCD") - picked or frozenset("A")


def make_sample(question: Question, skill: float, rng: random.Random) -> SampleRecord:
    """One model's sample of `question`: right with probability `skill` among the answers it gave."""
    draw, outcome = rng.random(), ""
    for name, share in OTHER_OUTCOMES:
        if draw < share:
            outcome = name
            break
        draw -= share
    if not outcome:
        outcome = "right" if rng.random() < skill else "wrong"
    given = question.gold if outcome == "right" else wrong_answer(question, rng)
    answer: frozenset[str] | bool | None = given
    status, error = "ok", None
    response: str | None = f"答案：{answer_text(given)}\n解析：{rng.choice(REASONS)}"
    truncated = False
    if outcome == "unparsed":
        status, answer = "unparsed", None
        response = (
            f"这道题涉及{question.domain}领域的具体规定，需要结合实际情况综合分析，{rng.choice(REASONS)}"
        )
    elif outcome == "ambiguous":
        status, answer = "ambiguous", None
        response = f"答案：A或C\n解析：两个选项都有一定道理，{rng.choice(REASONS)}"
    elif outcome == "error":
        status, answer, response, error = "error", None, None, "HTTP 504: upstream timed out after 60 s"
    elif outcome == "truncated":  # the budget ends inside the explanation, after the answer
        truncated = True
        response = (
            f"答案：{answer_text(given)}\n解析：首先，我们需要逐一分析每个选项的内容，" + REASONS[0][:40]
        )
    correct = None if status == "error" else status == "ok" and answer == question.gold
    return SampleRecord(
        question_id=question.id,
        position=question.position,
        qtype=question.qtype.value,
        gold=question.gold,
        points=1.0,
        subject=None,
        domain=question.domain,
        category=QUALBENCH_DOMAINS[question.domain],
        question=question.content,
        prompt=question.prompt,
        status=SampleStatus(status),
        shots=1,
        response=response,
        answer=answer,
        correct=correct,
        score=None if correct is None else float(correct),
        latency_s=None if response is None else round(rng.uniform(0.4, 6.0), 3),
        tokens_in=len(question.prompt) * 3 // 4,
        tokens_out=None if response is None else len(response) * 3 // 4,
        error=error,
        truncated=truncated,
    )


def run_models(runs: int) -> list[str]:
    return [MODELS[k % len(MODELS)] + ("" if k < len(MODELS) else f"-{k}") for k in range(runs)]


def run_names(runs: int) -> list[str]:
    """Named as `kaoshi run` names them: benchmark, model, method, shots."""
    return [f"qualbench-{model}-generate-1shot" for model in run_models(runs)]


def run_spec(model: str, n_questions: int) -> RunSpec:
    return RunSpec(
        benchmark="qualbench",
        data="QualBench.json",
        split=None,
        fingerprint=hashlib.sha256(f"store-scale-{n_questions}".encode()).hexdigest(),
        n_questions=n_questions,
        prompt="qualbench",
        prompt_version=2,
        shots=1,
        model=f"openai:{model}",
        method=Method.GENERATE,
        seed=0,
        limit=None,
        max_new_tokens=50,
        max_new_tokens_open=512,
        model_settings={"base_url": "http://127.0.0.1:8000/v1"},
        kaoshi_version=__version__,
    )


def build_store(path: Path, size: int, runs: int) -> float:
    """A store of `runs` finished runs of size // runs samples each; seconds taken."""
    started = time.perf_counter()
    n_questions = size // runs
    rng = random.Random(42)
    questions = [make_question(i, rng) for i in range(n_questions)]
    names = run_names(runs)
    with Store(path) as store:
        for name, model in zip(names, run_models(runs), strict=True):
            store.open_run(name, run_spec(model, n_questions))
    columns = ", ".join(("run", *WRITTEN_COLUMNS, "created_at"))
    placeholders = ", ".join("?" * (len(WRITTEN_COLUMNS) + 2))
    insert = f"INSERT INTO samples ({columns}) VALUES ({placeholders})"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous=OFF")  # the rows are the same; only a power cut could lose them
    try:
        for k, name in enumerate(names):
            skill = 0.45 + 0.35 * k / max(1, runs - 1)
            now = time.time()
            for start in range(0, n_questions, BATCH):
                rows, texts = [], []
                for q in questions[start : start + BATCH]:
                    values, held = written_row(make_sample(q, skill, rng))
                    rows.append((name, *values, now))
                    texts += held
                db.execute("BEGIN")
                db.executemany(INSERT_TEXT, texts)
                db.executemany(insert, rows)
                db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    with Store(path) as store:
        for name in names:
            store.finish_run(name)
            # as each run's process does at its end (kaoshi.api.evaluation): its counts kept for its report
            # and for the comparisons that take it whole or less a few questions (kaoshi.api.counting)
            keep_counts(store, name)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return time.perf_counter() - started


def store_ready(path: Path, size: int, runs: int) -> bool:
    if not path.is_file():
        return False
    with closing_db(path) as db:
        counts = dict(db.execute("SELECT run, COUNT(*) FROM samples GROUP BY run").fetchall())
    return counts == dict.fromkeys(run_names(runs), size // runs)


# --- what the store holds --------------------------------------------------------------------------------


@contextmanager
def closing_db(path: Path) -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        yield db
    finally:
        db.close()


def store_facts(path: Path, size: int, first_run: str) -> dict[str, Any]:
    """Size on disk, bytes a sample, what the text columns hold on average (over every row, NULL as 0),
    and one row read back as kaoshi reads it."""
    disk = sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
    with closing_db(path) as db:
        text = [r[1] for r in db.execute("PRAGMA table_info(samples)") if r[2] == "TEXT"]
        lengths = ", ".join(
            f"AVG(COALESCE(LENGTH({c}), 0)), AVG(COALESCE(LENGTH(CAST({c} AS BLOB)), 0))" for c in text
        )
        row = db.execute(f"SELECT {lengths} FROM samples").fetchone()
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        try:
            by_object = dict(db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall())
        except sqlite3.OperationalError:  # sqlite built without the dbstat table
            by_object = {}
        first = db.execute(
            f"SELECT {select_list(db, 'samples', SAMPLE_COLUMNS)} FROM samples WHERE run=? LIMIT 1",
            (first_run,),
        ).fetchone()
        held = db.execute("SELECT COUNT(*), TOTAL(LENGTH(CAST(body AS BLOB))) FROM texts").fetchone()
    sample_from_row(first, path, first_run)  # the rows are kaoshi's: they read back as records
    columns = {c: {"chars": row[2 * i], "bytes": row[2 * i + 1]} for i, c in enumerate(text)}
    # the prompts and questions held once for every sample that has them (kaoshi.store.schema.TEXT_REFS)
    columns["texts (held once)"] = {"chars": None, "bytes": held[1] / size, "count": held[0]}
    return {
        "bytes_on_disk": disk,
        "bytes_per_sample": disk / size,
        "text_bytes_per_sample": sum(v["bytes"] for v in columns.values()),
        "page_size": page_size,
        "pages": pages,
        "bytes_by_object": by_object,
        "average_text_column": dict(sorted(columns.items(), key=lambda item: -item[1]["bytes"])),
    }


# --- the floors ------------------------------------------------------------------------------------------

AGGREGATE = (
    "COUNT(*), TOTAL(status='ok'), TOTAL(status='unparsed'), TOTAL(status='ambiguous'), "
    "TOTAL(status='error'), TOTAL(correct), TOTAL(score), TOTAL(points), TOTAL(truncated)"
)


def floor_runs(db: sqlite3.Connection, runs: list[str]) -> None:
    db.execute("SELECT name, spec, status, created_at, finished_at FROM runs").fetchall()
    db.execute(f"SELECT run, {AGGREGATE} FROM samples GROUP BY run").fetchall()


def floor_leaderboard(db: sqlite3.Connection, runs: list[str]) -> None:
    db.execute("SELECT name, spec, status, created_at, finished_at FROM runs").fetchall()
    db.execute(f"SELECT run, domain, {AGGREGATE} FROM samples GROUP BY run, domain").fetchall()


def _groups(db: sqlite3.Connection, run: str) -> None:
    db.execute("SELECT spec FROM runs WHERE name=?", (run,)).fetchall()
    db.execute(
        f"SELECT domain, subject, category, qtype, {AGGREGATE} FROM samples WHERE run=? "
        "GROUP BY domain, subject, category, qtype",
        (run,),
    ).fetchall()


def floor_report(db: sqlite3.Connection, runs: list[str]) -> None:
    for run in runs:
        _groups(db, run)


def floor_pair(db: sqlite3.Connection, runs: list[str]) -> None:
    _groups(db, runs[0])
    _groups(db, runs[1])
    db.execute(
        "SELECT a.question_id, a.correct, a.score, b.correct, b.score FROM samples a "
        "JOIN samples b ON b.run=? AND b.question_id=a.question_id WHERE a.run=?",
        (runs[1], runs[0]),
    ).fetchall()


def floor_first_sample(db: sqlite3.Connection, runs: list[str]) -> None:
    db.execute(
        f"SELECT {select_list(db, 'samples', SAMPLE_COLUMNS)} FROM samples WHERE run=? "
        "ORDER BY position LIMIT 1",
        (runs[0],),
    ).fetchall()


def floor_every_sample(db: sqlite3.Connection, runs: list[str]) -> None:
    for _ in db.execute(
        f"SELECT {select_list(db, 'samples', SAMPLE_COLUMNS)} FROM samples WHERE run=? ORDER BY position",
        (runs[0],),
    ):
        pass


def floor_samples_page(db: sqlite3.Connection, runs: list[str]) -> None:
    run = runs[0]
    db.execute(
        "SELECT status, correct, truncated, domain, subject, category, qtype, COUNT(*) FROM samples "
        "WHERE run=? GROUP BY 1, 2, 3, 4, 5, 6, 7",
        (run,),
    ).fetchall()
    db.execute(
        "SELECT question_id, domain, subject, category, qtype, gold, answer, status, correct, truncated, "
        "substr(response, 1, 120) FROM samples WHERE run=? ORDER BY question_id LIMIT 51",
        (run,),
    ).fetchall()


def floor_one_sample(db: sqlite3.Connection, runs: list[str]) -> None:
    run, question_id = runs[0], runs[-1]  # the question id rides at the end
    db.execute(
        f"SELECT {select_list(db, 'samples', SAMPLE_COLUMNS)} FROM samples WHERE run=? AND question_id=?",
        (run, question_id),
    ).fetchall()
    for sign, order in (("<", "DESC"), (">", "")):
        db.execute(
            f"SELECT question_id FROM samples WHERE run=? AND question_id {sign} ? "
            f"ORDER BY question_id {order} LIMIT 1",
            (run, question_id),
        ).fetchall()


FLOORS: dict[str, tuple[str, Callable[[sqlite3.Connection, list[str]], None]]] = {
    "runs": ("outcomes and points per run, one pass", floor_runs),
    "leaderboard": ("outcomes and points per run and domain, one pass", floor_leaderboard),
    "report": ("each run by domain/subject/category/type, one pass", floor_report),
    "pair": ("two runs by group + paired outcomes (join)", floor_pair),
    "first": ("first row by position (LIMIT 1)", floor_first_sample),
    "every": ("the run's rows by position, not decoded", floor_every_sample),
    "samples-page": ("outcome cells + first 51 rows by id", floor_samples_page),
    "sample-page": ("one row by key + its neighbours", floor_one_sample),
}


def time_floor(path: Path, floor: Callable[[sqlite3.Connection, list[str]], None], args: list[str]) -> float:
    best = float("inf")
    for _ in range(FLOOR_REPEATS):
        started = time.perf_counter()
        with closing_db(path) as db:
            floor(db, args)
        best = min(best, time.perf_counter() - started)
    return best


# --- the commands ----------------------------------------------------------------------------------------


@dataclass
class Measured:
    seconds: float | None  # None: timed out
    peak_mib: float | None
    exit_code: int | None
    out_bytes: int
    lines: int
    first_line: str
    error: str


# GNU time reports the peak RSS of the command alone. os.wait4's would not: a child's ru_maxrss counts
# the memory of this process at the fork, before the command was exec'd (this script holds the exam).
TIME = Path("/usr/bin/time")


class PipeReader(threading.Thread):
    """Reads a process's stdout as it comes: bytes, lines, the first line and when it ended."""

    def __init__(self, stdout: Any) -> None:
        super().__init__(daemon=True)
        self.stdout = stdout
        self.bytes = self.lines = 0
        self.head = b""
        self.first_at: float | None = None
        self.first_seen = threading.Event()

    def run(self) -> None:
        while chunk := self.stdout.read1(1 << 20):
            if self.first_at is None:
                self.head += chunk
                if b"\n" in chunk:
                    self.first_at = time.perf_counter()
                    self.first_seen.set()
            self.bytes += len(chunk)
            self.lines += chunk.count(b"\n")
        self.first_seen.set()

    @property
    def first_line(self) -> str:
        return self.head.split(b"\n", 1)[0].decode(errors="replace")


def kill_command(process: subprocess.Popen[bytes], timed: bool) -> None:
    """SIGKILL the command; under GNU time, the command only, so that time still writes its figures."""
    if timed:
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
        try:
            pids = [int(pid) for pid in children.read_text().split()]
        except OSError:
            pids = []
        if pids:
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            return
    os.killpg(process.pid, signal.SIGKILL)


def measure(args: list[str], timeout: float, *, first_line_only: bool = False) -> Measured:
    """Wall time and peak RSS of one process; stdout read through a pipe (to its first line only when
    `first_line_only`: then the process is killed, as `| head -1` would end it)."""
    # as an installed kaoshi runs: from its compiled bytecode (compile_package), whatever this shell says
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(COLUMNS="120", PYTHONUNBUFFERED="1")
    timed = TIME.exists()
    with tempfile.TemporaryFile() as stderr, tempfile.NamedTemporaryFile("r") as peak_file:
        command = [str(TIME), "-f", "%M", "-o", peak_file.name, *args] if timed else args
        started = time.perf_counter()
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=stderr, env=env, cwd=ROOT, start_new_session=True
        )
        reader = PipeReader(process.stdout)
        reader.start()
        timed_out = cut = False
        if first_line_only:
            timed_out = not reader.first_seen.wait(timeout=timeout)
            cut = reader.first_at is not None
            if timed_out or cut:
                kill_command(process, timed)
        else:
            # a blocking wait, killed by a timer: Popen.wait(timeout=...) polls, sleeping up to 50 ms between
            # looks, which rounded every figure up to the next 50 ms
            fired = threading.Event()

            def stop() -> None:
                fired.set()
                kill_command(process, timed)

            timer = threading.Timer(timeout, stop)
            timer.start()
            process.wait()
            timer.cancel()
            timed_out = fired.is_set()
        process.wait()
        ended = time.perf_counter()
        reader.join(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
        stderr.seek(0)
        error = stderr.read().decode(errors="replace").strip()
        peak_lines = peak_file.read().split()
    peak_kib = float(peak_lines[-1]) if timed and peak_lines and peak_lines[-1].isdigit() else None
    if timed_out:
        seconds = None
    elif cut:
        seconds = (reader.first_at or ended) - started
    else:
        seconds = ended - started
    return Measured(
        seconds=seconds,
        peak_mib=None if peak_kib is None else peak_kib / 1024,
        exit_code=None if timed_out or cut else process.returncode,
        out_bytes=reader.bytes,
        lines=reader.lines,
        first_line=reader.first_line,
        error=error[-600:],
    )


# One page of the viewer in a fresh process: import, create_app, one GET; prints the status and timings.
_PAGE = """
import json, sys, time
started = time.perf_counter()
from starlette.testclient import TestClient
from kaoshi.view import create_app
imported = time.perf_counter()
with TestClient(create_app(sys.argv[1]), base_url=sys.argv[3]) as client:
    asked = time.perf_counter()
    page = client.get(sys.argv[2])
    done = time.perf_counter()
print(json.dumps({"status": page.status_code, "bytes": len(page.content), "import_s": imported - started,
                  "request_s": done - asked, "body": page.text[:300] if page.status_code != 200 else ""}))
"""


# What the process of a run does when the run ends (kaoshi.api.evaluation): its benchmark's board counted
# and kept, so that the next `kaoshi leaderboard` reads it.
_KEEP_BOARD = """
import sys
from kaoshi.api.boards import keep_board
from kaoshi.store import Store
with Store(sys.argv[1]) as store:
    keep_board(store, "qualbench")
"""

# What a run's end does for its own report (kaoshi.evaluate and kaoshi.judge): count the run and keep it.
_KEEP_RUN = """
import sys
from kaoshi.api.summary import read_summary
from kaoshi.store import Store
with Store(sys.argv[1]) as store:
    read_summary(store, sys.argv[2], keep=True)
"""


@dataclass(frozen=True)
class Case:
    key: str  # for --commands
    label: str
    args: list[str]
    floor: str
    floor_args: list[str]
    first_line_only: bool = False
    page: bool = False
    # the store's kept summaries of this kind dropped first ("board", "run", "comparison", "paired"; a run's
    # own only of the runs the command reads): the command counts (and keeps)
    forget_kept: str = ""


def cases(path: Path, names: list[str], n_questions: int) -> list[Case]:
    a, b = names[0], names[1]
    store = ["--store", str(path)]
    kaoshi = [str(KAOSHI)]
    middle = str(n_questions // 2)
    page = [sys.executable, "-c", _PAGE, str(path)]
    return [
        Case("start", "kaoshi --version (start-up)", [*kaoshi, "--version"], "", []),
        Case("runs", "kaoshi runs", [*kaoshi, "runs", *store], "runs", names),
        Case(
            "leaderboard",
            "kaoshi leaderboard, counted (and kept)",
            [*kaoshi, "leaderboard", *store],
            "leaderboard",
            names,
            forget_kept="board",
        ),
        Case(
            "leaderboard", "kaoshi leaderboard, kept", [*kaoshi, "leaderboard", *store], "leaderboard", names
        ),
        Case(
            "leaderboard",
            "a run's end: its board counted and kept by the run's process",
            [sys.executable, "-c", _KEEP_BOARD, str(path)],
            "leaderboard",
            names,
            forget_kept="board",
        ),
        Case(
            "leaderboard",
            "kaoshi leaderboard after a run (kept at its end)",
            [*kaoshi, "leaderboard", *store],
            "leaderboard",
            names,
        ),
        Case(
            "report",
            "kaoshi report A, counted",
            [*kaoshi, "report", a, *store],
            "report",
            [a],
            forget_kept="run",
        ),
        Case(
            "report",
            "a run's end: its counts kept by the run's process",
            [sys.executable, "-c", _KEEP_RUN, str(path), a],
            "report",
            [a],
        ),
        Case("report", "kaoshi report A, kept", [*kaoshi, "report", a, *store], "report", [a]),
        Case(
            "report",
            "kaoshi report A --format json",
            [*kaoshi, "report", a, "--format", "json", *store],
            "report",
            [a],
        ),
        Case(
            "report2",
            "kaoshi report A B, counted (and kept)",
            [*kaoshi, "report", a, b, *store],
            "pair",
            [a, b],
            forget_kept="comparison",
        ),
        Case("report2", "kaoshi report A B, kept", [*kaoshi, "report", a, b, *store], "pair", [a, b]),
        Case(
            "compare",
            "kaoshi compare A B, counted (and kept)",
            [*kaoshi, "compare", a, b, *store],
            "pair",
            [a, b],
            forget_kept="paired",
        ),
        Case("compare", "kaoshi compare A B, kept", [*kaoshi, "compare", a, b, *store], "pair", [a, b]),
        Case(
            "samples",
            "kaoshi samples A --format jsonl: first line",
            [*kaoshi, "samples", a, "--format", "jsonl", *store],
            "first",
            [a],
            first_line_only=True,
        ),
        Case(
            "samples",
            "kaoshi samples A --format jsonl: all",
            [*kaoshi, "samples", a, "--format", "jsonl", *store],
            "every",
            [a],
        ),
        Case(
            "plot",
            "kaoshi plot A B (bar chart, kept)",
            [*kaoshi, "plot", a, b, "-o", str(path.with_suffix(".plot.png")), *store],
            "report",
            [a, b],
        ),
        Case(
            "html",
            "kaoshi html A: every sample in one file",
            [*kaoshi, "html", a, "-o", str(path.with_suffix(".report.html")), *store],
            "every",
            [a],
        ),
        Case("view", "view: runs page `/` (cold)", [*page, "/", LOCAL], "runs", names, page=True),
        Case("view", "view: run page (cold)", [*page, run_url(a), LOCAL], "report", [a], page=True),
        Case(
            "view",
            "view: samples page (cold)",
            [*page, run_url(a, "samples"), LOCAL],
            "samples-page",
            [a],
            page=True,
        ),
        Case(
            "view",
            "view: one sample (cold)",
            [*page, run_url(a, "sample", middle), LOCAL],
            "sample-page",
            [a, middle],
            page=True,
        ),
        Case(
            "view",
            "view: compare A B (cold, kept)",
            [*page, compare_url([a, b]), LOCAL],
            "pair",
            [a, b],
            page=True,
        ),
        Case(
            "view",
            "view: compare A B, page 2 (cold, kept)",
            [*page, compare_url([a, b], 2), LOCAL],
            "pair",
            [a, b],
            page=True,
        ),
        Case(
            "view",
            "view: compare A B (cold, nothing kept: the page counts, and keeps nothing)",
            [*page, compare_url([a, b]), LOCAL],
            "pair",
            [a, b],
            page=True,
            forget_kept="comparison",
        ),
        Case(
            "view",
            "view: leaderboard page (cold, kept)",
            [*page, "/leaderboard", LOCAL],
            "leaderboard",
            names,
            page=True,
        ),
    ]


def failure(case: Case, measured: Measured, n_questions: int) -> str:
    """Why the command failed or did not give what it should ("" when it did)."""
    note = check(case, measured, n_questions)
    return "" if case.page and note.startswith(_ANSWERED) else note


_ANSWERED = "request "  # how check's note of a page that answered begins


def check(case: Case, measured: Measured, n_questions: int) -> str:
    """A note when the command failed or did not give what it should; for a page that answered, its times."""
    if measured.seconds is None:
        return "timeout"
    if case.first_line_only:
        try:
            row = json.loads(measured.first_line)
        except ValueError:
            return f"first line is not JSON: {measured.first_line[:120]!r} {measured.error[-200:]}"
        return (
            "" if "id" in row and "status" in row else f"unexpected first line {measured.first_line[:120]!r}"
        )
    if measured.exit_code != 0:
        return f"exit {measured.exit_code}: {measured.error.splitlines()[-1] if measured.error else ''}"
    if case.page:
        try:
            answer = json.loads(measured.first_line)
        except ValueError:
            return f"no answer: {measured.error[-200:]}"
        if answer["status"] != 200:
            return f"HTTP {answer['status']}: {answer['body'][:200]}"
        timed = f"{answer['request_s']:.2f} s, import {answer['import_s']:.2f} s, {answer['bytes']:,} B"
        return _ANSWERED + timed
    if case.key == "samples" and measured.lines != n_questions:
        return f"{measured.lines} lines, expected {n_questions}"
    return ""


# --- the table -------------------------------------------------------------------------------------------


def fmt_seconds(value: float | None) -> str:
    if value is None:
        return "timeout"
    if value < 0.01:
        return f"{value:.4f}"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def print_size(size: int, facts: dict[str, Any], build_s: float) -> None:
    mib = facts["bytes_on_disk"] / 2**20
    print(
        f"\n## {size:,} samples: store built in {build_s:.1f} s, {mib:,.0f} MiB on disk, "
        f"{facts['bytes_per_sample']:,.0f} bytes a sample"
    )
    text = facts["text_bytes_per_sample"]
    print(
        f"text a row: {text:,.0f} B ({facts['pages'] / (size or 1):.2f} pages of {facts['page_size']:,} B "
        "a sample); "
        + ", ".join(
            f"{c} {v['bytes']:,.0f} B ({v['bytes'] / text:.0%}"
            + (")" if v["chars"] is None else f", {v['chars']:,.0f} chars)")
            for c, v in list(facts["average_text_column"].items())[:5]
        )
    )
    if facts["bytes_by_object"]:
        print(
            "on disk: "
            + ", ".join(
                f"{name} {b / 2**20:,.0f} MiB"
                for name, b in sorted(facts["bytes_by_object"].items(), key=lambda item: -item[1])[:4]
            )
        )


def fmt_ratio(ratio: float | None) -> str:
    if ratio is None:
        return ""
    return f"{ratio:,.0f}x" if ratio >= 10 else f"{ratio:.1f}x"


def print_table(rows: list[dict[str, Any]]) -> None:
    print("\n| command | s | peak MiB | floor | floor s | ratio | note |")
    print("| --- | ---: | ---: | --- | ---: | ---: | --- |")
    for row in rows:
        peak = "" if row["peak_mib"] is None else f"{row['peak_mib']:,.0f}"
        floor_s = "" if row["floor_s"] is None else fmt_seconds(row["floor_s"])
        print(
            f"| {row['command']} | {fmt_seconds(row['seconds'])} | {peak} | {row['floor']} | {floor_s} | "
            f"{fmt_ratio(row['ratio'])} | {row['note']} |"
        )


# --- main ------------------------------------------------------------------------------------------------


def compile_package() -> None:
    """kaoshi's modules compiled to bytecode, as pip compiles an installed package: a command would
    otherwise compile every module it imports each time it starts (0.15 s of a report) where
    PYTHONDONTWRITEBYTECODE is set, as it is on some machines."""
    compileall.compile_dir(ROOT / "src" / "kaoshi", quiet=1)


def measure_size(size: int, folder: Path, options: argparse.Namespace) -> dict[str, Any]:
    path = folder / f"scale-{size}.sqlite"
    names = run_names(options.runs)
    n_questions = size // options.runs
    if options.reuse and store_ready(path, size, options.runs):
        build_s = 0.0
        print(f"\n{size:,} samples: reusing {path}")
    else:
        for stale in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            stale.unlink(missing_ok=True)
        print(f"\n{size:,} samples: building {path} ...", flush=True)
        build_s = build_store(path, size, options.runs)
    with Store(path) as store:
        # opened for writing, as by any kaoshi command that writes: a reused store gets its tables, and each
        # run what its process keeps as it ends (kept already, unless a measurement before forgot it)
        for name in names:
            keep_counts(store, name)
    facts = store_facts(path, size, names[0])
    print_size(size, facts, build_s)
    floors: dict[tuple[str, tuple[str, ...]], float] = {}
    rows = []
    for case in cases(path, names, n_questions):
        if options.commands and case.key not in options.commands and case.key != "start":
            continue
        tries = []
        for _ in range(options.repeats):
            if case.forget_kept:
                # a comparison's or board's kept numbers, or those of the runs the command reads (the others'
                # as their processes kept them: the runs a comparison pairs with them)
                forgotten = case.floor_args if case.forget_kept == "run" else names
                with sqlite3.connect(path) as db:
                    db.executemany(
                        "DELETE FROM run_summaries WHERE kind LIKE ? AND run = ?",
                        [(f"{case.forget_kept} %", name) for name in forgotten],
                    )
            tries.append(measure(case.args, options.timeout, first_line_only=case.first_line_only))
            if tries[-1].seconds is None:
                break
        # the best try, as the floor is its best of FLOOR_REPEATS, its peak memory the most any try took;
        # a try that failed is shown instead, so that no failure hides behind a better try
        failed = [m for m in tries if failure(case, m, n_questions)]
        measured = failed[0] if failed else min(tries, key=lambda m: m.seconds or 0.0)
        peaks = [m.peak_mib for m in tries if m.peak_mib is not None]
        measured = replace(measured, peak_mib=max(peaks) if peaks else None)
        note = check(case, measured, n_questions)
        floor_s = None
        if case.floor:
            key = (case.floor, tuple(case.floor_args))
            if key not in floors:
                floors[key] = time_floor(path, FLOORS[case.floor][1], case.floor_args)
            floor_s = floors[key]
        ratio = None if measured.seconds is None or floor_s is None else measured.seconds / floor_s
        row = {
            "command": case.label,
            "argv": [
                Path(a).name if a == str(KAOSHI) else a
                for a in case.args
                if a not in (_PAGE, _KEEP_BOARD, _KEEP_RUN)
            ],
            "seconds": measured.seconds,
            "tries_s": [m.seconds for m in tries],
            "peak_mib": measured.peak_mib,
            "floor": FLOORS[case.floor][0] if case.floor else "",
            "floor_s": floor_s,
            "ratio": ratio,
            "note": note,
            "out_bytes": measured.out_bytes,
            "stderr_tail": measured.error[-300:] if note and not case.page else "",
        }
        rows.append(row)
        shown_floor = "" if floor_s is None else f", floor {fmt_seconds(floor_s)} s"
        print(f"  {case.label}: {fmt_seconds(measured.seconds)} s{shown_floor} {note}", flush=True)
    print_size(size, facts, build_s)
    print_table(rows)
    return {
        "size": size,
        "runs": options.runs,
        "samples_a_run": n_questions,
        "build_s": build_s,
        "store": facts,
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="samples in the store, comma-separated")
    parser.add_argument("--runs", type=int, default=10, help="runs in each store (size / runs samples each)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a command may take")
    parser.add_argument(
        "--repeats",
        type=lambda text: max(1, int(text)),
        default=3,
        help="tries of each command (at least 1), the best shown (as the floor's)",
    )
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--dir", type=Path, help="keep the stores here (default: a temporary folder)")
    parser.add_argument("--reuse", action="store_true", help="reuse a store in --dir of the same shape")
    parser.add_argument(
        "--commands",
        type=lambda text: set(text.split(",")),
        default=set(),
        help="only these: runs,leaderboard,report,report2,compare,samples,view (default: all)",
    )
    options = parser.parse_args()
    if options.runs < 2:
        parser.error("--runs must be at least 2 (reports of two runs)")
    sizes = [int(n) for n in options.sizes.split(",")]
    folder = options.dir or Path(tempfile.mkdtemp(prefix="kaoshi-store-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    compile_package()
    results = []
    load_before = os.getloadavg()
    print(f"load average before: {load_before[0]:.2f} (other processes on the machine slow the figures)")
    try:
        for size in sizes:
            results.append(measure_size(size, folder, options))
    finally:
        if options.dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if options.json:
        machine = {
            "cpus": os.cpu_count(),
            "load_before": load_before,
            "load_after": os.getloadavg(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "platform": platform.platform(),
        }
        options.json.write_text(
            json.dumps(
                {"machine": machine, "kaoshi": __version__, "sizes": results},
                ensure_ascii=False,
                indent=1,
                default=str,
            )
        )
        print(f"\nwrote {options.json}")


if __name__ == "__main__":
    main()
