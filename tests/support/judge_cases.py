"""Realistic LLM-judge replies and the candidate score (0-10) to read from each; None = unparsed."""

from __future__ import annotations

from kaoshi.prompts.judge import debate_prompt, judge_prompt

JUDGE_CASES: list[tuple[str, float | None]] = [
    # the format the careful prompt asks for
    ("解释：答案2覆盖了要点，但缺少对原因的说明。\n答案1得分：10\n答案2得分：7", 7),
    ("答案2与参考答案基本一致。\n答案1得分：10\n答案2得分：10", 10),
    ("答案2完全偏题。\n答案1得分：10\n答案2得分：0", 0),
    ("答案1得分：10分\n答案2得分：6分", 6),
    ("答案一得分：10\n答案二得分：4", 4),
    ("答案1得分:10\n答案2得分:5.5", 5.5),
    ("答案1得分：１０\n答案2得分：８", 8),  # full-width digits
    ("**答案1得分**：10\n**答案2得分**：3", 3),  # markdown
    ("### 评分\n- 答案1得分：10\n- 答案2得分：9", 9),
    ("答案2的得分为6分，因为它遗漏了安全措施。", 6),
    ("答案2得分应为 2 分。", 2),
    ("回答2得分：7", 7),
    ("候选答案得分：8", 8),
    # English judges
    ("Explanation: the answer misses the key step.\nAnswer 1: 10\nAnswer 2: 4", 4),
    ("Answer 1 score: 10\nAnswer 2 score: 7/10", 7),
    ("Score for Answer 2: 3.5", 3.5),
    ("Final score: 6", 6),
    ("The response deserves 8/10.", 8),
    ("I would rate Answer 2 as 5 out of 10.", 5),
    ("Rating: [[7]]", 7),
    # revisions: the last statement wins
    ("初步看答案2得分：8。但再检查发现关键概念错误，修正为：答案2得分：3", 3),
    ("我先给7分。综合考虑遗漏，最终得分：5", 5),
    # plain score labels that are not Answer 1's
    ("得分：7", 7),
    ("评分：9分", 9),
    ("分数：4/10", 4),
    ("最终评分为 6 分。", 6),
    ("综合得分：8.5", 8.5),
    ("答案1得分10分，满分，对比之下答案2只能给4分。", 4),
    ("满分10分，该回答给予6分。", 6),
    ("该答案得7分。", 7),
    # pairs, candidate second
    ("两个答案的分数分别为：10，6", 6),
    ("Scores: 10, 2", 2),
    # Chinese numerals before 分
    ("答案2得分：七分", 7),
    ("答案2得分：十分", 10),
    ("该回答十分准确，答案2得分：九分", 9),
    # JSON replies
    ('{"explanation": "部分正确", "answer1": 10, "answer2": 6}', 6),
    ('评分结果：{"score": 8}', 8),
    ('```json\n{"final_score": 3, "reason": "缺要点"}\n```', 3),
    # think blocks are ignored
    ("<think>先想想，也许给9分？</think>答案2得分：4", 4),
    ("推理过程……</think>\n答案2得分：6", 6),
    # debate, second judge
    ("我同意评审一的意见，维持原评分。答案2得分：6", 6),
    ("评审一给了8分，但答案存在知识性错误，我认为应改为：最终得分：2", 2),
    # unparsed: no score, refusals, out of range
    ("这个答案总体不错，但缺少细节。", None),
    ("无法评分：答案为空。", None),
    ("答案2得分：15", None),
    ("答案1得分：10", None),  # only the reference's score
    ("", None),
    ("答案2得分：-", None),
    # a labelled score beats later parenthetical or passing mentions of numbers
    ("答案2得分：6\n（答案2：3个要点中只答出2个）", 6),
    ("答案1得分：10\n答案2得分：4\n\n补充：答案2列出了2条措施，但遗漏了第3条。", 4),
    ("答案2得分：5。其中要点一得分：3，要点二得分：2。", 5),
    ("The answer covers 3 key points out of 4. Score: 5/10", 5),
    ("Answer 2 covers 2 of the 3 key points.\nScore: 6", 6),
    ("答案2得分：8。\n注：若补充原因，可得10分。", 8),
    ("Answer 2 receives a score of 7 out of 10 (it lists 3 of the 4 steps).", 7),
    ("分数：4（扣除3分：遗漏2个要点）", 4),
    ("答案2：1949年10月1日成立，与答案1一致。得分：9", 9),
    ("答案2得分：7\n答案1得分：10", 7),
    # labelled styles
    ("**得分：7**", 7),
    ("评分：8/10", 8),
    ("Score: 6", 6),
    ("【总分】7分", 7),
    ("Answer 1: 10/10\nAnswer 2: 6/10", 6),
    ('{"answer1_score": 10, "answer2_score": 6}', 6),
    ('{"score": 7}', 7),
    ("I'd give it a 7.", 7),
    ("分数：答案1 10分，答案2 6分", 6),
    ("Scores: Answer 1 = 10, Answer 2 = 5", 5),
    ("答案2表述不清，扣3分，最终得分7分", 7),
    ("Final Score: 7/10\n\nExplanation: the answer states 2 of the 3 points (score 2 for each).", 7),
    # the judge's scale is never the score
    ("满分10分。", None),
    ("请对照答案1评判答案2，满分10分。", None),
    ("评分标准：满分10分，0-10分。", None),
    ("答案1得分：10\n答案2得分：X（X为0到10之间的数）", None),  # the output template, copied
    ("(a) 答案2与答案1意思一致、要点完整：10分；\n(b) 答案2与答案1部分一致：0-5分；", None),  # the rubric
    ("答案1（标准答案，视为完全正确，得10分）和答案2（考生答案）", None),  # the prompt's intro
    (  # SmolLM2-135M as judge, verbatim: the prompt's intro repeated, once read as 10
        "你是一名严谨的阅卷老师。下面给出一道主观题、答案1（标准答案，视为完全正确，得10分）和答案2（考生答案）。"
        "\n\n请先写出评分理由：\n\n请先写出评分理由\n\n请先写出评分理由",
        None,
    ),
    (
        "请先写出评分理由：\n\n评分理由：\n(a) 答案1得分：10\n"
        "(b) 答案2得分：X（X为0到10之间的数）\n(d) 答案2得分：X！",
        None,
    ),
    ("I will grade on a scale of 0 to 10, where 10 means identical to Answer 1.", None),
    ("The maximum score is 10.", None),
    ("The maximum score is 10. The candidate answer gets 6.", 6),
    ("本题采用10分制。答案2得分：7", 7),
    ("答案2得分：6分（满分10分）", 6),
    ("6分（满分10分）", 6),
    ("答案二得分为七分（满分十分）", 7),
    ("Score (0-10): 7", 7),
    ("Score: 7 (on a scale of 0-10)", 7),
    ("Rating: 6/10 (10 = identical to the reference)", 6),
    ("答案2与答案1部分一致，按标准(b)应在0-5分之间，我给4分。", 4),
    ("根据评分标准(c)，答案2缺少重要要点：0-3分。答案2得分：2", 2),
    ("得分：6-7分", None),  # a range is not a score
    # debates: the first judge's score, quoted, is not this judge's
    ("评审一给答案2的分数：6。我认为评审一忽略了知识性错误，答案2得分：3", 3),
    ("我给5分。评审一给答案2的分数：6，偏高。", 5),
    ("答案2得分：8。评审一给出的分数：6偏低", 8),
    ("同意评审一的评分，保留评审一给答案2的分数：6", 6),  # agreeing by quoting it keeps it
    ("Judge 1 gave 8, but Answer 2 confuses the two concepts. Answer 2 score: 4", 4),
    ("同意评审一，保留该分数。", None),  # no number of its own
    # think blocks, closed or cut off
    ("<think>\n满分10分，先看要点。\n</think>\n答案2得分：7", 7),
    ("<think>答案2大致正确，给8分吧……不对，漏了一点", None),  # cut off while thinking
]

# Replies that only knowledge of the judge's prompt reads right: numbers copied from the question, the
# reference answer or the rubric are not scores. Parsed with CAREFUL_PROMPT.
QUESTION = "某次测验中小明得7分，小红得9分，两人的平均分是多少？说明计算过程。"
REFERENCE = "平均分为(7+9)/2=8分。"
CANDIDATE = "平均分是8分，因为7加9等于16，再除以2。"
CAREFUL_PROMPT = judge_prompt("careful", QUESTION, REFERENCE, CANDIDATE)
PROMPT_CASES: list[tuple[str, float | None]] = [
    (CAREFUL_PROMPT, None),  # a small judge repeating its whole prompt
    (f"题目：{QUESTION}\n\n答案1：{REFERENCE}", None),
    ("题目说小明得7分，小红得9分，求平均分。\n答案1：平均分为(7+9)/2=8分。", None),
    (
        "请先写出评分理由，最后两行严格按以下格式输出：\n答案1得分：10\n答案2得分：X（X为0到10之间的数）\n\n"
        "理由：计算正确，过程完整。\n答案1得分：10\n答案2得分：9",
        9,
    ),
    ("答案2与答案1一致：小明得7分、小红得9分，平均8分，过程正确。\n答案1得分：10\n答案2得分：10", 10),
    ("答案2算出平均分是8分，与答案1一致，但过程较简略，得分：8", 8),
]

# The debate's second judge, parsed with DEBATE_PROMPT (the first judge gave 8).
FIRST_REPLY = "理由：计算正确但过程简略。\n答案1得分：10\n答案2得分：8"
DEBATE_PROMPT = debate_prompt(QUESTION, REFERENCE, CANDIDATE, FIRST_REPLY, "8")
DEBATE_CASES: list[tuple[str, float | None]] = [
    ("评审一给答案2的分数：8\n\n请独立核查评审一的判断", None),  # the prompt repeated
    ("我同意评审一的判断。\n答案1得分：10\n答案2得分：8", 8),
    ("评审一给答案2的分数：8。但过程简略不应扣分。\n答案2得分：10", 10),
    ("评审一认为答案2得分：8，我认为偏高，过程缺少除以2的说明。\n答案1得分：10\n答案2得分：6", 6),
    ("同意评审一，保留该分数：8", 8),
    ("同意评审一，保留该分数。", None),
]
