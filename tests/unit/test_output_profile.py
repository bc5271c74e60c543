"""What a run's outputs look like (kaoshi.analysis.outputs): the loop rule on texts as models write them, the
end of a reply the rule reads, and the profile's counts, percentiles and shares."""

from __future__ import annotations

import json
import random
import time

import pytest

from kaoshi.analysis.outputs import (
    MAX_PERIOD,
    MIN_LOOP_CHARS,
    MIN_REPEATS,
    TAIL_CHARS,
    CountDistribution,
    output_end,
    output_profile,
    repeats_to_the_end,
)
from kaoshi.report.outputs import duration, output_lines, output_phrases
from tests.support.stores import sample

ZH_REASONING = (
    "首先，我们来分析这道题。题目问的是下列关于中国古代科学技术成就的说法中正确的一项。"
    "选项A说《九章算术》成书于汉代，这与史实相符；选项B说活字印刷术由蔡伦发明，这是错误的，"
    "活字印刷术的发明者是北宋的毕昇；选项C说张衡发明了地动仪，这是正确的。"
)
EN_REASONING = (
    "Okay, let me think about this. The question asks which statement about ancient Chinese science is "
    "correct. Option A says the Nine Chapters was compiled in the Han dynasty, which matches the record. "
    "Option B credits Cai Lun with movable type, but that was Bi Sheng in the Northern Song. "
)
# 40 characters: a sentence a model says again and again
SENTENCE = "因此，综合以上全部分析，本题的正确答案应当是选项C，即东汉张衡发明了候风地动仪。"
LONG_ANSWER = "答：本题考查中国古代科技史。" + "".join(
    f"第{i}点，{topic}在{era}取得了重要进展，其代表人物{who}的贡献在于{what}，这一成就对后世产生了深远影响。"
    for i, (topic, era, who, what) in enumerate(
        [
            ("数学", "汉代", "刘徽", "以割圆术计算圆周率"),
            ("天文", "东汉", "张衡", "制作浑天仪和地动仪"),
            ("医学", "东汉末年", "张仲景", "写成《伤寒杂病论》"),
            ("农学", "北魏", "贾思勰", "著有《齐民要术》"),
            ("印刷", "北宋", "毕昇", "发明活字印刷术"),
            ("地理", "明代", "徐霞客", "考察山川写成游记"),
            ("药学", "明代", "李时珍", "编成《本草纲目》"),
            ("水利", "战国", "李冰", "主持修建都江堰"),
            ("冶金", "春秋", "欧冶子", "铸造青铜名剑"),
            ("建筑", "隋代", "李春", "设计建造赵州桥"),
            ("纺织", "元代", "黄道婆", "改进棉纺织技术"),
            ("造纸", "东汉", "蔡伦", "改进造纸术"),
            ("航海", "明代", "郑和", "率船队七下西洋"),
            ("火药", "唐代", "孙思邈", "记载了火药的配方"),
            ("历法", "元代", "郭守敬", "编订《授时历》"),
            ("机械", "三国", "马钧", "改进翻车和织绫机"),
        ],
        start=1,
    )
)
TABLE = "| 序号 | 人物 | 朝代 | 成就 |\n|---|---|---|---|\n" + "".join(
    f"| {i} | {who} | {era} | 第{i}项成就 |\n"
    for i, (who, era) in enumerate([("刘徽", "魏晋"), ("张衡", "东汉"), ("毕昇", "北宋")] * 12, start=1)
)
NUMBERED = "".join(f"{i}. 该说法正确。\n" for i in range(1, 60))


@pytest.mark.parametrize(
    ("text", "loops"),
    [
        # Chinese reasoning that settles into saying its conclusion again and again, cut mid-unit
        (ZH_REASONING + "所以答案是C。等等，我再检查一下。" * 30 + "所以答案", True),
        # the answer text itself repeated to the budget
        ("答案是A。" * 40, True),
        # English reasoning that stalls on one word
        (EN_REASONING + "Wait, " + "wait, " * 60 + "wa", True),
        # newlines to the budget
        ("答案：A\n\n解析：" + "\n" * 300, True),
        # a 40-character sentence said four times at the end
        (ZH_REASONING + SENTENCE * 4, True),
        (ZH_REASONING + SENTENCE * 4 + SENTENCE[:17], True),
        # ...three times is not yet a loop
        (ZH_REASONING + SENTENCE * 3, False),
        # a long answer cut off in the middle of a sentence, nothing repeated
        (LONG_ANSWER[:-7], False),
        (
            EN_REASONING * 1 + "Therefore the answer is C, because Zhang Heng built the seismoscope in 132",
            False,
        ),
        # short answers
        ("答案：A", False),
        ("AAAA", False),
        ("", False),
        # repeating structure, different content
        (TABLE, False),
        (NUMBERED, False),
        (ZH_REASONING + "，".join(str(n) for n in range(1, 400)), False),
    ],
    ids=[
        "zh-reasoning-loop",
        "answer-loop",
        "en-wait-loop",
        "newlines",
        "sentence-x4",
        "sentence-x4-cut-mid-unit",
        "sentence-x3",
        "long-cut-off-answer",
        "en-cut-off-answer",
        "short-answer",
        "four-letters",
        "empty",
        "table",
        "numbered-list",
        "counting",
    ],
)
def test_repeats_to_the_end(text: str, loops: bool) -> None:
    assert repeats_to_the_end(text) is loops


def test_the_rule_at_its_bounds() -> None:
    """A unit of 5 must cover MIN_LOOP_CHARS characters; a unit longer than MAX_PERIOD never loops."""
    unit = "答案是A。"
    below = -(-MIN_LOOP_CHARS // len(unit)) - 1  # the most whole units that stay under MIN_LOOP_CHARS
    assert not repeats_to_the_end("前" + unit * below)
    assert repeats_to_the_end("前" + unit * (below + 1))
    assert repeats_to_the_end("\n" * MIN_LOOP_CHARS) and not repeats_to_the_end("\n" * (MIN_LOOP_CHARS - 1))
    rng = random.Random(0)
    longest = "".join(rng.choice("甲乙丙丁戊己庚辛") for _ in range(MAX_PERIOD))
    too_long = "".join(rng.choice("甲乙丙丁戊己庚辛") for _ in range(MAX_PERIOD + 1))
    assert repeats_to_the_end(longest * 4) and not repeats_to_the_end(too_long * 4)


def reference_repeats(text: str) -> bool:
    """The loop rule as it reads: every period tried in turn, while its span fits the end read."""
    tail = text[-TAIL_CHARS:]
    for period in range(1, MAX_PERIOD + 1):
        span = max(MIN_REPEATS * period, MIN_LOOP_CHARS)
        if span > len(tail):
            return False
        end = tail[-span:]
        if end[period:] == end[:-period]:
            return True
    return False


@pytest.mark.parametrize("seed", range(4))
def test_the_rule_is_every_period_tried_in_turn(seed: int) -> None:
    """Texts ending in loops of every period up to past MAX_PERIOD, cut anywhere, and texts that nearly
    loop (a unit changed once, a few letters repeated): the rule trying only the periods whose character
    before the last is the last again is the rule trying every period."""
    rng = random.Random(seed)
    found = []
    for _ in range(400):
        alphabet = rng.choice(["ab", "abc", "答案是A。", "甲乙丙丁戊己庚辛", "\n "])
        unit = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, MAX_PERIOD + 20)))
        text = "前言" * rng.randint(0, 3) + unit * rng.randint(1, 6)
        text = text[: rng.randint(0, len(text))] if rng.random() < 0.5 else text
        if text and rng.random() < 0.3:
            at = rng.randrange(len(text))
            text = text[:at] + "变" + text[at + 1 :]
        found.append(repeats_to_the_end(text))
        assert found[-1] is reference_repeats(text), text
    assert 50 < sum(found) < 350


def test_a_long_text_takes_no_longer() -> None:
    """Only the end is read: a 200,000-character reply is checked as fast as a short one."""
    rng = random.Random(1)
    prose = "".join(
        rng.choice("的一是了我不人在他有这个上们来到时大地为子中你说生国年着就那和要") for _ in range(200_000)
    )
    started = time.perf_counter()
    for _ in range(100):
        assert not repeats_to_the_end(prose)
        assert repeats_to_the_end(prose + "答案是A。" * 20)
    assert time.perf_counter() - started < 5


def test_the_end_is_the_answer_after_the_reasoning() -> None:
    loop = "所以答案是C。" * 30
    assert repeats_to_the_end(output_end("", ZH_REASONING + loop))  # cut off while reasoning
    assert repeats_to_the_end(output_end(None, ZH_REASONING + loop))
    assert repeats_to_the_end(output_end(loop, ZH_REASONING))  # the answer loops
    assert not repeats_to_the_end(output_end("答案：C", ZH_REASONING + loop))  # it stopped looping
    # a short answer that carries its reasoning's loop on
    assert repeats_to_the_end(output_end("所以答案是C。所以", loop))
    assert output_end("x" * 5000, "y" * 5000) == "x" * 800


def test_percentiles_are_counts_some_answer_had() -> None:
    spread = CountDistribution.of(list(range(1, 101)))
    assert spread is not None
    assert (spread.n, spread.mean, spread.p50, spread.p90, spread.p99, spread.max) == (
        100,
        50.5,
        50,
        90,
        99,
        100,
    )
    skewed = CountDistribution.of([40, 10, 30, 8192, 20])
    assert skewed is not None
    assert (skewed.p50, skewed.p90, skewed.p99, skewed.max) == (30, 8192, 8192, 8192)
    assert CountDistribution.of([]) is None


def test_the_profile_counts_and_leaves_errors_out() -> None:
    loop = "所以答案是C。" * 30
    samples = [
        sample("a", tokens_in=100, tokens_out=10, latency_s=0.5),
        sample("b", tokens_in=100, tokens_out=20, latency_s=1.5),
        sample("c", tokens_in=100, tokens_out=512, latency_s=4.0, truncated=True, response=LONG_ANSWER),
        # cut off while reasoning in a loop: the answer text is empty
        sample(
            "d",
            status="unparsed",
            tokens_in=100,
            tokens_out=512,
            tokens_reasoning=512,
            latency_s=4.0,
            truncated=True,
            response="",
            reasoning=ZH_REASONING + loop,
        ),
        sample("e", tokens_in=100, tokens_out=300, tokens_reasoning=200, latency_s=2.0, reasoning="想了想"),
        # an error: counted, in nothing else (its latency and tokens neither)
        sample("f", status="error", tokens_in=100, tokens_out=9999, latency_s=60.0, truncated=True),
        # no counts from the backend: an answer, timed, no tokens
        sample("g", latency_s=1.0),
        # a loop that was not cut off is not one
        sample("h", tokens_in=100, tokens_out=50, latency_s=1.0, response=loop),
    ]
    profile = output_profile(samples)  # type: ignore[arg-type]
    assert (profile.samples, profile.errors, profile.answers, profile.generated) == (8, 1, 7, 7)
    assert profile.tokens_out == CountDistribution(6, 1404 / 6, 50, 512, 512, 512)
    assert profile.tokens_reasoning == CountDistribution(2, 356.0, 200, 512, 512, 512)
    assert (profile.truncated, profile.loops) == (2, 1)
    assert profile.truncated_share == pytest.approx(2 / 7) and profile.loops_share == pytest.approx(1 / 7)
    assert (profile.tokens_in_total, profile.tokens_out_total) == (600, 1404)
    assert (profile.timed, profile.model_time_s) == (7, 14.0)
    assert profile.model_time_mean_s == pytest.approx(2.0)
    shown = profile.to_json()
    assert list(shown) == [
        "samples",
        "answers",
        "errors",
        "generated",
        "tokens_out",
        "tokens_reasoning",
        "truncated",
        "truncated_share",
        "loops",
        "loops_share",
        "tokens_in_total",
        "tokens_out_total",
        "timed",
        "model_time_s",
        "model_time_mean_s",
    ]
    assert shown["tokens_out"] == {"n": 6, "mean": 234.0, "p50": 50, "p90": 512, "p99": 512, "max": 512}
    json.dumps(shown)  # plain JSON values


def test_ranked_answers_have_no_output_tokens() -> None:
    """A log-likelihood run: its ranked answers cost tokens in and time, and have no output to profile."""
    ranked = [
        sample(f"q{i}", extracted_by="loglik", tokens_in=80, tokens_out=0, latency_s=0.25, response=None)
        for i in range(4)
    ]
    profile = output_profile(ranked)  # type: ignore[arg-type]
    assert (profile.answers, profile.generated) == (4, 0)
    assert (
        profile.tokens_out is None and profile.tokens_reasoning is None and profile.tokens_out_total is None
    )
    assert profile.truncated_share is None and profile.loops_share is None
    assert (profile.tokens_in_total, profile.model_time_s) == (320, 1.0)
    assert output_phrases(profile) == [
        "4 answers (none generated)",
        "tokens 320 in",
        "model time 1.0 s (0.25 s an answer)",
    ]


def test_voted_answers_were_not_generated() -> None:
    voted = [sample("v", extracted_by="vote", response='{"votes": {"a": "A", "b": "A"}}'), sample("w")]
    profile = output_profile(voted)
    assert (profile.answers, profile.generated) == (2, 1)
    assert output_phrases(profile) == []


def test_phrases_say_only_what_is_known() -> None:
    # a scripted run: no tokens, no time, nothing cut off
    assert output_phrases(output_profile([sample("a"), sample("b", latency_s=0.0)])) == []
    assert output_phrases(output_profile([])) == []
    cut = [sample("a", truncated=True, response="答案是A。" * 40), sample("b"), sample("c", status="error")]
    assert output_phrases(output_profile(cut)) == [  # type: ignore[arg-type]
        "2 answers, 1 error left out",
        "cut off at the budget 1 (50.0%)",
        "looping to the budget 1 (50.0%)",
    ]
    counted = [sample(str(i), tokens_in=1000, tokens_out=100 * i, latency_s=30.0) for i in range(1, 101)]
    phrases = output_phrases(output_profile([*counted, sample("x")]))  # type: ignore[arg-type]
    assert phrases == [
        "101 answers",
        "tokens out p50 5,000 / p90 9,000 / p99 9,900 / max 10,000 (over the 100 answers counted)",
        "tokens 100,000 in / 505,000 out",
        "model time 50 min (30.0 s an answer)",
    ]
    assert output_lines(phrases, None) == ["outputs: " + " · ".join(phrases)]
    lines = output_lines(phrases, 100)
    assert lines == [
        "outputs: 101 answers",
        "  tokens out p50 5,000 / p90 9,000 / p99 9,900 / max 10,000 (over the 100 answers counted)",
        "  tokens 100,000 in / 505,000 out · model time 50 min (30.0 s an answer)",
    ]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.004, "0.00 s"), (0.42, "0.42 s"), (12.34, "12.3 s"), (2460, "41 min"), (12240, "3.4 h")],
)
def test_duration(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_the_percentiles_are_numpys_inverted_cdf() -> None:
    """CountDistribution's percentiles, written out, equal numpy's `method="inverted_cdf"` for every size
    from 1 to 400 and for counts with ties."""
    import random

    import numpy as np

    from kaoshi.analysis.outputs import inverted_cdf

    rng = random.Random(11)
    for n in [*range(1, 401), 1000, 9999, 100_000]:
        counts = sorted(rng.choice((rng.randint(0, 50), rng.randint(0, 9000))) for _ in range(n))
        expected = np.percentile(np.asarray(counts), [50, 90, 99], method="inverted_cdf")
        assert [inverted_cdf(counts, q) for q in (50, 90, 99)] == [int(v) for v in expected], n
