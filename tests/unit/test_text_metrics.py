"""Chinese BLEU / ROUGE: equal to the reference libraries on the same inputs, and to hand counts."""

from __future__ import annotations

import itertools

import pytest

from kaoshi.scoring.text_metrics import char_tokens, text_scores, word_tokens

sacrebleu = pytest.importorskip("sacrebleu", reason="the subjective extra installs sacrebleu")
pytest.importorskip("rouge_score", reason="the subjective extra installs rouge-score")

# (candidate, reference) pairs of realistic open answers; no n-gram repeats within a text, so set-based
# and count-based ROUGE implementations must agree exactly.
PAIRS = [
    ("应当先切断电源，再用绝缘物使触电者脱离。", "发现触电应立即切断电源，并用干燥的木棒使伤员脱离危险。"),
    ("复利是把利息计入本金再生息。", "复利指上一期的利息并入本金，下期一起计算。"),
    ("混凝土养护要保持湿润。", "浇筑后应及时覆盖洒水，保持混凝土表面湿润，养护不少于七天。"),
    ("备份数据并离线保存", "定期备份重要文件，并存放在离线介质上。"),
]


@pytest.mark.parametrize(("candidate", "reference"), PAIRS)
def test_char_bleu_equals_sacrebleus_chinese_tokenizer(candidate: str, reference: str) -> None:
    expected = sacrebleu.metrics.BLEU(tokenize="zh", effective_order=True).sentence_score(
        candidate, [reference]
    )
    assert text_scores(candidate, reference, "char").bleu == pytest.approx(expected.score / 100, abs=1e-12)


@pytest.mark.parametrize("tokenisation", ["char", "word"])
@pytest.mark.parametrize(("candidate", "reference"), PAIRS)
def test_rouge_equals_an_independent_chinese_rouge(candidate: str, reference: str, tokenisation: str) -> None:
    rouge_chinese = pytest.importorskip("rouge_chinese", reason="cross-check library (dev extra)")
    split = char_tokens if tokenisation == "char" else word_tokens
    candidate_tokens, reference_tokens = split(candidate), split(reference)
    for tokens in (candidate_tokens, reference_tokens):
        assert len(set(itertools.pairwise(tokens))) == len(tokens) - 1, "fixture repeats a bigram"
    (expected,) = rouge_chinese.Rouge().get_scores(" ".join(candidate_tokens), " ".join(reference_tokens))
    got = text_scores(candidate, reference, tokenisation)
    # rouge_chinese adds 1e-8 inside its F-measure
    assert got.rouge2 == pytest.approx(expected["rouge-2"]["f"], abs=1e-6)
    assert got.rougeL == pytest.approx(expected["rouge-l"]["f"], abs=1e-6)
    if len(set(candidate_tokens)) == len(candidate_tokens) and len(set(reference_tokens)) == len(
        reference_tokens
    ):
        assert got.rouge1 == pytest.approx(expected["rouge-1"]["f"], abs=1e-6)


def test_hand_counted_rouge_with_repeats() -> None:
    # char tokens: candidate 电源电源安全 (6), reference 电源安全 (4). Unigram overlap by counts:
    # 电 min(2,1) + 源 min(2,1) + 安 1 + 全 1 = 4 -> P 4/6, R 4/4, F 0.8. LCS 电源安全 = 4 -> F 0.8.
    scores = text_scores("电源电源安全", "电源安全", "char")
    assert scores.rouge1 == pytest.approx(0.8)
    assert scores.rougeL == pytest.approx(0.8)
    # bigrams: candidate 电源 源电 电源 源安 安全 (5), reference 电源 源安 安全 (3); overlap 3 -> F 0.75
    assert scores.rouge2 == pytest.approx(0.75)


def test_identical_and_disjoint_answers() -> None:
    same = text_scores("安全第一，预防为主。", "安全第一，预防为主。")
    assert [same.bleu, same.rouge1, same.rouge2, same.rougeL] == pytest.approx([1.0] * 4)
    none = text_scores("毫无关系", "电源安全")
    assert (none.rouge1, none.rouge2, none.rougeL) == (0.0, 0.0, 0.0) and none.bleu < 0.05
    assert text_scores("", "电源安全").bleu == 0.0


def test_tokenisers() -> None:
    assert char_tokens("用RAID 5阵列，容量3.5TB。") == [
        "用",
        "RAID",
        "5",
        "阵",
        "列",
        "，",
        "容",
        "量",
        "3.5",
        "TB",
        "。",
    ]
    assert word_tokens("应当先切断电源") == ["应当", "先", "切断", "电源"]
