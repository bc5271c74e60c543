"""A sample's prompt and question held once in the store (schema 2, kaoshi.store.schema.TEXT_REFS): read back
byte for byte, shared by every run that sends them, dropped with the last run that held them; a store of
schema 1 read as it is, and made schema 2 (its rows untouched) when opened for writing."""

from __future__ import annotations

import dataclasses
import hashlib
import sqlite3
from pathlib import Path

import pytest

from kaoshi.api.store_tools import check_store, compact_store
from kaoshi.api.summary import summarize
from kaoshi.cli.main import main
from kaoshi.store import Store, StoreError, maintenance
from kaoshi.store import schema as store_schema
from kaoshi.store.rows import dumps
from kaoshi.store.schema import SCHEMA_VERSION
from tests.support.mixed_runs import counting_refused
from tests.support.stores import SPEC, digest, drop_sample_column, sample

# Texts as real prompts and questions hold them: Chinese with full-width punctuation, an exemplar block,
# Windows line ends, a NUL a tokenizer test left in, an emoji, trailing spaces.
PROMPTS = [
    "以下是中国关于会计考试的单项选择题，请选出其中的正确答案。\n\n示例：……\n答案：A\n\n题目：",
    "Question: which?\r\nA. yes\r\nB. no\r\nAnswer:",
    "nul\0inside 🙂   ",
]


def question(question_id: str) -> dict[str, object]:
    return {
        "id": question_id,
        "stem": f"{question_id}：下列说法正确的是（ ）",
        "options": [["A", "甲"], ["B", "乙"]],
    }


def samples_of(run_index: int, n: int = 3) -> list[object]:
    return [
        sample(
            f"q{i}",
            position=i,
            prompt=PROMPTS[i % len(PROMPTS)],
            question=question(f"q{i}"),
            response=f"run {run_index}: 答案：AB",
        )
        for i in range(n)
    ]


def write_runs(path: Path, runs: dict[str, int]) -> None:
    """Runs of the store, each of `n` questions of the same exam (their prompts and questions the same)."""
    with Store(path) as store:
        for index, (name, n) in enumerate(runs.items()):
            store.open_run(name, dataclasses.replace(SPEC, n_questions=n))
            store.add_samples(name, samples_of(index, n))  # type: ignore[arg-type]
            store.finish_run(name)


def texts(path: Path) -> dict[tuple[int, bytes], str]:
    with sqlite3.connect(path) as db:
        return {(position, key): body for position, key, body in db.execute("SELECT * FROM texts")}


def test_prompts_and_questions_read_back_byte_for_byte_and_are_held_once(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    write_runs(path, {"a": 3, "b": 3, "c": 3})
    with Store(path, read_only=True) as store:
        for run in ("a", "b", "c"):
            read = store.samples(run)
            assert [s.prompt for s in read] == PROMPTS
            assert [s.question for s in read] == [question(f"q{i}") for i in range(3)]
    held = texts(path)
    assert sorted(held.values()) == sorted([*PROMPTS, *(dumps(question(f"q{i}")) for i in range(3))])
    assert all(
        hashlib.blake2b(body.encode(), digest_size=16).digest() == key for (_, key), body in held.items()
    )
    assert {position for position, _ in held} == {0, 1, 2}
    with sqlite3.connect(path) as db:  # the rows hold digests, not the texts
        inline = db.execute("SELECT DISTINCT prompt, question FROM samples").fetchall()
        refs = db.execute("SELECT COUNT(*) FROM samples WHERE prompt_ref IS NULL OR question_ref IS NULL")
        assert inline == [("", "")] and refs.fetchone()[0] == 0


def test_an_empty_prompt_stays_in_its_row(tmp_path: Path) -> None:
    """A vote's sample has no prompt: nothing is held for it, and it reads empty."""
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.open_run("v", SPEC)
        store.add_sample("v", sample("q1", prompt="", extracted_by="vote"))
        assert store.samples("v")[0].prompt == ""
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT prompt, prompt_ref IS NULL FROM samples").fetchone() == ("", 1)


def test_compacting_drops_only_the_texts_no_run_left_holds(tmp_path: Path) -> None:
    """A run removed leaves its texts until a compaction, which keeps those another run holds."""
    path = tmp_path / "s.sqlite"
    write_runs(path, {"long": 3, "short": 2})  # q2's prompt and question are the long run's alone
    before = texts(path)
    with Store(path) as store:
        store.remove_runs(["long"])
    assert texts(path) == before and len(before) == 6  # removing is quick: it reads no other run
    assert compact_store(path).dropped == 2
    after = texts(path)
    assert len(after) == 4 and set(after) < set(before)
    with Store(path, read_only=True) as store:
        assert [s.prompt for s in store.samples("short")] == PROMPTS[:2]
    with Store(path) as store:
        store.remove_runs(["short"])
    assert compact_store(path).dropped == 4 and texts(path) == {}


def test_a_sample_whose_text_is_missing_is_named(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    write_runs(path, {"a": 1})
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM texts WHERE body = ?", (PROMPTS[0],))
    with Store(path, read_only=True) as store, pytest.raises(StoreError) as raised:
        store.samples("a")
    assert str(raised.value) == (
        f"{path}: table samples, run 'a', question 'q0': its prompt is held in the table texts, which does "
        "not have it (a store damaged or edited by hand)"
    )


def store_of_schema_1(path: Path) -> Path:
    """A store as kaoshi wrote it before schema 2: each sample's prompt and question in its row, no texts."""
    write_runs(path, {"old": 3})
    with sqlite3.connect(path) as db:
        for column, ref in store_schema.TEXT_REFS.items():
            db.execute(
                f"UPDATE samples SET {column} = (SELECT body FROM texts "
                f"WHERE texts.position = samples.position AND texts.digest = {ref})"
            )
            drop_sample_column(db, ref)
            db.execute(f"ALTER TABLE repeat_samples DROP COLUMN {ref}")
        db.execute("DROP TABLE texts")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    return path


def test_a_store_of_schema_1_is_read_as_it_is(tmp_path: Path) -> None:
    path = store_of_schema_1(tmp_path / "old.sqlite")
    before = digest(path)
    with Store(path, read_only=True) as store:
        assert [s.prompt for s in store.samples("old")] == PROMPTS
        assert store.samples("old")[2].question == question("q2")
    assert digest(path) == before  # reading changed nothing


def test_a_store_of_schema_1_opened_for_writing_becomes_schema_2_its_rows_as_they_were(
    tmp_path: Path,
) -> None:
    path = store_of_schema_1(tmp_path / "old.sqlite")
    with Store(path) as store:
        store.open_run("new", SPEC)
        store.add_samples("new", samples_of(1, 2))  # type: ignore[arg-type]
        assert [s.prompt for s in store.samples("old")] == PROMPTS  # still in their rows
        assert [s.prompt for s in store.samples("new")] == PROMPTS[:2]  # held once
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("2",)
        held_inline = (
            "SELECT run, COUNT(*) FROM samples WHERE prompt_ref IS NULL AND prompt != '' GROUP BY run"
        )
        assert db.execute(held_inline).fetchall() == [("old", 3)]
    assert sorted(texts(path).values()) == sorted(
        [*PROMPTS[:2], *(dumps(question(f"q{i}")) for i in range(2))]
    )


def test_a_kaoshi_of_schema_1_refuses_a_store_of_schema_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What an older kaoshi does with a store whose prompts it would read as empty: refuses it, untouched."""
    path = tmp_path / "s.sqlite"
    write_runs(path, {"a": 1})
    before = digest(path)
    monkeypatch.setattr(store_schema, "SCHEMA_VERSION", 1)
    with pytest.raises(
        StoreError, match=r"written by a newer kaoshi \(schema 2, this kaoshi reads up to 1\)"
    ):
        Store(path, read_only=True)
    assert digest(path) == before and SCHEMA_VERSION == 2


@pytest.mark.parametrize("at_once", [5_000, 2])  # one transaction, and several
def test_compacting_holds_the_old_rows_texts_once_and_their_numbers_stay_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at_once: int
) -> None:
    monkeypatch.setattr(maintenance, "_MOVED_AT_ONCE", at_once)
    path = store_of_schema_1(tmp_path / "old.sqlite")
    with Store(path, read_only=True) as store:
        before = store.samples("old")
    report = summarize("old", store=path).to_json()
    result = compact_store(path)
    assert (result.moved, result.runs) == (3, ("old",))
    assert result.bytes_after <= result.bytes_before
    with Store(path, read_only=True) as store:
        assert store.samples("old") == before  # every text byte for byte
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM samples WHERE prompt_ref IS NULL").fetchone() == (0,)
        assert db.execute("SELECT DISTINCT prompt, question FROM samples").fetchall() == [("", "")]
    # the run's rows changed in place: its counts were kept again, as its writer kept them
    with counting_refused(monkeypatch, "the run", (Store, "score_kinds"), (Store, "output_counts")):
        assert summarize("old", store=path).to_json() == report
    assert compact_store(path).moved == 0  # nothing left to move


def test_kaoshi_store_compact_says_what_it_did(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = store_of_schema_1(tmp_path / "old.sqlite")
    assert main(["store", "compact", "--store", str(path)]) == 0
    said = capsys.readouterr().out
    assert said.startswith(
        f"compacted {path}: 3 sample(s) of 1 run(s) now hold their prompt and question once; "
    )
    assert said.rstrip().endswith("on disk")
    assert main(["store", "compact", "--store", str(path)]) == 0
    assert "every sample already held its prompt and question once" in capsys.readouterr().out


def test_a_store_read_while_another_process_upgrades_it_reads_the_new_rows(tmp_path: Path) -> None:
    """A reader that opened a store of schema 1 (an empty stand-in for `texts`, select lists without the
    digests) reads the answers a newer writer then holds in `texts`, not empty texts."""
    path = store_of_schema_1(tmp_path / "old.sqlite")
    with Store(path, read_only=True) as reader:
        assert [s.prompt for s in reader.samples("old")] == PROMPTS
        with Store(path) as writer:  # another process, opening it for writing: schema 2
            writer.open_run("new", SPEC)
            writer.add_samples("new", samples_of(1, 2))  # type: ignore[arg-type]
        assert [s.prompt for s in reader.samples("new")] == PROMPTS[:2]
        assert [s.question for s in reader.samples("new")] == [question("q0"), question("q1")]
        assert [s.prompt for s in reader.samples("old")] == PROMPTS


def test_two_processes_upgrading_a_store_at_once_both_open_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second saw the store of schema 1 before the first made it schema 2: it asks again under the
    lock, and adds nothing twice."""
    path = store_of_schema_1(tmp_path / "old.sqlite")
    with sqlite3.connect(path) as db:
        seen_before = store_schema._missing_schema(db)
    assert seen_before
    with Store(path):  # the first process
        pass
    asked = iter([seen_before])
    really_missing = store_schema._missing_schema
    monkeypatch.setattr(store_schema, "_missing_schema", lambda db: next(asked, None) or really_missing(db))
    with Store(path) as store:  # the second: "duplicate column name: prompt_ref" before it asked again
        assert [s.prompt for s in store.samples("old")] == PROMPTS


def test_kaoshi_store_check_says_what_compacting_would_hold_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = store_of_schema_1(tmp_path / "old.sqlite")
    assert check_store(path).held_in_rows == 3
    assert main(["store", "check", "--store", str(path)]) == 0
    assert (
        "  3 sample(s) hold their prompt and question in their own row (written before schema 2): "
        "'kaoshi store compact' holds each text once and gives the space back"
    ) in capsys.readouterr().out.splitlines()
    compact_store(path)
    assert check_store(path).held_in_rows == 0
    assert main(["store", "check", "--store", str(path)]) == 0
    assert "kaoshi store compact" not in capsys.readouterr().out
