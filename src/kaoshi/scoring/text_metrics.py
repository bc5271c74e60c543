"""BLEU and ROUGE-1/2/L for Chinese answers against a reference, by character or by jieba word.

The n-gram arithmetic is the reference libraries' own: sacrebleu's sentence BLEU and Google's
rouge-score, both fed text we tokenised (rouge-score's default tokeniser drops every Chinese character).
Install with `pip install 'kaoshi[subjective]'`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from kaoshi.errors import InputError

TOKENIZATIONS = ("char", "word")
TEXT_METRICS = ("bleu", "rouge1", "rouge2", "rougeL")
_SPACE = re.compile(r"\s+")
# Latin words and numbers stay whole under "char"; every other non-space character is a token.
_CHAR_TOKEN = re.compile(r"[A-Za-z]+|\d+(?:\.\d+)?|\S")


class MissingMetricLibrary(ImportError):
    pass


def _require(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingMetricLibrary(
            f"text metrics need {module.split('.')[0]}: pip install 'kaoshi[subjective]'"
        ) from None


def char_tokens(text: str) -> list[str]:
    """Chinese characters and punctuation one by one; Latin words and numbers whole."""
    return _CHAR_TOKEN.findall(text)


@cache
def _jieba() -> Any:
    jieba = _require("jieba")
    jieba.setLogLevel(60)  # jieba prints its dictionary loading to stderr otherwise
    return jieba


def word_tokens(text: str) -> list[str]:
    """jieba's accurate-mode segmentation, without whitespace tokens."""
    return [token for token in _jieba().lcut(text) if not token.isspace()]


def tokenizer(name: str) -> Callable[[str], list[str]]:
    if name == "char":
        return char_tokens
    if name == "word":
        return word_tokens
    raise InputError(f"unknown tokenisation {name!r} (choose from {', '.join(TOKENIZATIONS)})")


@dataclass(frozen=True)
class TextScores:
    """Each metric in [0, 1]: sentence BLEU and the ROUGE F-measures."""

    bleu: float
    rouge1: float
    rouge2: float
    rougeL: float

    def get(self, metric: str) -> float:
        if metric not in TEXT_METRICS:
            raise InputError(f"unknown text metric {metric!r} (choose from {', '.join(TEXT_METRICS)})")
        value: float = getattr(self, metric)
        return value


class _PreTokenized:
    """rouge-score's tokenizer interface over our tokenisation."""

    def __init__(self, split: Callable[[str], list[str]]) -> None:
        self.split = split

    def tokenize(self, text: str) -> list[str]:
        return self.split(text)


@cache
def _bleu() -> Any:
    metrics = _require("sacrebleu.metrics")
    # Tokens are joined with spaces beforehand; effective order keeps short answers from scoring 0 for
    # lack of 4-grams (the usual sentence-level choice).
    return metrics.BLEU(tokenize="none", effective_order=True)


@cache
def _rouge(tokenisation: str) -> Any:
    scorer = _require("rouge_score.rouge_scorer")
    return scorer.RougeScorer(
        ["rouge1", "rouge2", "rougeL"], tokenizer=_PreTokenized(tokenizer(tokenisation))
    )


def text_scores(candidate: str, reference: str, tokenisation: str = "char") -> TextScores:
    """BLEU and ROUGE of `candidate` against `reference` after `tokenisation` ("char" or "word")."""
    split = tokenizer(tokenisation)
    hypothesis = " ".join(split(candidate))
    references = [" ".join(split(reference))]
    bleu = _bleu().sentence_score(hypothesis, references).score / 100 if hypothesis else 0.0
    rouge = _rouge(tokenisation).score(reference, candidate)
    return TextScores(bleu, rouge["rouge1"].fmeasure, rouge["rouge2"].fmeasure, rouge["rougeL"].fmeasure)
