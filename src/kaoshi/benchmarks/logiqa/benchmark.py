"""LogiQA (Chinese): logical reasoning questions from China's civil service exams, eight-line text records."""

from __future__ import annotations

from kaoshi.benchmarks.base import Benchmark, LoadRequest, PublishedCheck
from kaoshi.benchmarks.logiqa.loader import LOGIQA_SPLITS, load_logiqa, looks_like_logiqa
from kaoshi.data.collect import LoadResult
from kaoshi.data.errors import DataError


def load(request: LoadRequest) -> LoadResult:
    """A LogiQA folder (zh_train/eval/test.txt) or one of its files; there is no hub copy."""
    if request.data is None:
        raise DataError(
            "benchmark 'logiqa' needs --data PATH: the LogiQA folder (zh_train.txt, zh_eval.txt, "
            "zh_test.txt) or one of its files"
        )
    return load_logiqa(request.data, request.split)


LOGIQA = Benchmark(
    name="logiqa",
    description="LogiQA (Chinese): four-option logical reasoning questions, each with a context passage",
    load=load,
    # LogiQA published no prompt: kaoshi's own single-choice wording.
    default_prompt="default",
    detect=looks_like_logiqa,
    formats="a folder with zh_train.txt, zh_eval.txt, zh_test.txt, or one of them (8 lines per question)",
    splits=LOGIQA_SPLITS,
    size="8,678: 7,376 train + 651 eval + 651 test",
    licence="CC BY-NC-SA 4.0 (as AGIEval's data licence lists it for LogiQA)",
    published=PublishedCheck(
        repository="lgw863/LogiQA-dataset",
        commit="ff6c4cbca47627b3ac2da94a29fa28204a167b41",
        official_count="651 eval + 651 test",
        loaded="651 + 651; 19 test records with options printed A, C, B, D warned",
        prompt_parity="— (no official code)",
        score_parity="— (no official code)",
    ),
)
