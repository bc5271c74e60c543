"""`--shard I/N` and `kaoshi merge`: a fixed partition by question id, and shards merged into the run a
single process makes (same spec, same samples), with missing, doubled and disagreeing shards named."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import kaoshi
from kaoshi.cli.main import main
from kaoshi.runner.shards import in_shard, parse_shard, shard_count, shard_of
from kaoshi.store import StoreError


def test_the_partition_is_fixed_by_question_id() -> None:
    exam = kaoshi.load_exam("sample")
    parts = [[q.id for q in exam.questions if in_shard(f"{i}/3")(q.id)] for i in (1, 2, 3)]
    ids = [i for part in parts for i in part]
    assert sorted(ids) == sorted(q.id for q in exam.questions) and len(set(ids)) == len(exam)
    assert all(shard_of(i, 3) == n for n, part in enumerate(parts, 1) for i in part)
    assert [shard_count(exam, n, 3) for n in (1, 2, 3)] == [len(p) for p in parts]
    assert min(len(p) for p in parts) >= 8  # 44 questions spread over 3 shards
    assert in_shard(None)("anything")
    for bad in ("0/3", "4/3", "2", "a/b", "1/0"):
        with pytest.raises(ValueError, match="--shard"):
            parse_shard(bad)


def test_two_shards_merged_equal_a_one_process_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    whole = kaoshi.evaluate("sample", model="random", seed=3, store=tmp_path / "whole.sqlite")
    for i in (1, 2):
        code = main(
            ["run", "--benchmark", "sample", "--model", "random", "--seed", "3", "--shard", f"{i}/2",
             "--store", str(tmp_path / f"shard{i}.sqlite")]
        )  # fmt: skip
        assert code == 0
    shard_runs = [kaoshi.runs(store=tmp_path / f"shard{i}.sqlite")[0] for i in (1, 2)]
    assert [r.run.name for r in shard_runs] == [f"{whole.name}-shard{i}of2" for i in (1, 2)]
    assert (
        sum(r.run.spec.shard_questions or 0 for r in shard_runs) == 44
        and shard_runs[0].run.spec.shard == "1/2"
    )
    assert all(r.coverage.complete for r in shard_runs)  # each shard is complete on its own part
    capsys.readouterr()
    code = main(["merge", str(tmp_path / "shard1.sqlite"), str(tmp_path / "shard2.sqlite"),
                 "--store", str(tmp_path / "merged.sqlite")])  # fmt: skip
    assert code == 0
    assert capsys.readouterr().err.splitlines()[0] == f"{whole.name}: 2 of 2 shards, 44 questions"
    merged = kaoshi.load_run(whole.name, store=tmp_path / "merged.sqlite")
    assert merged.run.spec == whole.spec and merged.run.status == "finished"
    assert merged.samples == whole.samples  # the same answers, in the same order
    assert kaoshi.summarize(whole.name, store=tmp_path / "merged.sqlite").to_json() == whole.summary.to_json()


def test_missing_doubled_and_disagreeing_shards_are_named(tmp_path: Path) -> None:
    one, two, other = (tmp_path / f"{n}.sqlite" for n in ("one", "two", "other"))
    kaoshi.evaluate("sample", model="random", shard="1/3", store=one, run_name="r-shard1of3")
    kaoshi.evaluate("sample", model="random", shard="3/3", store=two, run_name="r-shard3of3")
    [outcome] = kaoshi.merge([one, two], store=tmp_path / "m.sqlite")
    assert (outcome.name, outcome.shards, outcome.missing_shards, outcome.complete) == (
        "r",
        (1, 3),
        (2,),
        False,
    )
    assert kaoshi.load_run("r", store=tmp_path / "m.sqlite").run.status == "interrupted"
    with pytest.raises(StoreError, match=r"shard 1/3 is both in .*one.sqlite and in .*one.sqlite"):
        kaoshi.merge([one, one], store=tmp_path / "m2.sqlite")
    kaoshi.evaluate("sample", model="random", seed=9, shard="2/3", store=other, run_name="r-shard2of3")
    with pytest.raises(
        StoreError, match=r"shard 2 in .*other.sqlite has seed=9, .* has seed=0; only the shard"
    ):
        kaoshi.merge([one, other], store=tmp_path / "m3.sqlite")
    with pytest.raises(StoreError, match="no sharded run"):
        kaoshi.merge([tmp_path / "m.sqlite"], store=tmp_path / "m4.sqlite")
    # The missing shard arrives later: merging again completes the same merged run.
    kaoshi.evaluate("sample", model="random", shard="2/3", store=two, run_name="r-shard2of3")
    [outcome] = kaoshi.merge([one, two], store=tmp_path / "m.sqlite")
    assert outcome.complete and kaoshi.load_run("r", store=tmp_path / "m.sqlite").run.status == "finished"
    whole = kaoshi.evaluate("sample", model="random", run_name="r", store=tmp_path / "w.sqlite")
    assert kaoshi.load_run("r", store=tmp_path / "m.sqlite").samples == whole.samples


def test_shards_render_from_the_whole_exam(tmp_path: Path) -> None:
    """QualBench has no dev split: its prompt takes one demo per type from the exam itself. Every shard
    finds the demos of the whole exam, so shards merge into the one-process run."""
    exam = replace(kaoshi.load_exam("sample"), fewshot=())
    whole = kaoshi.evaluate(
        exam, model="random", prompt="qualbench", run_name="q", store=tmp_path / "w.sqlite"
    )
    for i in (1, 2):
        part = kaoshi.evaluate(
            exam, model="random", prompt="qualbench", shard=f"{i}/2", run_name=f"q-shard{i}of2",
            store=tmp_path / f"s{i}.sqlite",
        )  # fmt: skip
        assert part.spec.exemplars == whole.spec.exemplars and part.spec.fingerprint == whole.spec.fingerprint
        assert [s.prompt for s in part.samples] == [
            s.prompt for s in whole.samples if shard_of(s.question_id, 2) == i
        ]
    [outcome] = kaoshi.merge([tmp_path / "s1.sqlite", tmp_path / "s2.sqlite"], store=tmp_path / "m.sqlite")
    merged = kaoshi.load_run("q", store=tmp_path / "m.sqlite")
    assert outcome.complete and merged.run.spec == whole.spec and merged.samples == whole.samples
