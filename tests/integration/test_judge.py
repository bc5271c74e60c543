"""Judging the sample exam's open answers end to end with scripted (mock) judges, in every mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaoshi.cli.main import main
from kaoshi.prompts.judge import debate_prompt, judge_prompt
from kaoshi.store import Store
from tests.support.files import write_jsonl
from tests.support.runs import SAMPLE_OPEN, judge_script


def kaoshi(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_prompts_follow_the_lhmke_protocol() -> None:
    careful = judge_prompt("careful", "简述……", "参考", "考生")
    general = judge_prompt("general", "简述……", "参考", "考生")
    assert "答案1：参考" in careful and "答案2：考生" in careful and "(f)" in careful
    assert "(a)" not in general and "答案2得分：X" in general
    second = debate_prompt("简述……", "参考", "考生", "评语：缺一点", "6")
    assert "评语：缺一点" in second and "评审一给答案2的分数：6" in second
    with pytest.raises(ValueError, match="judge mode"):
        judge_prompt("lenient", "", "", "")


def test_every_judge_mode_grades_and_report_counts_the_points(
    capsys: pytest.CaptureFixture[str], two_runs: Path, tmp_path: Path
) -> None:
    store = str(two_runs)
    ids = sorted(SAMPLE_OPEN)  # s-civ-10, s-fin-10, s-it-10, s-safe-10
    careful = judge_script(tmp_path / "careful.jsonl", dict(zip(ids, [10, 5, 0, "？"], strict=True)))
    general = judge_script(tmp_path / "general.jsonl", dict(zip(ids, [8, 8, 8, 8], strict=True)))
    first = judge_script(tmp_path / "first.jsonl", dict(zip(ids, [6, 6, 6, 6], strict=True)))
    second = judge_script(tmp_path / "second.jsonl", dict(zip(ids, [4, 6, 9, 2], strict=True)), "::debate")

    code, _, err = kaoshi(capsys, "judge", "strong", "--judge", f"mock:{careful}", "--store", store)
    assert code == 0, err
    assert "3 graded, 1 unparsed, 0 error(s), 0 already graded" in err
    code, _, err = kaoshi(
        capsys, "judge", "strong", "--judge", f"mock:{general}", "--mode", "general", "--store", store
    )
    assert code == 0 and "4 graded" in err
    code, _, err = kaoshi(
        capsys, "judge", "strong", "--judge", f"mock:{first}", "--mode", "debate",
        "--second-judge", f"mock:{second}", "--store", store,
    )  # fmt: skip
    assert code == 0 and "4 graded" in err, err

    with Store(two_runs) as opened:
        graders = opened.graders("strong")
        assert graders == [
            f"careful:mock:{careful}",
            f"general:mock:{general}",
            f"debate:mock:{first}+mock:{second}",
        ]
        debate = opened.grades("strong", graders[2])
        careful_grades = opened.grades("strong", graders[0])
    civ = debate["s-civ-10"]
    assert [r["score"] for r in civ.rounds] == [6, 4] and civ.score == 4  # judge 2 has the last word
    assert "评审一给答案2的分数：6" in civ.rounds[1]["prompt"] and "参考回答" in civ.rounds[0]["prompt"]
    assert civ.points == SAMPLE_OPEN["s-civ-10"].points * 0.4
    assert careful_grades["s-safe-10"].status == "unparsed" and careful_grades["s-safe-10"].points is None
    assert "答案2得分：？" in careful_grades["s-safe-10"].rounds[0]["reply"]

    # Judging again asks nothing: the scripts are gone and every grade is stored.
    for script in (careful, general, first, second):
        script.unlink()
    code, _, err = kaoshi(
        capsys, "judge", "strong", "--judge", f"mock:{general}", "--mode", "general", "--store", store
    )
    assert code == 0 and "0 graded" in err and "4 already graded" in err

    # The report folds the chosen grader's points into the subject totals (default: the latest).
    code, out, err = kaoshi(capsys, "report", "strong", "--format", "json", "--store", store)
    assert f"graded by debate:mock:{first}+mock:{second}" in err
    report = json.loads(out)
    open_points = {qid: SAMPLE_OPEN[qid].points for qid in ids}
    expected = sum(open_points[q] * s / 10 for q, s in zip(ids, [4, 6, 9, 2], strict=True))
    assert report["groups"]["type"]["open"]["points"] == pytest.approx(expected)
    assert report["groups"]["type"]["open"]["max_points"] == sum(open_points.values())
    code, out, _ = kaoshi(
        capsys,
        "report",
        "strong",
        "--grader",
        f"careful:mock:{careful}",
        "--format",
        "json",
        "--store",
        store,
    )
    report = json.loads(out)
    # the unparsed grade leaves s-safe-10 unscored: 3 of 4 open answers count
    assert report["groups"]["type"]["open"]["max_points"] == sum(
        open_points[q] for q in ids if q != "s-safe-10"
    )
    code, _, err = kaoshi(capsys, "report", "strong", "--grader", "nobody", "--store", store)
    assert code == 2 and "no grades by 'nobody'" in err


def test_replies_without_a_score_are_unparsed_and_the_report_agrees(
    capsys: pytest.CaptureFixture[str], two_runs: Path, tmp_path: Path
) -> None:
    """Judges that only repeat their prompt's scale or template are not read as 10/10, a labelled score
    beats a later parenthetical count, and the by-type row counts exactly the answers it gives points."""
    civ, fin, it, safe = sorted(SAMPLE_OPEN)
    replies = {
        civ: "理由：缺少一个要点。\n答案2得分：6\n（答案2：3个要点中只答出2个）",
        fin: "请对照答案1评判答案2，满分10分。",
        it: "答案1得分：10\n答案2得分：X（X为0到10之间的数）",
        safe: "评分：8/10（满分10分）",
    }
    script = write_jsonl(tmp_path / "j.jsonl", [{"id": q, "response": r} for q, r in replies.items()])
    code, _, err = kaoshi(capsys, "judge", "strong", "--judge", f"mock:{script}", "--store", str(two_runs))
    assert code == 0 and "2 graded, 2 unparsed" in err, err
    with Store(two_runs) as opened:
        grades = opened.grades("strong", f"careful:mock:{script}")
    assert {q: g.score for q, g in grades.items()} == {civ: 6, fin: None, it: None, safe: 8}

    points = SAMPLE_OPEN[civ].points * 0.6 + SAMPLE_OPEN[safe].points * 0.8
    available = SAMPLE_OPEN[civ].points + SAMPLE_OPEN[safe].points
    code, out, _ = kaoshi(capsys, "report", "strong", "--format", "json", "--store", str(two_runs))
    row = json.loads(out)["groups"]["type"]["open"]
    assert (row["n"], row["graded"], row["judged"], row["ungraded"], row["scored"]) == (4, 2, 2, 2, 2)
    assert row["points"] == pytest.approx(points) and row["max_points"] == available
    code, out, _ = kaoshi(capsys, "report", "strong", "--format", "md", "--store", str(two_runs))
    assert f"| open | 4 | — | — | — | 0 | 2 | 0 | 0 | 0 | 2 | {points:g}/{available:g} |" in out


@pytest.mark.model
def test_the_real_small_model_can_judge(capsys: pytest.CaptureFixture[str], two_runs: Path) -> None:
    """SmolLM2-135M need not judge well: it must run, parse or mark unparsed, and store everything."""
    store = str(two_runs)
    code, _, err = kaoshi(
        capsys, "judge", "strong", "--judge", "smollm2", "--max-new-tokens", "40", "--store", store
    )
    assert code == 0, err
    with Store(two_runs) as opened:
        grades = opened.grades("strong", "careful:smollm2")
    assert set(grades) == set(SAMPLE_OPEN)
    for grade in grades.values():
        assert grade.status in ("ok", "unparsed")
        (only,) = grade.rounds
        assert (
            only["judge"] == "smollm2" and "答案2：参考回答" in only["prompt"] and only["reply"] is not None
        )
        assert (grade.score is None) == (grade.status == "unparsed")


def test_judged_points_reach_every_report(
    capsys: pytest.CaptureFixture[str], two_runs: Path, tmp_path: Path
) -> None:
    """Objective vs subjective per model in report, multi-run report and leaderboard; the HTML report shows
    the grades and, given human scores, the agreement tables."""
    store = str(two_runs)
    ids = sorted(SAMPLE_OPEN)
    judge = judge_script(tmp_path / "j.jsonl", dict(zip(ids, [4, 6, 9, 2], strict=True)))
    assert main(["judge", "strong", "--judge", f"mock:{judge}", "--store", store]) == 0
    points = {q: SAMPLE_OPEN[q].points for q in ids}
    subjective = sum(points[q] * s / 10 for q, s in zip(ids, [4, 6, 9, 2], strict=True)) / sum(
        points.values()
    )

    code, out, _ = kaoshi(capsys, "report", "strong", "--format", "json", "--store", store)
    parts = json.loads(out)["parts"]
    assert code == 0 and parts["objective"]["points_rate"] == 1.0 and parts["objective"]["n"] == 40
    assert parts["subjective"]["points_rate"] == pytest.approx(subjective)
    assert parts["subjective"]["scored"] == 4 and parts["subjective"]["n"] == 4
    code, out, _ = kaoshi(capsys, "report", "strong", "--store", store)
    assert "strong — objective vs subjective" in out and f"{100 * subjective:.1f}%" in out

    code, out, _ = kaoshi(capsys, "report", "strong", "weak", "--format", "csv", "--store", store)
    cells = {
        (row[1], row[2]): row[3]
        for row in (line.split(",") for line in out.splitlines())
        if row[0].startswith("objective vs subjective")
    }
    assert cells[("objective", "strong")] == "100.0%" and cells[("objective", "weak")] == "25.0%"
    assert (
        cells[("subjective", "strong")] == f"{100 * subjective:.1f}%" and cells[("subjective", "weak")] == "—"
    )

    code, out, _ = kaoshi(capsys, "leaderboard", "--format", "json", "--store", store)
    (board,) = json.loads(out)
    columns = board["columns"]
    rows = {row[0]: dict(zip(columns, row, strict=True)) for row in board["rows"]}
    assert (
        rows["strong"]["subjective pts"] == f"{100 * subjective:.1f}%"
        and rows["weak"]["subjective pts"] == "—"
    )
    assert rows["weak"]["objective pts"] == "25.0%"

    human = tmp_path / "human.csv"
    human.write_text(
        "question_id,scorer,score\n"
        + "".join(f"{q},h1,{s}\n" for q, s in zip(ids, [5, 6, 8, 1], strict=True)),
        encoding="utf-8",
    )
    page = tmp_path / "report.html"
    code, _, err = kaoshi(capsys, "html", "strong", "--human", str(human), "-o", str(page), "--store", store)
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    assert "graders of strong against the mean of 1 human scorer(s)" in html
    assert f"careful:mock:{judge}" in html and "strong — objective vs subjective" in html
    data = json.loads(
        html.split('<script type="application/json" id="kaoshi-data">')[1].split("</script>")[0]
    )
    civ = next(s for s in data["runs"][0]["samples"] if s["id"] == "s-civ-10")
    assert civ["outcome"] == "judged" and civ["judge"]["score"] == 4
    assert civ["judge"]["rounds"][0]["reply"].endswith("答案2得分：4")


# -- the agreement command: judges and metrics against human scores ------------------------------------------
def test_agreement_command_reports_every_grader(
    capsys: pytest.CaptureFixture[str], two_runs: Path, tmp_path: Path
) -> None:
    store = str(two_runs)
    ids = sorted(SAMPLE_OPEN)
    judge = judge_script(tmp_path / "j.jsonl", dict(zip(ids, [9, 5, 3, 1], strict=True)))
    assert main(["judge", "strong", "--judge", f"mock:{judge}", "--store", store]) == 0
    human = tmp_path / "human.csv"
    rows = ["question_id,scorer,score"]
    for qid, scores in zip(ids, [(8, 10), (5, 5), (2, 4), (0, 0)], strict=True):
        rows += [f"{qid},h1,{scores[0]}", f"{qid},h2,{scores[1]}"]
    human.write_text("\n".join(rows) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["agreement", "strong", "--human", str(human), "--format", "json", "--store", store]) == 0
    document = json.loads(capsys.readouterr().out)
    graders = {g["grader"]: g for g in document["graders"]}
    metrics = {f"{m} (char) ×10" for m in ("bleu", "rouge1", "rouge2", "rougeL")}
    assert set(graders) == {*metrics, f"careful:mock:{judge}"}
    judged = graders[f"careful:mock:{judge}"]
    assert judged["n"] == 4 and judged["total"] == 18 and judged["spearman"]["value"] == pytest.approx(1.0)
    assert document["human"] == {"n": 4, "total": 17.0, "average": 4.25}
    assert document["sd_histogram"]["0"] == 2 and document["sd_histogram"]["0-1"] == 2
    assert main(["agreement", "strong", "--human", str(human), "--store", store]) == 0
    out = capsys.readouterr().out
    assert "Kendall τ-b" in out and "inter-annotator standard deviation" in out
