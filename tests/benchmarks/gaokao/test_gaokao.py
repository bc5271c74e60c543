"""GAOKAO-Bench: the published layout (our own items), sub-question points, the physics partial rule, the
gaokao judge capped at an item's points, and the subject and exam totals on a hand-computed run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import kaoshi
from kaoshi.benchmarks import get_benchmark, get_template, load_exam_result
from kaoshi.benchmarks.gaokao.benchmark import GaokaoLayout, exam_totals, subject_scores
from kaoshi.benchmarks.gaokao.loader import GLUED_OPTION, NO_OPTION_TEXT
from kaoshi.benchmarks.loading import detect_benchmark
from kaoshi.cli.main import main
from kaoshi.data import DataError, QuestionType
from kaoshi.data.options import read_options
from kaoshi.errors import InputError
from kaoshi.prompts import RenderOptions
from kaoshi.qtypes import extract_answer, grade_answer
from kaoshi.qtypes.multi_question import sub_answers

OBJ, SUB = "Objective_Questions", "Subjective_Questions"
MATH_PREFIX = "请做下面的数学选择题，写出【解析】和【答案】。\n题目："  # our own words, in the file's place

# Our own items, in the published record layout.
FILES: dict[tuple[str, str], list[dict[str, Any]]] = {
    (OBJ, "2010-2022_Math_I_MCQs"): [
        {
            "year": "2019",
            "category": "（新课标Ⅰ）",
            "question": "1．已知集合 M={1,2}，N={2,3}，则 M∩N=（　　）\nA．{1}\nB．{2}\nC．{3}\nD．{1,2,3}\n",
            "answer": ["B"],
            "analysis": "两个集合的公共元素只有 2。",
            "index": 0,
            "score": 5,
        },
        {
            "year": "2020",
            "category": "（新课标Ⅱ）",
            "question": "2．函数 y=2x+1 的图象经过点（　　）\nA．(0,1)\nB．(1,1)\nC．(0,2)\nD．(2,1)",
            "answer": ["A"],
            "analysis": "x=0 时 y=1。",
            "index": 1,
            "score": 5,
        },
    ],
    (OBJ, "2010-2022_Math_II_MCQs"): [
        {
            "year": "2021",
            "category": "（全国乙卷）",
            "question": "3．1+1=（　　）\nA．1\nB．2\nC．3\nD．4",
            "answer": ["B"],
            "analysis": "",
            "index": 0,
            "score": 5,
        }
    ],
    (OBJ, "2010-2022_Physics_MCQs"): [
        {
            "year": "2018",
            "category": "（新课标Ⅲ）",
            "question": "14．下列说法正确的是（　　）\nA．光是电磁波\nB．声音能在真空中传播\n"
            "C．质量是惯性的量度\nD．摩擦力总是阻力",
            "answer": ["AC"],
            "analysis": "声音不能在真空中传播，摩擦力也可以是动力。",
            "index": 0,
            "score": 6,
        }
    ],
    (OBJ, "2012-2022_English_Cloze_Test"): [
        {
            "year": "2017",
            "category": "（新课标Ⅰ）",
            "question": "Tom __1__ to school every day and __2__ his friends. He __3__ the bus and "
            "__4__ home.\n"
            "1. A. go B. goes C. going D. gone\n2. A. meet B. meets C. met D. meeting\n"
            "3. A. take B. took C. takes D. taking\n4. A. walks B. walk C. walked D. walking",
            "answer": ["B", "B", "C", "A"],
            "analysis": "一般现在时，主语第三人称单数。",
            "index": 0,
            "score": 1.5,
        }
    ],
    (OBJ, "2010-2022_English_Fill_in_Blanks"): [
        {
            "year": "2016",
            "category": "（新课标Ⅱ）",
            "question": "Read and choose five of the seven sentences for the blanks 36-40.\n"
            "A. One. B. Two. C. Three. D. Four. E. Five. F. Six. G. Seven.",
            "answer": ["A", "G", "C", "E", "B"],
            "analysis": "",
            "index": 0,
            "score": 2,
        }
    ],
    (OBJ, "2010-2022_Chinese_Lang_and_Usage_MCQs"): [
        {
            "year": "2015",
            "category": "（新课标Ⅰ）",
            "question": "下列词语中没有错别字的一项是（　　）\n"
            "A．再接再励\nB．按部就班\nC．迫不急待\nD．一愁莫展",
            "answer": ["B"],
            "analysis": "",
            "index": 0,
            "score": 3,
        }
    ],
    # The subjective files write the reference as `standard_answer`.
    (SUB, "2010-2022_Math_I_Open-ended_Questions"): [
        {
            "year": "2022",
            "category": "（新高考Ⅰ）",
            "question": "17．已知等差数列 {a_n} 中 a_1=1，公差 d=2。（1）求 a_n；（2）求前 n 项和 S_n。",
            "standard_answer": "（1）a_n=2n-1；（2）S_n=n^2。",
            "analysis": "由通项公式 a_n=a_1+(n-1)d 得 a_n=2n-1，求和得 S_n=n^2。",
            "index": 0,
            "score": 12,
        }
    ],
    # A fill-in file: the prompt file types it `cloze`, and it is judged like every subjective item.
    (SUB, "2010-2022_Math_I_Fill-in-the-Blank"): [
        {
            "year": "2021",
            "category": "（全国甲卷）",
            "question": "13. (5 分) 函数 y=x^2 在 x=3 处的导数为\n",
            "standard_answer": "6\n",
            "analysis": "y'=2x，代入得 6。",
            "index": 0,
            "score": 5,
        }
    ],
    # A reading item: a passage, then the question as a list of parts.
    (SUB, "2010-2022_Chinese_Language_Literary_Text_Reading"): [
        {
            "year": "2019",
            "category": "（新课标Ⅱ）",
            "passage": ["  阅读下面的文字。\n", "小河弯弯，绕过村口的老槐树。"],
            "question": ["（1）文中的小河有什么作用？", "（2）请简要分析。"],
            "standard_answer": ["（1）串起全文。", "（2）寄托乡愁。"],
            "analysis": "",
            "index": 0,
            "score": 6,
        }
    ],
    (SUB, "2012-2022_English_Language_Error_Correction"): [
        {
            "year": "2018",
            "category": "（新课标Ⅰ）",
            "question": "假定英语课上老师要求同桌之间交换修改作文。不计分。\nI goes to school yesterday.\n",
            "standard_answer": "I went to school yesterday.",
            "analysis": "时态错误。",
            "index": 0,
            "score": 10,
        }
    ],
}
CORRECTION_PREFIXES = ["请改正下面短文中的错误，写在【答案】和<eoa>之间。\n短文如下:", "请比较两篇短文。\n"]
PROMPTS: dict[str, list[tuple[str, str, str | list[str]]]] = {
    "Obj_Prompt.json": [
        ("single_choice", "2010-2022_Math_I_MCQs", MATH_PREFIX),
        ("single_choice", "2010-2022_Math_II_MCQs", "请做下面的文科数学选择题。\n"),
        ("multi_choice", "2010-2022_Physics_MCQs", "请做下面的物理选择题，可能有多个正确选项。\n"),
        # As the published file types them.
        ("five_out_of_seven", "2012-2022_English_Cloze_Test", "请做下面的英语完形填空。\n"),
        ("multi_question_choice", "2010-2022_English_Fill_in_Blanks", "请做下面的七选五。\n"),
        ("single_choice", "2010-2022_Chinese_Lang_and_Usage_MCQs", "请做下面的语文选择题。\n"),
    ],
    "Sub_Prompt.json": [
        ("subjective", "2010-2022_Math_I_Open-ended_Questions", "请解答下面的数学题。\n"),
        ("cloze", "2010-2022_Math_I_Fill-in-the-Blank", "请解答下面的数学填空题。\n"),
        ("subjective", "2010-2022_Chinese_Language_Literary_Text_Reading", "请解答下面的语文阅读题。\n"),
        ("correction", "2012-2022_English_Language_Error_Correction", CORRECTION_PREFIXES),
    ],
}


def write_repo(root: Path, *, with_prompts: bool = True) -> Path:
    for (folder, keyword), records in FILES.items():
        path = root / "Data" / folder / f"{keyword}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps({"keywords": keyword, "example": records}, ensure_ascii=False, indent=4),
            encoding="utf-8",
        )
    if with_prompts:
        (root / "Bench").mkdir()
        for name, entries in PROMPTS.items():
            examples = [{"type": t, "keyword": k, "prefix_prompt": p, "comment": ""} for t, k, p in entries]
            (root / "Bench" / name).write_text(
                json.dumps({"examples": examples}, ensure_ascii=False), "utf-8"
            )
    # A model's outputs kept beside the data, as the published repository has them: not data.
    outputs = root / "Data" / SUB / "gemini-pro_2010-2022_Math_I_Open-ended_Questions.json"
    outputs.write_text(json.dumps({"model_name": "gemini-pro", "example": [{"index": 0}]}), "utf-8")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "GAOKAO-Bench")


def test_loads_the_published_layout(repo: Path) -> None:
    exam = load_exam_result("gaokao-bench", repo).exam
    by_id = {q.id: q for q in exam.questions}
    assert len(by_id) == 11  # the model-output file beside the data is skipped
    single = by_id["2010-2022_Math_I_MCQs/0"]
    assert (single.type, single.answer, single.points, single.subject) == (
        QuestionType.SINGLE,
        frozenset("B"),
        5.0,
        "Math I",
    )
    assert single.letters == ("A", "B", "C", "D") and single.option_map["B"] == "{2}"
    assert single.verbatim_field("prefix_prompt") == MATH_PREFIX
    assert single.explanation == "两个集合的公共元素只有 2。"
    physics = by_id["2010-2022_Physics_MCQs/0"]
    assert (physics.type, physics.answer, physics.points) == (QuestionType.MULTI, frozenset("AC"), 6.0)
    cloze = by_id["2012-2022_English_Cloze_Test/0"]
    # `score` is per sub-question: 4 blanks x 1.5 points.
    assert (cloze.type, cloze.answer, cloze.points) == (QuestionType.MULTI_QUESTION, "BBCA", 6.0)
    seven = by_id["2010-2022_English_Fill_in_Blanks/0"]
    seven_type = seven.verbatim_field("gaokao_type")
    assert (seven.answer, seven.points, seven_type) == ("AGCEB", 10.0, "multi_question_choice")
    essay = by_id["2010-2022_Math_I_Open-ended_Questions/0"]
    assert (essay.type, essay.points, essay.subject) == (QuestionType.OPEN, 12.0, "Math I")
    assert essay.answer == "（1）a_n=2n-1；（2）S_n=n^2。"
    blank = by_id["2010-2022_Math_I_Fill-in-the-Blank/0"]
    blank_type = blank.verbatim_field("gaokao_type")
    assert (blank.type, blank.answer, blank_type) == (QuestionType.OPEN, "6", "cloze")
    reading = by_id["2010-2022_Chinese_Language_Literary_Text_Reading/0"]
    # As the bench sends it: the passage's parts, then the question's, each stripped and ended by a newline.
    assert reading.verbatim_field("question") == (
        "阅读下面的文字。\n小河弯弯，绕过村口的老槐树。\n（1）文中的小河有什么作用？\n（2）请简要分析。\n"
    )
    assert reading.answer == "（1）串起全文。\n（2）寄托乡愁。"
    correction = by_id["2012-2022_English_Language_Error_Correction/0"]
    # The first of the two correction prompts goes with the item, its text stripped and ended by a newline
    # as every item's is (bench_function.correction_test).
    assert correction.verbatim_field("prefix_prompt") == CORRECTION_PREFIXES[0]
    assert (correction.verbatim_field("question") or "").endswith("yesterday.\n")
    assert exam.settings.multi_policy == "partial"
    assert exam.settings.standard_scores["Physics"] == 110


def test_data_folder_one_folder_and_one_file(repo: Path) -> None:
    assert len(load_exam_result("gaokao-bench", repo / "Data").exam) == 11
    assert len(load_exam_result("gaokao-bench", repo / "Data" / SUB).exam) == 4
    one = load_exam_result("gaokao-bench", repo / "Data" / OBJ / "2010-2022_Physics_MCQs.json")
    # The prompt file is found three levels up from a data file.
    assert one.exam.questions[0].verbatim_field("gaokao_type") == "multi_choice"
    assert not one.warnings


def test_without_the_prompt_files_types_come_from_names_and_answers(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "data-only", with_prompts=False)
    result = load_exam_result("gaokao-bench", root)
    types = {q.id.split("/")[0]: q.verbatim_field("gaokao_type") for q in result.exam.questions}
    assert types["2010-2022_Physics_MCQs"] == "multi_choice"
    assert types["2012-2022_English_Cloze_Test"] == "multi_question_choice"
    assert types["2010-2022_English_Fill_in_Blanks"] == "five_out_of_seven"
    assert types["2012-2022_English_Language_Error_Correction"] == "correction"
    assert types["2010-2022_Math_I_MCQs"] == "single_choice"
    assert types["2010-2022_Math_I_Open-ended_Questions"] == "subjective"
    assert any("--prompt gaokao-kaoshi" in w for w in result.warnings)
    question = result.exam.questions[0]
    with pytest.raises(InputError, match="gaokao-kaoshi"):
        get_template("gaokao").render(question, result.exam, RenderOptions(0))
    text = get_template("gaokao-kaoshi").render(question, result.exam, RenderOptions(0)).text
    assert (
        "【解析】" in text and "<eoa>" in text and text.endswith(question.verbatim_field("question") or "-")
    )


def test_official_prompt_is_the_files_prefix_then_the_question(repo: Path) -> None:
    exam = load_exam_result("gaokao-bench", repo).exam
    question = exam.question("2010-2022_Math_I_MCQs/0")
    raw = FILES[(OBJ, "2010-2022_Math_I_MCQs")][0]["question"]
    template = get_template("gaokao")
    assert template.render(question, exam, RenderOptions(0)).text == MATH_PREFIX + raw.strip() + "\n"
    # Chat models get the instruction as the system turn and the item as the user turn.
    chat = template.render(question, exam, RenderOptions(0, chat=True))
    assert chat.messages == (("system", MATH_PREFIX), ("user", raw.strip() + "\n"))
    correction = exam.question("2012-2022_English_Language_Error_Correction/0")
    text = template.render(correction, exam, RenderOptions(0)).text
    written = FILES[(SUB, "2012-2022_English_Language_Error_Correction")][0]["question"]
    assert text == CORRECTION_PREFIXES[0] + written.strip() + "\n"


def test_detection(repo: Path, tmp_path: Path) -> None:
    assert detect_benchmark(repo) == "gaokao-bench"
    assert detect_benchmark(repo / "Data" / OBJ) == "gaokao-bench"
    assert detect_benchmark(repo / "Data" / OBJ / "2010-2022_Math_I_MCQs.json") == "gaokao-bench"
    # A data file copied out of its folder is still told by its keys (QualBench takes other .json files).
    alone = tmp_path / "math.json"
    alone.write_bytes((repo / "Data" / OBJ / "2010-2022_Math_I_MCQs.json").read_bytes())
    assert detect_benchmark(alone) == "gaokao-bench"
    other = tmp_path / "QualBench.json"
    other.write_text('[{"idx": 1, "question": "x"}]', encoding="utf-8")
    assert detect_benchmark(other) == "qualbench"
    ceval = tmp_path / "ceval"
    (ceval / "val").mkdir(parents=True)
    (ceval / "val" / "computer_network_val.csv").write_text("id,question,A,B,C,D,answer\n", encoding="utf-8")
    assert detect_benchmark(ceval) == "ceval"


def write_file(tmp_path: Path, keyword: str, records: list[Any], folder: str = OBJ) -> Path:
    path = tmp_path / "Data" / folder / f"{keyword}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"keywords": keyword, "example": records}
    path.write_text(json.dumps(body, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def test_bad_records_name_file_line_and_field(tmp_path: Path) -> None:
    good = dict(FILES[(OBJ, "2010-2022_Math_I_MCQs")][0])
    records = [
        good,
        {**good, "index": 1, "score": "五"},
        {**good, "index": 2, "answer": ["E"]},
        {**good, "index": 3, "answer": "B"},
        {**good, "index": 4, "question": ""},
        "not an object",
        {**good, "index": 0},
    ]
    path = write_file(tmp_path, "2010-2022_History_MCQs", records)
    with pytest.raises(DataError) as caught:
        load_exam_result("gaokao-bench", tmp_path)
    text = "\n".join(str(error) for error in caught.value.errors)
    lines = path.read_text(encoding="utf-8").split("\n")

    def line_of(index: int) -> int:
        starts = [n for n, line in enumerate(lines, start=1) if line in ("    {", '    "not an object",')]
        return starts[index]

    assert f"{path}:{line_of(1)}: field 'score'" in text
    assert f"{path}:{line_of(2)}: field 'answer'" in text
    assert "is not among the options ABCD" in text
    assert f"{path}:{line_of(3)}: field 'answer': a single_choice item has one answer in a list" in text
    assert f"{path}:{line_of(4)}: field 'question'" in text
    assert "expected an object" in text
    assert "duplicate id '2010-2022_History_MCQs/0'" in text


def test_bad_json_and_wrong_folder(tmp_path: Path) -> None:
    path = tmp_path / "Data" / OBJ / "2010-2022_Biology_MCQs.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"keywords": "b", "example": [\n{"index": 0,\n "score": }]}', encoding="utf-8")
    with pytest.raises(DataError, match=r"invalid JSON") as caught:
        load_exam_result("gaokao-bench", tmp_path)
    assert f"{path}:3" in str(caught.value)
    path.write_text('{"keywords": "b", "items": []}', encoding="utf-8")
    with pytest.raises(DataError, match="no 'example' array"):
        load_exam_result("gaokao-bench", tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="no GAOKAO-Bench data"):
        load_exam_result("gaokao-bench", empty)


def record_lines(path: Path) -> list[int]:
    """The lines where write_file's records start."""
    return [n for n, line in enumerate(path.read_text("utf-8").split("\n"), start=1) if line == "    {"]


# Our own items, laid out as the published text's flaws lay theirs out (PDF extraction joined lines).
GLUED_ROWS: list[tuple[str, str, dict[str, str], bool]] = [
    # (question text, answer, expected option texts by letter, an option letter glued to the text before)
    # an option glued to the end of the one before it, in the middle of the block
    (
        "3．下列关于植物的叙述，错误的是（）\nA．叶片能进行光合作用\nB．根能吸收水分和无机盐，茎能运输水分C．花都有香味\n"
        "D．种子能萌发成幼苗\n",
        "C",
        {"B": "根能吸收水分和无机盐，茎能运输水分", "C": "花都有香味", "D": "种子能萌发成幼苗"},
        True,
    ),
    # ... at the end of the block, with a wrapped line before it
    (
        "5．关于水的说法，正确的是\n（）\nA．水在零度时一定结冰\nB．纯水能导电\nC．水由氢、氧两种元素\n组成D．冰的密度大于水\n",
        "C",
        {"C": "水由氢、氧两种元素\n组成", "D": "冰的密度大于水"},
        True,
    ),
    # a page number left between two options, a half-width full stop after the letter
    (
        "4.某同学记录了一周的气温。下列说法正确的是（）\nA.周一最冷\nB.周三比周二暖和12C.周五最热\nD.周日下雨\n",
        "D",
        {"B": "周三比周二暖和12", "C": "周五最热", "D": "周日下雨"},
        True,
    ),
    # options on one line, a page number glued to one of them
    (
        "27．这段史料可以说明（）\nA．农业发展迅速 B．商业日益繁荣9C．手工业衰落 D．城市规模缩小\n",
        "B",
        {"A": "农业发展迅速", "B": "商业日益繁荣9", "C": "手工业衰落", "D": "城市规模缩小"},
        True,
    ),
    # ... the first option glued to a page number after the stem
    (
        "26．上述措施的主要目的是（）15A.发展生产 B．稳定边疆 C．统一货币 D．保存历\n史文献\n",
        "A",
        {"A": "发展生产", "D": "保存历\n史文献"},
        True,
    ),
    # two options on one line, a space between them: split, and no flaw
    (
        "1. (5 分) 设集合 $A=\\{1,2,3\\}$, 则 $A$ 的子集个数为（）\nA. $6$\nB. $7$\nC. $8$ D. $9$\n",
        "C",
        {"C": "$8$", "D": "$9$"},
        False,
    ),
]


@pytest.mark.parametrize(
    ("text", "answer", "expected", "glued"),
    GLUED_ROWS,
    ids=["middle", "last", "page number", "one line", "first option", "two on a line"],
)
def test_an_option_glued_to_the_text_before_it_loads(
    tmp_path: Path, text: str, answer: str, expected: dict[str, str], glued: bool
) -> None:
    record = {"year": "2020", "category": "（全国卷）", "question": text, "answer": [answer], "analysis": ""}
    path = write_file(tmp_path, "2010-2022_History_MCQs", [{**record, "index": 0, "score": 4}])
    result = load_exam_result(
        "gaokao-bench", tmp_path
    )  # refused before: the answer was beyond the options read
    question = result.exam.questions[0]
    assert question.letters == ("A", "B", "C", "D") and question.answer == frozenset(answer)
    assert {letter: question.option_map[letter] for letter in expected} == expected
    assert question.verbatim_field("question") == text.strip() + "\n"  # sent as written
    flagged = [w for w in result.warnings if "stuck to the text before it" in w]
    assert flagged == ([f"1 row(s) {GLUED_OPTION}: {path}:{record_lines(path)[0]}"] if glued else [])


def test_the_splitter_keeps_letters_inside_option_texts() -> None:
    # A later line starting with the letter, an abbreviation, a formula and a word's last letter are no
    # option starts.
    assert read_options(
        "题干\nA．Barbara McClintock\nB．Aristotle\nC．James D. Watson\nD．Gregor Mendel"
    ).options[2] == ("C", "James D. Watson")
    assert read_options("Where?\nA. Paris\nB. Rome\nC. Washington, D.C. area\nD. Oslo").options[2] == (
        "C",
        "Washington, D.C. area",
    )
    formula = read_options("则\nA. $P(A B)=P(A) P(B).$ 成立\nB. $P(B)=1$")
    assert [text for _, text in formula.options] == ["$P(A B)=P(A) P(B).$ 成立", "$P(B)=1$"]
    vitamin = read_options("缺乏哪种维生素会得坏血病（）\nA．维生素A\nB．维生素C.\nC．维生素D")
    assert [text for _, text in vitamin.options] == ["维生素A", "维生素C.", "维生素D"] and not vitamin.glued


def test_options_drawn_as_pictures_load_as_letters(tmp_path: Path) -> None:
    pictures = "1．下列图示正确的是（\u3000\u3000）\nA．  B．  \nC．  D．\n"
    missing_d = "2．下列装置正确的是\nA.\n![](a.jpg)\nB.\n![](b.jpg)\nC.\n![](c.jpg)\nD.\n"
    records = [
        {
            "year": "2015",
            "category": "（新课标Ⅰ）",
            "question": text,
            "answer": [answer],
            "analysis": "",
            "index": index,
            "score": 4,
        }
        for index, (text, answer) in enumerate([(pictures, "B"), (missing_d, "D")])
    ]
    path = write_file(tmp_path, "2010-2022_Political_Science_MCQs", records)
    result = load_exam_result("gaokao-bench", tmp_path)
    first, second = result.exam.questions
    assert first.options == tuple((letter, "") for letter in "ABCD") and first.answer == frozenset("B")
    assert second.option_map["C"].strip() == "![](c.jpg)" and second.option_map["D"] == ""
    first_line, second_line = record_lines(path)
    assert result.warnings[0] == f"2 row(s) {NO_OPTION_TEXT}: {path}:{first_line}, {path}:{second_line}"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # GAOKAO's own format, one block per sub-question.
        (
            "(1)【解析】主语是三单。<eoe>\n【答案】B <eoa>\n(2)【解析】同上<eoe>\n【答案】B<eoa>\n"
            "(3)【解析】…<eoe>\n【答案】：C <eoa>\n(4)【解析】…<eoe>\n【答案】A<eoa>",
            "BBCA",
        ),
        # one answer line with every letter
        ("【解析】逐空分析……<eoe>\n【答案】B B C A <eoa>", "BBCA"),
        ("答案：BBCA", "BBCA"),
        ("The answers are as follows.\nAnswer: B, B, C, A", "BBCA"),
        # numbered, out of order, the reasoning mentions another letter first
        ("第1空不是A，应选B。\n2. B\n1. B\n4. A\n3. C", "BBCA"),
        # a reasoning model: the think block's guesses are dropped
        ("<think>1. A 2. A 3. A 4. A? no</think>\n【答案】B B C A", "BBCA"),
        ("第1题选B，第2题选B，第3题选C，第4题选A", "BBCA"),
        ("Answers: 1-B, 2-B, 3-C, 4-A", "BBCA"),
        # English without a colon, and a Chinese chat reply that says 选 per sub-question
        ("The answer is B B C A.", "BBCA"),
        ("The answers are B, B, C and A", None),  # 'and' breaks the run: three letters, not guessed
        ("1空选B，2空不选A而选B，3空选C，4空选A", "BBCA"),
        # too few letters: never guessed into positions
        ("【答案】B B C", None),
        ("I am not sure.", None),
    ],
)
def test_sub_answers_are_read_in_order(repo: Path, reply: str, expected: str | None) -> None:
    exam = load_exam_result("gaokao-bench", repo).exam
    cloze = exam.question("2012-2022_English_Cloze_Test/0")
    extraction = extract_answer(cloze, reply)
    assert extraction.answer == expected
    assert extraction.status == ("ok" if expected else "unparsed")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # an item of one sub-question (a 语言文字运用 group of one) answered as a chat model answers
        ("这道题选B。", "B"),
        ("选项A的说法错误，不选A，故选C。", "C"),
        ("The answer is D.", "D"),
        ("我选择B。", "B"),
        ("这是一道选择题，我无法确定。", None),
    ],
)
def test_one_sub_question_answered_in_a_sentence(reply: str, expected: str | None) -> None:
    assert sub_answers(reply, 1) == expected


def test_sub_question_points(repo: Path) -> None:
    cloze = load_exam_result("gaokao-bench", repo).exam.question("2012-2022_English_Cloze_Test/0")
    assert grade_answer(cloze, "BBCA").points == 6.0 and grade_answer(cloze, "BBCA").correct
    three = grade_answer(cloze, "BBCD")
    assert (three.correct, three.points) == (False, 4.5)
    assert grade_answer(cloze, None).points == 0.0
    assert sub_answers("答案：ABC", 4) is None


def test_physics_partial_rule(repo: Path) -> None:
    physics = load_exam_result("gaokao-bench", repo).exam.question("2010-2022_Physics_MCQs/0")
    assert grade_answer(physics, frozenset("AC"), "partial").points == 6.0
    assert grade_answer(physics, frozenset("A"), "partial").points == 3.0
    assert grade_answer(physics, frozenset("AB"), "partial").points == 0.0
    assert grade_answer(physics, frozenset("ABC"), "partial").points == 0.0
    assert grade_answer(physics, frozenset("A"), "exact").points == 0.0


# A model that answers each item as we choose (by a phrase of its question), and a judge.
ANSWERS = {
    "M∩N": "【解析】公共元素是 2。<eoe>\n【答案】B<eoa>",  # right: 5
    "2x+1": "【解析】代入。<eoe>\n【答案】C<eoa>",  # wrong: 0 of 5
    "1+1": "【解析】<eoe>\n【答案】A<eoa>",  # wrong: 0 of 5 (Math II)
    "下列说法正确": "【解析】光是电磁波。<eoe>\n【答案】A<eoa>",  # correct subset: 3 of 6
    "Tom __1__": "【答案】B B C D",  # 3 of 4 blanks: 4.5 of 6
    "five of the seven": "答案：AGCEB",  # all: 10 of 10
    "错别字": "【答案】B<eoa>",  # right: 3 of 3
    "等差数列": "【解析】a_n=2n-1，S_n=n^2<eoe>\n【答案】a_n=2n-1",
    "导数": "【解析】求导。<eoe>\n【答案】6<eoa>",
    "小河": "【答案】（1）串起全文。（2）寄托乡愁。<eoa>",
    "I goes": "【答案】I went to school yesterday.<eoa>",
}
# The judge's points by the item's points: 8 of 12, 3 of 5, 4 of 6, 7 of 10.
JUDGED = {12: 8, 5: 3, 6: 4, 10: 7}


def judge_by_points(prompt: str) -> str:
    item = int(prompt.split("【分值】", 1)[1].split("分", 1)[0])
    return f"部分正确。\n【总分】{JUDGED[item]}分"


def answer(prompt: str) -> str:
    return next(reply for phrase, reply in ANSWERS.items() if phrase in prompt)


def test_a_run_judged_and_totalled_by_hand(repo: Path, tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    result = kaoshi.evaluate(load_exam_result(data=repo), answer, store=store, run_name="mixed")
    assert result.spec.multi_policy == "partial" and result.spec.prompt == "gaokao"
    judged = kaoshi.judge("mixed", judge_by_points, store=store, mode="gaokao")
    assert judged.graded == 4
    summary = kaoshi.summarize("mixed", store=store)
    scores = {s: round(x.score, 4) for s, x in subject_scores(summary).items()}
    # merge_OBJ_SUB_score.py: full marks x (objective weight x objective rate + subjective weight x
    # subjective rate). Math I: objective 5 of 10, subjective (8 + 3) of (12 + 5), weights 0.4 / 0.6.
    # Chinese: objective 3 of 3, subjective 4 of 6, 0.3 / 0.7. English: objective (4.5 + 10) of 16,
    # subjective 7 of 10, 0.7 / 0.3. Physics and Math II have objective items only here: 3 of 6, 0 of 5.
    math_i = 150 * (0.4 * 5 / 10 + 0.6 * 11 / 17)
    chinese = 150 * (0.3 * 1 + 0.7 * 4 / 6)
    english = 150 * (0.7 * 14.5 / 16 + 0.3 * 7 / 10)
    assert scores == {
        "Math I": round(math_i, 4),
        "Physics": 55.0,
        "English": round(english, 4),
        "Chinese": round(chinese, 4),
        "Math II": 0.0,
    }
    parts = {s: (x.covered, x.of) for s, x in subject_scores(summary).items()}
    assert parts["Math I"] == (2, 2) and parts["Physics"] == (1, 2)
    totals = exam_totals(summary)
    science, liberal = totals["science total"], totals["liberal-arts total"]
    assert science.score == pytest.approx(chinese + math_i + english + 55)
    assert (science.covered, science.of, science.full_marks) == (4, 6, 150 + 150 + 150 + 110)
    assert liberal.score == pytest.approx(chinese + english + 0)
    assert (liberal.covered, liberal.of) == (3, 6)
    values = GaokaoLayout().values(summary)
    earned = 5 + 0 + 0 + 3 + 4.5 + 10 + 3 + 8 + 3 + 4 + 7
    available = 5 + 5 + 5 + 6 + 6 + 10 + 3 + 12 + 5 + 6 + 10
    assert values["得分率"] == pytest.approx(earned / available)
    assert values["理科总分"] == pytest.approx(science.score)


@pytest.mark.parametrize(
    ("reply", "points", "capped"),
    [
        ("第一问正确 6 分，第二问正确。\n【总分】12分", 12.0, False),
        ("【总分】15分", 12.0, True),  # more than the item's points: capped, not dropped
        ("过程不完整。【总分】7.5分", 7.5, False),
        ("**【总分】0分**", 0.0, False),
    ],
)
def test_gaokao_judge_points_are_capped_at_the_items(
    repo: Path, tmp_path: Path, reply: str, points: float, capped: bool
) -> None:
    store = tmp_path / "runs.sqlite"
    exam = load_exam_result("gaokao-bench", repo / "Data" / SUB)
    kaoshi.evaluate(exam, answer, store=store, run_name="essay")
    prompts: list[str] = []

    def judge(prompt: str) -> str:
        prompts.append(prompt)
        return reply

    kaoshi.judge("essay", judge, store=store, mode="gaokao")
    grade = kaoshi.load_run("essay", store=store).grades["2010-2022_Math_I_Open-ended_Questions/0"]
    prompts[:] = [p for p in prompts if "等差数列" in p]
    assert grade.points == points and grade.score == pytest.approx(10 * points / 12)
    assert grade.rounds[0]["capped"] is capped
    for field in (
        "【题目】17．已知等差数列",
        "【分析过程】由通项公式",
        "【标准答案】（1）a_n=2n-1",
        "【分值】12分",
    ):
        assert field in prompts[0]
    assert "【学生分析与答案】【解析】a_n=2n-1" in prompts[0]


def test_cli_end_to_end(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(tmp_path / "runs.sqlite")

    def cli(*args: str) -> str:
        assert main(list(args)) == 0
        return capsys.readouterr().out

    cli("run", "--data", str(repo), "--model", "random", "--run-name", "rand", "--store", store)
    cli("run", "--data", str(repo), "--model", "constant:B", "--run-name", "const", "--store", store)
    board = cli("leaderboard", "--store", store)
    assert "leaderboard — gaokao-bench" in board and "理科总分" in board and "得分率" in board
    report = json.loads(cli("report", "const", "--format", "json", "--store", store))
    physics = next(row for row in report["subject_points"] if row["subject"] == "Physics")
    assert (physics["standard"], physics["max_points"]) == (110, 6.0)
    assert kaoshi.load_run("const", store=store).run.spec.multi_policy == "partial"
    cli("plot", "const", "--out", str(tmp_path / "plot.png"), "--store", store)
    cli("html", "const", "--output", str(tmp_path / "report.html"), "--store", store)
    assert (tmp_path / "plot.png").stat().st_size > 0 and (tmp_path / "report.html").stat().st_size > 0


def test_listed_with_its_facts() -> None:
    benchmark = get_benchmark("gaokao-bench")
    assert benchmark.default_prompt == "gaokao" and benchmark.splits == ("test",)
    assert "1,781 objective" in benchmark.size and benchmark.licence == "Apache-2.0"


def test_the_report_shows_the_exam_totals_as_the_benchmarks_own_metrics(repo: Path, tmp_path: Path) -> None:
    """GAOKAO-Bench contributes its exam totals and scoring rate (kaoshi.results.metric): `kaoshi.summarize`
    measures them for a stored run, the table and the JSON show them; a run of another benchmark has none."""
    store = tmp_path / "runs.sqlite"
    kaoshi.evaluate(load_exam_result(data=repo), answer, store=store, run_name="mixed")
    kaoshi.judge("mixed", judge_by_points, store=store, mode="gaokao")
    summary = kaoshi.summarize("mixed", store=store)
    totals = exam_totals(summary)
    measured = {m.label: m for m in summary.measurements}
    assert list(measured) == ["理科总分", "文科总分", "得分率 (points earned / available)"]
    science = measured["理科总分"]
    assert science.value == pytest.approx(totals["science total"].score)
    assert science.text == f"{totals['science total'].score:.1f} / 560 (over 4 of its 6 subjects)"
    assert measured["得分率 (points earned / available)"].value == pytest.approx(
        summary.overall.points / summary.overall.max_points
    )
    from kaoshi.report import render_summary

    table = render_summary(summary, "md")
    metrics = table.split("### mixed — metrics")[1].split("###")[0]
    assert f"| 理科总分 | {science.text} |" in metrics and "| 得分率 (points earned / available) |" in metrics
    as_json = json.loads(render_summary(summary, "json"))
    assert as_json["benchmark_metrics"]["文科总分"]["value"] == pytest.approx(
        totals["liberal-arts total"].score
    )
    other = kaoshi.evaluate("sample", model=lambda prompt: "答案：A", store=store, run_name="plain")
    # another benchmark's run has that benchmark's own numbers (the sample exam's: its F1s), no exam total
    labels = [m.label for m in kaoshi.summarize(other.name, store=store).measurements]
    assert labels and not set(labels) & set(measured)
