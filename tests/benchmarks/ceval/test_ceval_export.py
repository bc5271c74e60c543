"""The C-Eval submission exporter and the C-Eval leaderboard, on a synthetic full 52-subject folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaoshi.benchmarks.ceval.subjects import CEVAL_SUBJECTS
from kaoshi.cli.main import main
from tests.support.files import CEVAL_ROWS_PER_SUBJECT, full_ceval


def kaoshi(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def ceval_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return full_ceval(tmp_path_factory.mktemp("ceval") / "ceval-exam")


def run(capsys: pytest.CaptureFixture[str], store: Path, root: Path, name: str, *extra: str) -> None:
    code, _, err = kaoshi(
        capsys, "run", "--benchmark", "ceval", "--data", str(root), "--run-name", name, "--store", str(store),
        *extra,
    )  # fmt: skip
    assert code == 0, err


def test_export_writes_every_subject_and_id(
    capsys: pytest.CaptureFixture[str], store_path: Path, ceval_root: Path, tmp_path: Path
) -> None:
    run(capsys, store_path, ceval_root, "t", "--split", "test", "--model", "constant:B")
    out_file = tmp_path / "out" / "submission.json"
    code, _, err = kaoshi(
        capsys, "export", "ceval-submission", "t", "-o", str(out_file), "--store", str(store_path)
    )
    assert code == 0, err
    assert f"52 subjects, {52 * CEVAL_ROWS_PER_SUBJECT} answers" in err
    document = json.loads(out_file.read_text(encoding="utf-8"))
    assert list(document) == list(CEVAL_SUBJECTS)
    assert all(answers == {"0": "B", "1": "B", "2": "B"} for answers in document.values())


def test_export_refuses_runs_that_cannot_make_a_submission(
    capsys: pytest.CaptureFixture[str], store_path: Path, ceval_root: Path, tmp_path: Path
) -> None:
    out_file = tmp_path / "submission.json"
    run(capsys, store_path, ceval_root, "val", "--model", "constant:B")
    run(capsys, store_path, ceval_root, "some", "--split", "test", "--model", "constant:B",
        "--subjects", "law,physician")  # fmt: skip
    run(capsys, store_path, ceval_root, "short", "--split", "test", "--model", "constant:B", "--limit", "100")
    expected = {
        "val": "the 'val' split; the submission needs --split test",
        "some": "50 subject(s) missing: computer_network, operating_system",
        "short": "limited to 100 questions",
    }
    for name, message in expected.items():
        code, _, err = kaoshi(
            capsys, "export", "ceval-submission", name, "-o", str(out_file), "--store", str(store_path)
        )
        assert code == 2 and message in err, err
        assert not out_file.exists()


def test_export_lists_errored_and_missing_questions(
    capsys: pytest.CaptureFixture[str], store_path: Path, ceval_root: Path, tmp_path: Path
) -> None:
    script = tmp_path / "mock.jsonl"
    rows = [
        {"id": f"{s}/{i}", "response": "答案：A"}
        for s in CEVAL_SUBJECTS
        for i in range(CEVAL_ROWS_PER_SUBJECT)
        if (s, i) != ("law", 1)  # no scripted reply: this sample is stored as an error
    ]
    script.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    run(capsys, store_path, ceval_root, "m", "--split", "test", "--model", f"mock:{script}")
    code, _, err = kaoshi(
        capsys, "export", "ceval-submission", "m", "-o", str(tmp_path / "s.json"), "--store", str(store_path)
    )
    assert code == 2
    assert "1 question(s) ended in an error: law/1" in err and "law: ids 1 missing" in err


def test_ceval_leaderboard_uses_subject_means(
    capsys: pytest.CaptureFixture[str], store_path: Path, ceval_root: Path
) -> None:
    run(capsys, store_path, ceval_root, "always-c", "--model", "constant:C")  # val gold is always C
    run(capsys, store_path, ceval_root, "always-a", "--model", "constant:A")
    code, out, err = kaoshi(
        capsys, "leaderboard", "--benchmark", "ceval", "--format", "md", "--store", str(store_path)
    )
    assert code == 0, err
    header = (
        "| run | model | method | prompt | split | questions | "
        + "STEM | Social Science | Humanities | Other | Average | Hard |"
    )
    assert header in out
    lines = [line for line in out.splitlines() if line.startswith("| always-")]
    assert lines[0].startswith("| always-c |") and "**100.0%**" in lines[0]
    assert lines[1].startswith("| always-a |") and lines[1].endswith(
        "| 0.0% | 0.0% | 0.0% | 0.0% | 0.0% | 0.0% |"
    )


def test_unreadable_answers_are_submitted_empty_with_a_warning(
    capsys: pytest.CaptureFixture[str], store_path: Path, ceval_root: Path, tmp_path: Path
) -> None:
    run(capsys, store_path, ceval_root, "shrug", "--split", "test", "--model", "constant:不知道")
    out_file = tmp_path / "s.json"
    code, _, err = kaoshi(
        capsys, "export", "ceval-submission", "shrug", "-o", str(out_file), "--store", str(store_path)
    )
    assert code == 0 and f"warning: {52 * CEVAL_ROWS_PER_SUBJECT} question(s) had no readable answer" in err
    assert json.loads(out_file.read_text(encoding="utf-8"))["law"] == {"0": "", "1": "", "2": ""}


def test_an_ambiguous_answer_is_submitted_empty_with_a_warning_naming_it(
    capsys: pytest.CaptureFixture[str], store_path: Path, ceval_root: Path, tmp_path: Path
) -> None:
    replies = {"law/1": "AB", "physician/2": "A或者B"}  # both ambiguous; the first names two letters
    script = tmp_path / "mock.jsonl"
    rows = [
        {"id": f"{s}/{i}", "response": replies.get(f"{s}/{i}", "答案：D")}
        for s in CEVAL_SUBJECTS
        for i in range(CEVAL_ROWS_PER_SUBJECT)
    ]
    script.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    run(capsys, store_path, ceval_root, "m", "--split", "test", "--model", f"mock:{script}")
    out_file = tmp_path / "s.json"
    code, _, err = kaoshi(
        capsys, "export", "ceval-submission", "m", "-o", str(out_file), "--store", str(store_path)
    )
    assert code == 0, err
    assert "warning: 2 question(s) had no readable answer" in err and "law/1, physician/2" in err
    document = json.loads(out_file.read_text(encoding="utf-8"))
    assert document["law"] == {"0": "D", "1": "", "2": "D"} and document["physician"]["2"] == ""


def test_ceval_leaderboard_says_how_many_subjects_an_average_covers(
    capsys: pytest.CaptureFixture[str], store_path: Path, ceval_root: Path
) -> None:
    # two subjects only: law (Humanities) and advanced_mathematics (STEM, Hard)
    subjects = "law,advanced_mathematics"
    run(capsys, store_path, ceval_root, "two", "--model", "constant:C", "--subjects", subjects)
    code, out, err = kaoshi(
        capsys, "leaderboard", "--benchmark", "ceval", "--format", "md", "--store", str(store_path)
    )
    assert code == 0, err
    [line] = [line for line in out.splitlines() if line.startswith("| two |")]
    cells = [cell.strip() for cell in line.strip("|").split("|")]
    assert cells[4] == "val"  # the split is shown
    stem, social, humanities, other, average, hard = cells[-6:]
    assert stem.endswith("(1/20)") and humanities.endswith("(1/11)") and hard.endswith("(1/8)")
    assert social == other == "—" and average.endswith("(2/52)")
    assert "covers n of the N subjects" in out
