"""kaoshi vote end to end: three scripted models of different skill on the sample exam, and their vote."""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

import kaoshi.api
import kaoshi.runner.vote as vote_module
from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from kaoshi.store import RunStatus, SampleRecord, Store, StoreError
from tests.support.runs import mock_script
from tests.support.stores import drop_sample_column

OBJECTIVE = [q.id for q in load_exam_result("sample").exam.questions if q.type.value != "open"]
# Different skills and different questions right: strong 32/40, medium 24/40, weak 16/40.
RIGHT = {
    "strong": set(OBJECTIVE[:32]),
    "medium": set(OBJECTIVE[16:40]),
    "weak": set(OBJECTIVE[:8]) | set(OBJECTIVE[24:32]),
}


@pytest.fixture
def crowd(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> str:
    store = str(tmp_path / "store.sqlite")
    for name, right in RIGHT.items():
        script = mock_script(tmp_path / f"{name}.jsonl", right)
        code = main(["run", "--benchmark", "sample", "--model", f"mock:{script}", "--run-name", name,
                     "--store", store])  # fmt: skip
        assert code == 0
    capsys.readouterr()
    return store


def test_majority_vote_is_a_run_compared_with_its_members(
    capsys: pytest.CaptureFixture[str], crowd: str
) -> None:
    code = main(["vote", "strong", "medium", "weak", "--format", "json", "--store", crowd])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    # Every wrong answer of the mocks is the same letter, so the vote is right where two of three are.
    expected = {q for q in OBJECTIVE if sum(q in right for right in RIGHT.values()) >= 2}
    assert len(expected) == 24  # 0-7 (strong, weak), 16-31 (strong, medium; 24-31 all three)
    document = json.loads(captured.out)
    runs = {r["run"]: r for r in document["runs"]}
    assert [r["run"] for r in document["runs"]] == ["strong", "medium", "weak", "vote-majority"]
    assert runs["vote-majority"]["accuracy"] == pytest.approx(len(expected) / 40)
    assert runs["strong"]["accuracy"] == 0.8  # the best single run beats the crowd, as in the paper
    assert "best single run on these questions: strong" in captured.err
    by_type = runs["vote-majority"]["groups"]["type"]
    assert set(by_type) == {"single", "multi", "judge"} and "open" not in by_type

    with Store(Path(crowd)) as store:
        record = store.get_run("vote-majority")
        samples = {s.question_id: s for s in store.samples("vote-majority")}
    assert record.spec.members == ("strong", "medium", "weak") and record.spec.method == "vote"
    assert {q for q, s in samples.items() if s.correct} == expected
    votes = json.loads(samples[OBJECTIVE[0]].response or "")["votes"]
    assert set(votes) == {"strong", "medium", "weak"} and votes["strong"] == votes["weak"] != votes["medium"]

    # Every report works on the vote.
    assert main(["report", "vote-majority", "--by", "domain", "--store", crowd]) == 0
    assert "vote-majority — by domain" in capsys.readouterr().out


def test_weighted_and_dawid_skene_votes(capsys: pytest.CaptureFixture[str], crowd: str) -> None:
    assert main(["vote", "strong", "medium", "weak", "--method", "weighted", "--store", crowd]) == 0
    err = capsys.readouterr().err
    assert "cross-fitted accuracies (2 folds)" in err
    assert main(["vote", "strong", "medium", "weak", "--method", "weighted", "--in-sample",
                 "--run-name", "w-in", "--store", crowd]) == 0  # fmt: skip
    assert "in-sample accuracies (optimistic)" in capsys.readouterr().err
    assert main(["vote", "strong", "medium", "weak", "--method", "weighted", "--weights-from",
                 "strong,medium,weak", "--run-name", "w-from", "--store", crowd]) == 0  # fmt: skip
    assert "accuracies on strong, medium, weak" in capsys.readouterr().err
    with Store(Path(crowd)) as store:
        response = json.loads(store.samples("w-in")[0].response or "")
    assert response["weights"] == {"strong": 0.8, "medium": 0.6, "weak": 0.4}
    assert main(["vote", "strong", "medium", "weak", "--method", "dawid-skene", "--store", crowd]) == 0
    assert "Dawid-Skene" in capsys.readouterr().err


def test_bad_votes_are_refused(capsys: pytest.CaptureFixture[str], crowd: str, tmp_path: Path) -> None:
    assert main(["vote", "strong", "--store", crowd]) == 2
    assert "at least two runs" in capsys.readouterr().err
    assert main(["vote", "strong", "medium", "--in-sample", "--store", crowd]) == 2
    assert "for --method weighted" in capsys.readouterr().err
    script = mock_script(tmp_path / "s.jsonl", set())
    assert main(["run", "--benchmark", "sample", "--model", f"mock:{script}", "--shuffle-options", "1",
                 "--run-name", "shuffled", "--store", crowd]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["vote", "strong", "shuffled", "--store", crowd]) == 2
    assert "a vote needs the same questions" in capsys.readouterr().err
    assert main(["vote", "strong", "medium", "--store", crowd]) == 0
    assert main(["vote", "strong", "medium", "--store", crowd]) == 2  # the name is taken
    assert "already exists" in capsys.readouterr().err


def test_rescoring_a_vote_regrades_its_voted_answers(capsys: pytest.CaptureFixture[str], crowd: str) -> None:
    assert main(["vote", "strong", "medium", "weak", "--store", crowd]) == 0
    assert main(["rescore", "vote-majority", "--run-name", "re", "--store", crowd]) == 0
    assert main(["rescore", "vote-majority", "--run-name", "re-partial", "--multi-policy", "partial",
                 "--store", crowd]) == 0  # fmt: skip
    capsys.readouterr()
    with Store(Path(crowd)) as store:
        vote, again, partial = (store.samples(r) for r in ("vote-majority", "re", "re-partial"))
        assert store.get_run("re").spec.method == "vote"
    assert [(s.answer, s.status, s.correct, s.score) for s in again] == [
        (s.answer, s.status, s.correct, s.score) for s in vote
    ]
    accuracy = sum(bool(s.correct) for s in vote) / len(vote)
    assert accuracy == pytest.approx(24 / 40)
    assert sum(bool(s.correct) for s in partial) / len(partial) == pytest.approx(accuracy)
    assert [s.answer for s in partial] == [s.answer for s in vote]
    assert main(["report", "re", "--format", "json", "--store", crowd]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == pytest.approx(accuracy)
    # a vote's answers are not read from text: an LLM extractor has nothing to do
    assert main(["rescore", "vote-majority", "--run-name", "re-llm", "--llm-extractor", "constant:A",
                 "--store", crowd]) == 2  # fmt: skip
    assert "vote run" in capsys.readouterr().err
    with Store(Path(crowd)) as store:
        assert store.find_run("re-llm") is None


def _voted(store: str, name: str) -> list[dict[str, object]]:
    with Store(Path(store)) as opened:
        return [s.to_json() for s in opened.samples(name)]


# Rows holding their question text themselves, as rows written before schema 2 do.
_HELD_IN_ROWS = (
    "UPDATE samples SET question = (SELECT body FROM texts WHERE texts.position = samples.position "
    "AND texts.digest = samples.question_ref), question_ref = NULL"
)


@pytest.mark.parametrize("older", ["no fingerprint column", "questions held in rows"])
def test_a_vote_of_older_rows_is_the_same_vote(
    capsys: pytest.CaptureFixture[str], crowd: str, tmp_path: Path, older: str
) -> None:
    """Members whose rows predate the fingerprint column are read whole and fingerprinted; whose rows hold
    their question text themselves have their options compared: the same vote either way."""
    copy = tmp_path / "older.sqlite"
    shutil.copyfile(crowd, copy)
    with sqlite3.connect(copy) as db:
        if older == "no fingerprint column":
            drop_sample_column(db, "fingerprint")
        else:
            db.execute(_HELD_IN_ROWS)
    for store in (crowd, str(copy)):
        assert main(["vote", "strong", "medium", "weak", "--method", "weighted", "--store", store]) == 0
    capsys.readouterr()
    assert _voted(str(copy), "vote-weighted") == _voted(crowd, "vote-weighted")


def test_members_with_the_same_options_in_another_question_text_vote(
    capsys: pytest.CaptureFixture[str], crowd: str
) -> None:
    """A member whose stored question differs in what is not shown (its explanation) votes; one whose
    options differ is refused."""
    first = OBJECTIVE[0]
    with Store(Path(crowd), read_only=True) as store:
        content = next(s.question for s in store.samples("strong") if s.question_id == first)
    explained = {**content, "explanation": "另一个解析"}
    reordered = {**content, "options": list(reversed(content["options"]))}
    for question, name, code in ((explained, "alike", 0), (reordered, "unlike", 2)):
        with sqlite3.connect(crowd) as db:
            held = "UPDATE samples SET question_ref = NULL, question = ? WHERE run = ? AND question_id = ?"
            db.execute(held, (json.dumps(question, ensure_ascii=False), "medium", first))
        capsys.readouterr()
        assert main(["vote", "strong", "medium", "--run-name", name, "--store", crowd]) == code
    assert f"question {first!r} is shown with other options" in capsys.readouterr().err


def test_a_vote_goes_on_while_another_process_writes_the_store(
    crowd: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's commit between two of the vote's transactions: every voted sample is written (a
    read held open on the vote's own connection made each later write refused until the lock wait)."""
    monkeypatch.setattr(vote_module, "_WRITTEN_TOGETHER", 8)
    written: list[str] = []

    def meanwhile(sample: SampleRecord) -> None:
        written.append(sample.question_id)
        if len(written) == 8:
            with Store(Path(crowd)) as other:
                other.add_sample("weak", replace(other.samples("weak")[0], question_id="elsewhere"))

    with Store(Path(crowd), lock_wait_s=2) as store:
        result = kaoshi.api.vote(["strong", "medium", "weak"], store=store, on_sample=meanwhile)
        assert store.get_run(result.name).status == RunStatus.FINISHED
        assert len(store.samples(result.name)) == len(written) == 40


@pytest.mark.parametrize("where", ["on_plan", "on_sample"])
def test_a_vote_stopped_part_way_leaves_no_run_and_can_be_asked_again(
    crowd: str, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    monkeypatch.setattr(vote_module, "_WRITTEN_TOGETHER", 8)

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        kaoshi.api.vote(["strong", "medium"], store=crowd, **{where: interrupted})  # type: ignore[arg-type]
    with Store(Path(crowd), read_only=True) as store:
        assert store.find_run("vote-majority") is None
    assert kaoshi.api.vote(["strong", "medium"], store=crowd).outcome.questions == 40


def test_a_vote_the_store_stops_says_how_to_remove_what_it_wrote(
    crowd: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process holds the store's write lock from the vote's second transaction on: the vote stops
    after the lock wait, cannot remove its run either, and says how (not that answers were lost)."""
    monkeypatch.setattr(vote_module, "_WRITTEN_TOGETHER", 8)
    locker = sqlite3.connect(crowd, isolation_level=None)

    def then_locked(sample: SampleRecord) -> None:
        if not locker.in_transaction:
            locker.execute("BEGIN IMMEDIATE")

    try:
        with pytest.raises(StoreError) as stopped:
            kaoshi.api.vote(
                ["strong", "medium"], store=Store(Path(crowd), lock_wait_s=1), on_sample=then_locked
            )
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    message = str(stopped.value)
    assert "kaoshi runs rm vote-majority" in message and "lost" not in message
    with sqlite3.connect(crowd) as db:  # as once the vote's process has ended: its lease and run a dead one's
        assert db.execute("SELECT status FROM runs WHERE name = 'vote-majority'").fetchone() == ("running",)
        db.execute("DELETE FROM leases WHERE run = 'vote-majority'")
        db.execute("UPDATE runs SET status = 'interrupted' WHERE name = 'vote-majority'")
    assert main(["runs", "rm", "vote-majority", "--yes", "--store", crowd]) == 0
    assert kaoshi.api.vote(["strong", "medium"], store=crowd).outcome.questions == 40


def test_a_vote_of_the_same_name_meanwhile_is_refused_and_removes_nothing(crowd: str) -> None:
    refused: list[str] = []

    def another_vote(sample: SampleRecord) -> None:
        if not refused:
            with pytest.raises(StoreError) as other:
                kaoshi.api.vote(["medium", "weak"], store=crowd, run_name="vote-majority")
            refused.append(str(other.value))

    kaoshi.api.vote(["strong", "medium", "weak"], store=crowd, on_sample=another_vote)
    assert "vote-majority" in refused[0]
    with Store(Path(crowd), read_only=True) as store:
        voted = store.get_run("vote-majority")
        assert (
            voted.spec.members == ("strong", "medium", "weak") and len(store.samples("vote-majority")) == 40
        )
