"""The judge prompt's version is stored with every grade; a new version of a mode's prompt grades under
another grader name, so grades from two prompts never mix; grades stored before versions read as 1."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from kaoshi.cli.main import main
from kaoshi.prompts import judge as judge_prompts
from kaoshi.runner.judge import JudgeSetup
from kaoshi.store import Store
from tests.support.runs import SAMPLE_OPEN, judge_script

GOLDEN_STORE = Path(__file__).parents[1] / "golden" / "store.sqlite"
GOLDEN_GRADER = "careful:function:__main__.judge_reply#01276085"


def test_first_versions_keep_the_grader_names() -> None:
    assert set(judge_prompts.JUDGE_PROMPT_VERSIONS) == set(judge_prompts.JUDGE_MODES)
    assert JudgeSetup("careful", "mock:j").prompt_version == judge_prompts.JUDGE_PROMPT_VERSION == 1
    assert JudgeSetup("careful", "mock:j").grader == "careful:mock:j"
    assert JudgeSetup("debate", "a", "b").grader == "debate:a+b"
    with pytest.raises(ValueError, match="unknown judge mode 'lenient'"):
        judge_prompts.judge_prompt_version("lenient")


def test_a_new_prompt_version_grades_as_another_grader(
    capsys: pytest.CaptureFixture[str], two_runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = str(two_runs)
    script = judge_script(tmp_path / "j.jsonl", dict.fromkeys(sorted(SAMPLE_OPEN), 7))
    assert main(["judge", "strong", "--judge", f"mock:{script}", "--store", store]) == 0
    monkeypatch.setitem(judge_prompts.JUDGE_PROMPT_VERSIONS, "careful", 2)
    assert JudgeSetup("debate", "a", "b").grader == "debate:a+b"  # only the changed mode's name changes
    capsys.readouterr()
    assert main(["judge", "strong", "--judge", f"mock:{script}", "--store", store]) == 0
    err = capsys.readouterr().err
    assert f"careful@v2:mock:{script}: 4 graded" in err and "0 already graded" in err, err
    with Store(two_runs, read_only=True) as opened:
        assert opened.graders("strong") == [f"careful:mock:{script}", f"careful@v2:mock:{script}"]
        first = opened.grades("strong", f"careful:mock:{script}")
        second = opened.grades("strong", f"careful@v2:mock:{script}")
    assert {g.prompt_version for g in first.values()} == {1} and len(first) == 4
    assert {g.prompt_version for g in second.values()} == {2} and len(second) == 4
    db = sqlite3.connect(two_runs)
    stored = db.execute("SELECT grader, prompt_version, COUNT(*) FROM grades GROUP BY 1, 2").fetchall()
    db.close()
    assert sorted(stored) == [(f"careful:mock:{script}", 1, 4), (f"careful@v2:mock:{script}", 2, 4)]


def test_grades_stored_before_versions_read_as_version_1(tmp_path: Path) -> None:
    copy = tmp_path / "store.sqlite"
    shutil.copyfile(GOLDEN_STORE, copy)
    before = hashlib.sha256(copy.read_bytes()).hexdigest()
    with Store(copy, read_only=True) as opened:  # the file lacks the column: its default is read
        grades = opened.grades("sample-good", GOLDEN_GRADER)
    assert hashlib.sha256(copy.read_bytes()).hexdigest() == before
    assert len(grades) == 4 and {g.prompt_version for g in grades.values()} == {1}
    with Store(copy) as opened:  # opened for writing: the column is added, the old rows get 1
        assert opened.grades("sample-good", GOLDEN_GRADER) == grades
    db = sqlite3.connect(copy)
    assert db.execute("SELECT DISTINCT prompt_version FROM grades").fetchall() == [(1,)]
    db.close()
