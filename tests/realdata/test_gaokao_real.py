"""GAOKAO-Bench against OpenLMLab/GAOKAO-Bench itself (KAOSHI_REALDATA/GAOKAO-Bench, commit 6dbb24f): kaoshi
loads all 2,811 items, its `gaokao` prompt is byte for byte what the bench sends for every item, and its
points on the objective items are the bench's, on the same replies.

The bench runs as published: `Bench/objective_bench.py` and `subjective_bench.py`'s loop over the prompt
files (`export_distribute_json` and `export_union_json` of `Bench/bench_function.py`: its prompts, its answer
extraction `extract_choice_answer`), its model class `Models/openai_gpt4.py`'s `OpenaiAPI` (which builds the
system and user messages), and `Bench/OBJ_score_evaluation.py`'s `obj_score_eval` (the physics rule
included). Stand-ins only where the bench would leave the machine or wait: the `openai` package (a client
that records the messages and replies with the text written for the item) and `time.sleep`. Two things are
prepared for it, as its code is out of step with its data: the bench reads `standard_answer`, the
objective files write `answer` (copied across, in a copy of the data); and `obj_score_eval` keeps one tally
per file, so per-item points come from running it on one file per item (each registered in its table as a
type of the item's subject).

Replies are written per item from the answer kaoshi loaded: the requested format, other layouts models
write, wrong and partly right answers. Where kaoshi's points differ, either kaoshi read the answer the reply
states and the bench another one, or kaoshi read none; DIFFERENCES counts both by reply style, with the
reason.
"""

from __future__ import annotations

import copy
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

import kaoshi
from kaoshi.benchmarks import load_exam_result
from kaoshi.benchmarks.gaokao.loader import GLUED_OPTION, NO_OPTION_TEXT
from kaoshi.data import QuestionType
from kaoshi.data.collect import LoadResult
from kaoshi.data.model import Exam, Question
from tests.realdata.conftest import official_code, repository

OBJ, SUB = "Objective_Questions", "Subjective_Questions"
PROMPT_FILES = {OBJ: "Obj_Prompt.json", SUB: "Sub_Prompt.json"}
OBJECTIVE_ITEMS = {
    "2010-2013_English_MCQs": 105,
    "2010-2022_Biology_MCQs": 150,
    "2010-2022_Chemistry_MCQs": 124,
    "2010-2022_Chinese_Lang_and_Usage_MCQs": 56,
    "2010-2022_Chinese_Modern_Lit": 29,
    "2010-2022_English_Fill_in_Blanks": 30,
    "2010-2022_English_Reading_Comp": 124,
    "2010-2022_Geography_MCQs": 34,
    "2010-2022_History_MCQs": 287,
    "2010-2022_Math_II_MCQs": 218,
    "2010-2022_Math_I_MCQs": 214,
    "2010-2022_Physics_MCQs": 64,
    "2010-2022_Political_Science_MCQs": 320,
    "2012-2022_English_Cloze_Test": 26,
}
SUBJECTIVE_ITEMS = {
    "2010-2022_Biology_Open-ended_Questions": 116,
    "2010-2022_Chemistry_Open-ended_Questions": 9,
    "2010-2022_Chinese_Language_Ancient_Poetry_Reading": 29,
    "2010-2022_Chinese_Language_Classical_Chinese_Reading": 29,
    "2010-2022_Chinese_Language_Famous_Passages_and_Sentences_Dictation": 28,
    "2010-2022_Chinese_Language_Language_and_Writing_Skills_Open-ended_Questions": 42,
    "2010-2022_Chinese_Language_Literary_Text_Reading": 29,
    "2010-2022_Chinese_Language_Practical_Text_Reading": 24,
    "2010-2022_Geography_Open-ended_Questions": 28,
    "2010-2022_History_Open-ended_Questions": 128,
    "2010-2022_Math_II_Fill-in-the-Blank": 86,
    "2010-2022_Math_II_Open-ended_Questions": 122,
    "2010-2022_Math_I_Fill-in-the-Blank": 81,
    "2010-2022_Math_I_Open-ended_Questions": 123,
    "2010-2022_Physics_Open-ended_Questions": 47,
    "2010-2022_Political_Science_Open-ended_Questions": 60,
    "2012-2022_English_Language_Error_Correction": 26,
    "2014-2022_English_Language_Cloze_Passage": 23,
}
# The published text's flaws the loader reads through: (rows, the first three file:line).
QUIRKS = {
    GLUED_OPTION: (
        32,
        [
            "2010-2022_Biology_MCQs.json:994",
            "2010-2022_Biology_MCQs.json:1016",
            "2010-2022_Biology_MCQs.json:1258",
        ],
    ),
    NO_OPTION_TEXT: (
        5,
        [
            "2010-2022_Chemistry_MCQs.json:862",
            "2010-2022_Political_Science_MCQs.json:1214",
            "2010-2022_Political_Science_MCQs.json:1324",
        ],
    ),
}
# Rows kaoshi refused before its option splitter read an option glued to the one before it: the option
# the answer names, and how its text starts.
GLUED_ANSWERS = {
    "2010-2022_Biology_MCQs/114": ("D", "给切除垂体的小鼠"),
    "2010-2022_Biology_MCQs/122": ("D", "若测得乙糖溶液浓度升高"),
    "2010-2022_Biology_MCQs/142": ("C", "在高浓度Mg2+条件下RNA"),
    "2010-2022_History_MCQs/198": ("D", "部分西方人赞同变法活动"),
    "2010-2022_History_MCQs/237": ("D", "洋务派准备创办民用企业"),
    "2010-2022_History_MCQs/269": ("D", "江南市镇工商业的繁荣"),
    "2010-2022_Political_Science_MCQs/298": ("C", "多计扣除费用→减少应税所得"),
}


@pytest.fixture(scope="module")
def repo() -> Path:
    return repository("GAOKAO-Bench")


@pytest.fixture(scope="module")
def loaded(repo: Path) -> LoadResult:
    return load_exam_result("gaokao-bench", repo)  # on_invalid="fail": one bad row fails the test


def test_every_item_loads(loaded: LoadResult) -> None:
    assert not loaded.errors and not loaded.dropped
    exam = loaded.exam
    assert len(exam) == 2_811
    per_file = Counter(q.domain for q in exam.questions)
    assert per_file == Counter({**OBJECTIVE_ITEMS, **SUBJECTIVE_ITEMS})
    objective = [q for q in exam.questions if q.type is not QuestionType.OPEN]
    assert (len(objective), len(exam) - len(objective)) == (1_781, 1_030)
    assert all(q.verbatim_field("prefix_prompt") for q in exam.questions)


def test_choice_items_offer_a_to_d_with_the_answer_among_them(loaded: LoadResult) -> None:
    choice = [q for q in loaded.exam.questions if q.type in (QuestionType.SINGLE, QuestionType.MULTI)]
    assert len(choice) == 1_418 + 64  # single choice, physics multi-select
    assert all(q.letters == ("A", "B", "C", "D") for q in choice)
    assert all(isinstance(q.answer, frozenset) and q.answer <= set(q.letters) for q in choice)
    # The options that were pictures have no text: all four in four items, D in one.
    assert sum(not all(text for _, text in q.options) for q in choice) == 5
    for question_id, (letter, start) in GLUED_ANSWERS.items():
        question = loaded.exam.question(question_id)
        assert question.answer == frozenset(letter) and question.option_map[letter].startswith(start)


def test_quirks_are_warned_once_per_kind(loaded: LoadResult, repo: Path) -> None:
    folder = repo / "Data" / OBJ
    expected = [
        f"{count} row(s) {description}: {', '.join(f'{folder}/{place}' for place in places)} "
        f"and {count - len(places)} more"
        for description, (count, places) in QUIRKS.items()
    ]
    assert list(loaded.warnings) == expected


# -- the bench, run as published ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Sent:
    keyword: str
    messages: tuple[tuple[str, str], ...]


class RecordingClient:
    """`openai.OpenAI` as Models/openai_gpt4.py calls it: records the messages of each request and replies
    with `reply(keyword, messages)` (a plain string, which OpenaiAPI.postprocess passes through)."""

    def __init__(self) -> None:
        self.sent: list[Sent] = []
        self.keyword = ""
        self.reply: Callable[[str, tuple[tuple[str, str], ...]], str] = lambda keyword, messages: (
            "【答案】A<eoa>"
        )

    def __call__(self, api_key: str, base_url: str) -> Any:
        return SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=self.create)))

    def create(self, model: str, messages: list[dict[str, str]], temperature: float) -> str:
        sent = tuple((m["role"], m["content"]) for m in messages)
        self.sent.append(Sent(self.keyword, sent))
        return self.reply(self.keyword, sent)


@dataclass
class Bench:
    """The official code, imported from the repository with stand-ins for the network and the waits."""

    repo: Path
    work: Path
    client: RecordingClient
    bench_function: Any
    score: Any
    model_api: Any
    pristine_scores: dict[str, Any]
    runs: int = 0

    def prompts(self, folder: str) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = json.loads(
            (self.repo / "Bench" / PROMPT_FILES[folder]).read_text("utf-8")
        )["examples"]
        return entries

    def run(self, folders: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
        """objective_bench.py / subjective_bench.py's loop over their prompt file, on a copy of the data;
        keyword -> the merged results (each item with its model_output and, objective, model_answer)."""
        self.runs += 1
        merged = {}
        for folder in folders:
            directory = self.work / f"run{self.runs}" / folder
            directory.mkdir(parents=True)
            for entry in self.prompts(folder):
                keyword = entry["keyword"]
                data = json.loads((self.repo / "Data" / folder / f"{keyword}.json").read_text("utf-8"))
                for record in data["example"]:
                    record.setdefault("standard_answer", record["answer"])
                (directory / f"{keyword}.json").write_text(json.dumps(data, ensure_ascii=False), "utf-8")
                self.client.keyword = keyword
                prefix, bench_type = entry["prefix_prompt"], entry["type"]
                self.bench_function.export_distribute_json(
                    self.model_api, "stub", str(directory), keyword, prefix, bench_type, parallel_num=1
                )
                self.bench_function.export_union_json(str(directory), "stub", keyword, prefix, bench_type)
                merged[keyword] = json.loads((directory / f"stub_{keyword}.json").read_text("utf-8"))[
                    "example"
                ]
        return merged

    def scores(
        self, merged: dict[str, list[dict[str, Any]]], per_item: bool
    ) -> dict[str, tuple[float, float]]:
        """obj_score_eval on the merged results: name -> (points earned, points available), a name per
        file, or per item ('keyword/index': each item its own file and type)."""
        self.runs += 1
        directory = self.work / f"scores{self.runs}"
        directory.mkdir()
        table = self.score.score_dict
        table.clear()
        table.update(copy.deepcopy(self.pristine_scores))
        names: list[tuple[str, str]] = []
        for keyword, items in merged.items():
            subject = next(s for s, v in table["subject"].items() if keyword in v["type"])
            groups = (
                [(f"{keyword}#{item['index']}", [item]) for item in items] if per_item else [(keyword, items)]
            )
            for name, examples in groups:
                table["subject"][subject]["type"].setdefault(
                    name, dict(table["subject"][subject]["type"][keyword])
                )
                body = {"keyword": name, "model_name": "stub", "example": examples}
                (directory / f"{len(names)}.json").write_text(json.dumps(body, ensure_ascii=False), "utf-8")
                names.append((subject, name))
        self.score.obj_score_eval(str(directory))
        found = {}
        for subject, name in names:
            tally = table["subject"][subject]["type"][name]
            found[name.replace("#", "/")] = (tally["correct_score"], tally["total_score"])
        return found


@pytest.fixture(scope="module")
def bench(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    client = RecordingClient()
    openai = ModuleType("openai")
    openai.OpenAI = client  # type: ignore[attr-defined]
    with pytest.MonkeyPatch.context() as patch, official_code(repo), official_code(repo / "Bench"):
        patch.setitem(sys.modules, "openai", openai)
        import bench_function  # type: ignore[import-not-found]
        import OBJ_score_evaluation  # type: ignore[import-not-found]
        from Models.openai_gpt4 import OpenaiAPI  # type: ignore[import-not-found]

        bench_function.time = SimpleNamespace(sleep=lambda seconds: None)
        yield Bench(
            repo,
            tmp_path_factory.mktemp("gaokao-bench"),
            client,
            bench_function,
            OBJ_score_evaluation,
            OpenaiAPI(["sk-none"], model_name="stub"),
            copy.deepcopy(OBJ_score_evaluation.score_dict),
        )


# -- prompts -----------------------------------------------------------------------------------------------
def test_prompts_are_the_benchs_on_every_item(bench: Bench, loaded: LoadResult) -> None:
    bench.client.sent.clear()
    bench.run((OBJ, SUB))
    exam = loaded.exam
    by_keyword: dict[str, list[Question]] = {}
    for question in exam.questions:
        by_keyword.setdefault(question.domain or "", []).append(question)
    sent: dict[str, list[tuple[tuple[str, str], ...]]] = {}
    corrections = {entry["keyword"]: entry["prefix_prompt"] for entry in bench.prompts(SUB)}
    for request in bench.client.sent:
        prefix = corrections.get(request.keyword)
        # The correction item's second request compares two passages: a step kaoshi does not run.
        if isinstance(prefix, list) and request.messages[0][1] == prefix[1]:
            continue
        sent.setdefault(request.keyword, []).append(request.messages)
    compared = Counter[str]()
    for keyword, questions in by_keyword.items():
        # The bench asks in file order, as kaoshi loads them.
        assert len(sent[keyword]) == len(questions), keyword
        for question, messages in zip(questions, sent[keyword], strict=True):
            chat = kaoshi.render_prompt(exam, question.id, chat=True)
            assert chat.template == "gaokao"
            assert chat.prompt.messages == messages, question.id
            completion = kaoshi.render_prompt(exam, question.id).prompt.text
            assert completion == messages[0][1] + messages[1][1], question.id
            compared["objective" if question.type is not QuestionType.OPEN else "subjective"] += 1
    assert compared == Counter(objective=1_781, subjective=1_030)


# -- points ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Item:
    """What a reply is written from: the item's bench type, its answer letters (one a sub-question, or the
    physics set) and a wrong answer near them."""

    gaokao_type: str
    letters: str

    @property
    def pool(self) -> str:
        return "ABCDEFG" if self.gaokao_type == "five_out_of_seven" else "ABCD"

    def next_letter(self, letter: str) -> str:
        return self.pool[(self.pool.index(letter) + 1) % len(self.pool)]

    @property
    def wrong(self) -> str:
        """Single choice: the next letter; physics: a wrong letter added; sub-questions: the first one off."""
        if self.gaokao_type == "multi_choice":
            extra = next(x for x in "ABCD" if x not in self.letters)
            return "".join(sorted(self.letters + extra))
        return self.next_letter(self.letters[0]) + self.letters[1:]

    @property
    def others(self) -> str:
        return "".join(x for x in "ABCD" if x not in self.letters)


def blocks(item: Item, answer: str, block: Callable[[int, str], str]) -> str:
    """One block a sub-question (the bench's multi-question format), else one block for the answer."""
    if item.gaokao_type in ("multi_question_choice", "five_out_of_seven"):
        return "".join(block(number, letter) for number, letter in enumerate(answer, start=1))
    return block(1, answer)


def formatted(item: Item, answer: str) -> str:
    return blocks(item, answer, lambda n, x: f"（{n}）【解析】根据材料逐项分析。<eoe>\n【答案】{x}<eoa>\n")


def example_layout(item: Item) -> str:
    """The prompt's own example, `【答案】: A <eoa>`, letters spaced ("AB" as "A B")."""
    return blocks(item, item.letters, lambda n, x: f"【解析】略<eoe>\n【答案】: {' '.join(x)} <eoa>\n")


def part_of_the_answer(item: Item) -> str:
    """Physics: a right subset (3 of 6), or the one right letter and a wrong one (0); single choice: a
    wrong letter; sub-questions: the last one left out (nothing read)."""
    return f"【解析】逐项分析。<eoe>\n【答案】{item.letters[:-1] or item.wrong}<eoa>"


def analysis_names_letters(item: Item) -> str:
    """The analysis names the other letters before the answer."""
    return blocks(
        item,
        item.letters,
        lambda n, x: (
            f"【解析】{'、'.join(y for y in 'ABCD' if y not in x)}项均不符合题意。<eoe>\n【答案】{x}<eoa>\n"
        ),
    )


def answer_first(item: Item) -> str:
    """The answer, then an analysis naming the other letters."""
    return blocks(
        item,
        item.letters,
        lambda n, x: f"【答案】{x}<eoa>\n【解析】{'、'.join(y for y in 'ABCD' if y not in x)}项错误。<eoe>\n",
    )


def chat_bare(item: Item) -> str:
    if len(item.letters) > 1 and item.gaokao_type != "multi_choice":
        return f"答案：{'、'.join(item.letters)}"
    return f"这道题选{item.letters}。"


def chat_explained_after(item: Item) -> str:
    if item.gaokao_type in ("single_choice", "multi_choice"):
        return f"正确答案是{item.letters}。{'、'.join(item.others)}项的说法与题意不符。"
    return "".join(f"{n}. {x}\n" for n, x in enumerate(item.letters, start=1)) + "以上是各小题的答案。"


# style -> (the reply to an item, the answer the reply states)
STYLES: dict[str, Callable[[Item], tuple[str, str]]] = {
    "format": lambda i: (formatted(i, i.letters), i.letters),
    "format, wrong": lambda i: (formatted(i, i.wrong), i.wrong),
    "example layout": lambda i: (example_layout(i), i.letters),
    "part of the answer": lambda i: (part_of_the_answer(i), i.letters[:-1] or i.wrong),
    "analysis names letters": lambda i: (analysis_names_letters(i), i.letters),
    "answer first": lambda i: (answer_first(i), i.letters),
    "restated": lambda i: (
        f"【解析】逐项分析。<eoe>\n【答案】{' '.join(i.letters)}<eoa>\n故选{i.letters}。",
        i.letters,
    ),
    "chat, bare": lambda i: (chat_bare(i), i.letters),
    "chat, explained after": lambda i: (chat_explained_after(i), i.letters),
    "english": lambda i: (f"The answer is {' '.join(i.letters)}.", i.letters),
    "no answer": lambda i: ("这道题我无法确定答案。", ""),
}
# Where kaoshi's points differ, by reply style: (replies the bench reads otherwise than they state, where
# kaoshi reads what they state; replies kaoshi reads no answer in, though they state one). Any other
# difference fails the test. kaoshi misses none: "这道题选B。" and "The answer is C F A E D." were misses
# until kaoshi.qtypes.multi_question read 选 and "the answer is" as answer cues.
DIFFERENCES = {
    # Five out of seven: the bench takes the first five A-G of the reply, the analysis's letters among them.
    "analysis names letters": (26, 0),
    # Single choice (1,418): the last A-D of the reply, a letter the analysis after the answer names. Physics
    # (64): a reply opening with 【答案】 finds it at position 0, which the bench takes for not found, and
    # reads the last 10 characters instead (no letter there). Five out of seven (26): the first five A-G.
    "answer first": (1_418 + 64 + 26, 0),
    # Physics: every A-D after 【答案】 is the answer, so "【答案】D … 故选D" is "DD": not the answer, but
    # without a wrong letter, so 3 points of 6.
    "restated": (64, 0),
    # Single choice (1,418): the last A-D is a letter the explanation names; physics (64): no 【答案】, so the
    # last 10 characters (no letter there).
    "chat, explained after": (1_418 + 64, 0),
    # "The answer is C F A E D.": the bench reads sub-question items from the reply's first capital on (the
    # 'T' of 'The', each answer one place late), right only where letters happen to repeat; five out of
    # seven it reads right (the first five A-G), so no difference there.
    "english": (273, 0),
}


def item_of(question: Question) -> Item:
    gaokao_type = question.verbatim_field("gaokao_type") or ""
    answer = question.answer
    letters = "".join(sorted(answer)) if isinstance(answer, frozenset) else str(answer)
    return Item(gaokao_type, letters)


def official_answer(item: dict[str, Any]) -> str:
    return "".join(item["model_answer"])


def kaoshi_answer(answer: object) -> str:
    if isinstance(answer, frozenset):
        return "".join(sorted(answer))
    return answer if isinstance(answer, str) else ""


@pytest.fixture(scope="module")
def objective(loaded: LoadResult) -> Exam:
    questions = tuple(q for q in loaded.exam.questions if q.type is not QuestionType.OPEN)
    return replace(loaded.exam, questions=questions)


@pytest.mark.parametrize("style", list(STYLES))
def test_points_are_the_benchs(bench: Bench, objective: Exam, style: str) -> None:
    write = STYLES[style]
    replies = {}
    stated = {}
    for question in objective.questions:
        text, letters = write(item_of(question))
        prompt = kaoshi.render_prompt(objective, question.id).prompt.text
        replies[prompt] = text
        stated[question.id] = letters
    bench.client.reply = lambda keyword, messages: replies[messages[0][1] + messages[1][1]]
    merged = bench.run((OBJ,))
    official = bench.scores(merged, per_item=True)
    per_file = bench.scores(merged, per_item=False)
    read_by_bench = {
        f"{k}/{item['index']}": official_answer(item) for k, items in merged.items() for item in items
    }

    result = kaoshi.evaluate(objective, lambda prompt: replies[prompt], run_name="replies")
    assert result.spec.prompt == "gaokao" and result.spec.multi_policy == "partial"
    samples = {s.question_id: s for s in result.samples}
    assert set(samples) == set(official)
    differing, kinds = [], Counter[str]()
    for question_id, (points, available) in official.items():
        sample = samples[question_id]
        assert sample.points == available, question_id
        if sample.score != points:
            differing.append(question_id)
            read = kaoshi_answer(sample.answer)
            if read == stated[question_id] != read_by_bench[question_id]:
                kinds["bench misreads"] += 1
            else:
                assert read == "" != stated[question_id], (question_id, read, read_by_bench[question_id])
                kinds["kaoshi misses"] += 1
    misreads, misses = DIFFERENCES.get(style, (0, 0))
    assert (kinds["bench misreads"], kinds["kaoshi misses"]) == (misreads, misses), differing[:5]
    # Per file, the bench's own tallies: kaoshi's points less the differences found above.
    for keyword, (points, available) in per_file.items():
        in_file = [s for s in result.samples if s.domain == keyword]
        assert sum(s.points for s in in_file) == available
        assert sum(s.score or 0.0 for s in in_file) - sum(
            (samples[q].score or 0.0) - official[q][0] for q in differing if q.startswith(keyword + "/")
        ) == pytest.approx(points)
