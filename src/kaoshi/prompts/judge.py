"""Prompts for LLM judges of open answers, after LHMKE: the reference answer is "答案1" (full marks), the
candidate "答案2"; the judge explains first, then gives both scores on 0-10.

`careful` includes the scoring standards (a)-(f), `general` leaves them out, and the debate's second
judge sees the first judge's explanation and score and confirms or changes it. Our own wording.
"""

from __future__ import annotations

from kaoshi.errors import InputError

JUDGE_MODES = ("careful", "general", "debate", "gaokao")
POINTS_MODE = "gaokao"
# The version of the judge prompts before versions were recorded: grades stored without one are this.
JUDGE_PROMPT_VERSION = 1
# Each mode's prompt version, stored with every grade it makes (debate: its careful first prompt and its
# second judge's prompt together). Raise a mode's number when its wording changes (the shared parts too):
# a version after the first is part of the grader's name (kaoshi.runner.judge.JudgeSetup.grader), so
# grades from two versions of a prompt are two graders and never mix.
JUDGE_PROMPT_VERSIONS: dict[str, int] = {"careful": 1, "general": 1, "debate": 1, POINTS_MODE: 1}


def judge_prompt_version(mode: str) -> int:
    """The version of `mode`'s prompts; InputError for an unknown mode."""
    if mode not in JUDGE_PROMPT_VERSIONS:
        raise InputError(f"unknown judge mode {mode!r} (choose from {', '.join(JUDGE_MODES)})")
    return JUDGE_PROMPT_VERSIONS[mode]


_INTRO = (
    "你是一名严谨的阅卷老师。下面给出一道主观题、答案1（标准答案，视为完全正确，得10分）和答案2（考生答案）。"
    "请对照答案1评判答案2，满分10分。"
)
_STANDARDS = """评分标准：
(a) 答案2与答案1意思一致、要点完整：10分；
(b) 答案2与答案1部分一致：0-5分；
(c) 答案2缺少重要要点：0-3分；
(d) 答案2与题目无关或与答案1不一致：0分；
(e) 答案2有明显的知识性错误：0分；
(f) 答案2大段照抄题目：0分。"""
_OUTPUT = "请先写出评分理由，最后两行严格按以下格式输出：\n答案1得分：10\n答案2得分：X（X为0到10之间的数）"


def _body(question: str, reference: str, candidate: str) -> str:
    return f"题目：{question}\n\n答案1：{reference}\n\n答案2：{candidate}"


def points_judge_prompt(question: str, analysis: str, reference: str, points: float, candidate: str) -> str:
    """GAOKAO-Bench's grader: the item, its reference analysis and answer and its points, and the student's
    answer; the judge gives `【总分】N分` (N at most the item's points). The fields and the reply are the
    released grading script's; the wording is ours."""
    return (
        "你是一名高考阅卷老师。请参照分析过程和标准答案，按照本题分值给下面学生的作答评分。"
        "分步给分，得分不超过本题分值。\n\n"
        f"【题目】{question}\n"
        f"【分析过程】{analysis or '（无）'}\n"
        f"【标准答案】{reference}\n"
        f"【分值】{points:g}分\n"
        f"【学生分析与答案】{candidate}\n\n"
        "请先简要说明各步骤的得分理由，最后一行严格按以下格式输出：\n【总分】N分（N为0到本题分值之间的数）"
    )


def judge_prompt(mode: str, question: str, reference: str, candidate: str) -> str:
    """The first (or only) judge's prompt; `debate` opens with the careful prompt."""
    if mode == POINTS_MODE:
        raise InputError(
            "the gaokao judge mode needs the item's analysis and points: use points_judge_prompt"
        )
    if mode not in JUDGE_MODES:
        raise InputError(f"unknown judge mode {mode!r} (choose from {', '.join(JUDGE_MODES)})")
    parts = [_INTRO, _body(question, reference, candidate)]
    if mode != "general":
        parts.append(_STANDARDS)
    parts.append(_OUTPUT)
    return "\n\n".join(parts)


def debate_prompt(question: str, reference: str, candidate: str, first_reply: str, first_score: str) -> str:
    """The second judge: the same task, plus the first judge's reasoning and score to confirm or change."""
    return "\n\n".join(
        [
            _INTRO,
            _body(question, reference, candidate),
            _STANDARDS,
            f"另一位阅卷老师（评审一）的评语如下：\n{first_reply.strip()}\n\n评审一给答案2的分数：{first_score}",
            "请独立核查评审一的判断：如果同意，说明理由并保留该分数；如果不同意，指出问题并给出你的分数。",
            _OUTPUT,
        ]
    )
