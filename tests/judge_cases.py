"""Realistic LLM-judge replies and the candidate score (0-10) to read from each; None = unparsed."""

from __future__ import annotations

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
]
