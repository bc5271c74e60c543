"""k samples a question (issue 41): the seeds, the store's repeat samples, and avg@k / maj@k / pass@k."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from kaoshi.models.base import GREEDY, Sampling, question_of, request_id
from kaoshi.results.repeats import cluster_interval, pass_at, pass_ks, repeat_summary
from kaoshi.runner.repeats import sample_seed, sampling_of
from kaoshi.store import Store
from kaoshi.store.records import RunSpec, SampleRecord, SampleStatus
from kaoshi.store.settings import compact_settings, describe_settings


def sample(
    qid: str, k: int, answer: str, gold: str = "A", status: SampleStatus = SampleStatus.OK
) -> SampleRecord:
    return SampleRecord(
        question_id=qid, position=int(qid[1:]), qtype="single", gold=frozenset(gold), points=1.0,
        subject=None, domain=None, category=None, question={"q": qid}, prompt=f"p{qid}", status=status,
        answer=frozenset(answer) if answer else None,
        correct=None if status == SampleStatus.ERROR else answer == gold, sample=k,
    )  # fmt: skip


def spec(**changes: object) -> RunSpec:
    base = RunSpec(
        benchmark="b", data=None, split=None, fingerprint="f", n_questions=3, prompt="t", prompt_version=1,
        shots=0, model="m", method="generate", seed=7, limit=None, max_new_tokens=50,
    )  # fmt: skip
    return replace(base, **changes)  # type: ignore[arg-type]


def test_each_sample_of_each_question_has_its_own_seed_and_a_resume_the_same() -> None:
    seeds = {sample_seed(seed, f"q{i}", k) for seed in range(10) for i in range(10) for k in range(8)}
    assert len(seeds) == 10 * 10 * 8 and all(0 <= s < 2**31 for s in seeds)
    assert sample_seed(1, "q", 1) != sample_seed(2, "q", 0)  # seed + k would give both 2
    assert sample_seed(3, "q", 4) == sample_seed(3, "q", 4)  # a resume asks the same thing
    decoding = sampling_of(spec(temperature=0.6, top_p=0.95, thinking=False), "q1", 2)
    assert decoding == Sampling(0.6, 0.95, None, sample_seed(7, "q1", 2), False)
    assert decoding.options_set() == ("temperature", "top_p", "thinking")
    assert sampling_of(spec(), "q1", 0) == Sampling(seed=7)  # greedy sends the run's seed, as always
    assert GREEDY.options_set() == () and GREEDY.greedy


@pytest.mark.parametrize(("qid", "k"), [("q1", 0), ("q1", 3), ("a\x1fb", 0), ("x/y#2", 11)])
def test_a_request_id_maps_back_to_its_question_and_sample(qid: str, k: int) -> None:
    assert question_of(request_id(qid, k)) == (qid, k)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [(5, 0, 1, 0.0), (5, 5, 5, 1.0), (5, 1, 1, 0.2), (5, 1, 5, 1.0),
     (10, 3, 2, 1 - math.comb(7, 2) / math.comb(10, 2)), (4, 2, 3, 1.0),
     (20, 1, 4, 1 - math.comb(19, 4) / math.comb(20, 4))],
)  # fmt: skip
def test_pass_at_k_is_the_unbiased_estimator(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at(n, c, k) == pytest.approx(expected)


def test_pass_ks_are_powers_of_two_and_k() -> None:
    assert pass_ks(1) == [1] and pass_ks(5) == [1, 2, 4, 5] and pass_ks(8) == [1, 2, 4, 8]


def test_avg_maj_pass_and_consistency_of_hand_made_samples() -> None:
    rows = [
        # q0: A A A (right every time); q1: B B A (majority wrong); q2: A C (a 1-1 tie, one side right),
        # and an error, which is no sample
        sample("q0", 0, "A"), sample("q0", 1, "A"), sample("q0", 2, "A"),
        sample("q1", 0, "B"), sample("q1", 1, "B"), sample("q1", 2, "A"),
        sample("q2", 0, "A"), sample("q2", 1, "C"), sample("q2", 2, "", status=SampleStatus.ERROR),
    ]  # fmt: skip
    summary = repeat_summary(rows, 3)
    assert (summary.questions, summary.samples) == (3, 8)
    assert summary.avg_at_k == pytest.approx(5 / 8)
    assert summary.maj_at_k == pytest.approx((1 + 0 + 0.5) / 3) and summary.maj_ties == 1
    assert summary.pass_at_k[1] == pytest.approx((1 + 1 / 3 + 1 / 2) / 3)
    assert summary.pass_at_k[3] == pytest.approx((1 + 1) / 2)  # q2 has 2 graded samples: left out of pass@3
    assert summary.consistency == pytest.approx((1 + 2 / 3 + 1 / 2) / 3)
    assert summary.unanimous == pytest.approx(1 / 3)
    as_json = summary.to_json()
    assert (as_json["k"], as_json["pass_at_k"]) == (3, summary.pass_at_k[3])


def test_the_cluster_interval_is_wider_than_treating_samples_as_independent() -> None:
    # every question either always right or always wrong: k samples say no more than one
    rows = [sample(f"q{i}", k, "A" if i % 2 else "B") for i in range(20) for k in range(5)]
    summary = repeat_summary(rows, 5)
    assert summary.avg_at_k == 0.5
    low, high = summary.avg_interval or (0, 0)
    naive = 1.96 * math.sqrt(0.25 / 100)
    assert high - low > 2 * naive * 1.9  # about sqrt(5) times wider than 100 independent samples
    assert cluster_interval([], 0.0) is None


def test_a_store_keeps_every_sample_and_old_readers_see_the_first(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.open_run("r", spec(repeats=3))
        for k in range(3):
            store.add_sample("r", sample("q1", k, "AB"[k % 2]))
        store.add_sample("r", sample("q2", 0, "A"))
        assert [s.sample for s in store.iter_samples("r")] == [0, 0]
        assert [(s.question_id, s.sample) for s in store.all_samples("r")] == [
            ("q1", 0),
            ("q1", 1),
            ("q1", 2),
            ("q2", 0),
        ]
        assert store.finished_keys("r") == {("q1", 0), ("q1", 1), ("q1", 2), ("q2", 0)}
        store.add_sample("r", sample("q1", 1, "B"))  # a later write of the same sample replaces it
        assert [s.answer for s in store.all_samples("r") if s.sample == 1] == [frozenset("B")]
        store.finish_run("r")
        store.rename_run("r", "r2")
        assert len(store.all_samples("r2")) == 4
        store.remove_runs(["r2"])
        assert store.sample_keys("r2") == set()
    with Store(path, read_only=True) as reader:
        assert reader.runs() == []


def test_a_greedy_runs_spec_reads_as_before_and_a_sampled_ones_settings_say_how() -> None:
    greedy = spec().to_json()
    assert not {"temperature", "top_p", "top_k", "thinking", "repeats", "reused_from"} & set(greedy)
    assert RunSpec.from_json(greedy) == spec()
    sampled = spec(temperature=0.6, top_p=0.95, thinking=True, repeats=4)
    assert RunSpec.from_json(sampled.to_json()) == sampled
    assert [d[0] for d in spec().differences(sampled)] == ["temperature", "top_p", "thinking", "repeats"]
    assert "t0.6 · p0.95 · think · x4" in compact_settings(sampled)
    assert "temperature 0.6 · top-p 0.95 · thinking on · 4 samples a question" in describe_settings(sampled)


def test_right_answers_written_differently_are_one_vote() -> None:
    """A cloze's \\frac{1}{2}, 0.5 and 1/2 are all the gold: three right against two wrong 3s."""
    written = ["\\frac{1}{2}", "0.5", "1/2", "3", "3"]
    rows = [
        replace(sample("q1", k, "A"), qtype="cloze", answer=(text,), correct=k < 3, gold=("1/2",))
        for k, text in enumerate(written)
    ]
    summary = repeat_summary(rows, 5)
    assert (summary.maj_at_k, summary.consistency, summary.maj_ties) == (1.0, 0.6, 0)
