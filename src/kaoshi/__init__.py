"""kaoshi (考试): measure how well large language models pass Chinese exams.

Importing kaoshi imports no heavy library (torch, transformers, vllm, openai); backends load lazily.
"""

from kaoshi.data import Exam, Question, QuestionType, load_exam

__version__ = "0.1.0"

__all__ = ["Exam", "Question", "QuestionType", "__version__", "load_exam"]
