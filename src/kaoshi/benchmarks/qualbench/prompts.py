"""kaoshi's own QualBench prompts: the exam-paper shape (kaoshi.prompts.exam_style) with kaoshi's wording;
`qualbench` and `qualbench-expert` are the authors' (paper_prompt.py)."""

from kaoshi.prompts.exam_style import ExamStyleTemplate

QUALBENCH_KAOSHI = ExamStyleTemplate("qualbench-kaoshi")
QUALBENCH_KAOSHI_EXPERT = ExamStyleTemplate("qualbench-kaoshi-expert", persona=True)
QUALBENCH_ZERO = ExamStyleTemplate("qualbench-zero", default_shots=0)
