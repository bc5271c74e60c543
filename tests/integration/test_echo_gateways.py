"""Log-likelihood over HTTP behind a gateway that mangles echo replies (issue 40): choices re-ordered,
re-numbered or left without index, the reply meant for the previous request, no `tokens`, shifted
offsets, no text. Whatever a gateway does, no stored score differs from the one the healthy server gives
the same prompt; a reply that cannot be shown to echo its prompt is that question's error, and resuming
against a healthy server completes the run with the healthy scores. On the sample exam and a
C-Eval-layout exam (questions that differ in one character), a prompt a request and packed requests."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

import kaoshi
from kaoshi.models import ModelError
from kaoshi.store.records import SampleRecord
from tests.support.fake_openai import GATEWAYS, FakeOpenAI
from tests.support.files import make_ceval

pytestmark = pytest.mark.slow

# Where a gateway's reply holds every prompt's echo (only in another order or numbering), matching by
# text reads every question; the others must lose questions to errors, never to wrong scores.
READ_WHOLE = {"swapped", "shuffled", "permuted", "shifted"}


def exam_for(layout: str, root: Path) -> kaoshi.Exam:
    if layout == "ceval":
        return kaoshi.load_exam("ceval", make_ceval(root / "ceval-exam"), "val")
    return kaoshi.load_exam("sample")


def run(exam: kaoshi.Exam, url: str, store: Path, per_request: int) -> dict[str, SampleRecord]:
    result = kaoshi.evaluate(
        exam,
        model="openai:test-model",
        method="loglik",
        chat=False,
        base_url=url,
        store=store,
        run_name="r",
        prompts_per_request=per_request,
        concurrency=4,
    )
    return {sample.question_id: sample for sample in result.samples}


@functools.cache
def healthy(layout: str, root: Path) -> dict[str, SampleRecord]:
    with FakeOpenAI() as server:
        samples = run(exam_for(layout, root), server.base_url, root / "healthy.sqlite", 32)
    assert all(s.error is None for s in samples.values())
    return samples


def wrong_scores(samples: dict[str, SampleRecord], truth: dict[str, SampleRecord]) -> list[str]:
    """The questions stored with a score the healthy server does not give their prompt."""
    wrong = []
    for question_id, sample in samples.items():
        assert sample.prompt == truth[question_id].prompt
        if sample.error is not None:
            continue
        expected = truth[question_id].logprobs or {}
        got = sample.logprobs or {}
        if got.keys() != expected.keys() or any(abs(got[c] - expected[c]) > 1e-9 for c in got):
            wrong.append(question_id)
    return wrong


@pytest.mark.parametrize("per_request", [1, 4, 32])
@pytest.mark.parametrize("layout", ["sample", "ceval"])
@pytest.mark.parametrize("gateway", sorted(GATEWAYS))
def test_no_score_from_another_prompts_echo(
    gateway: str, layout: str, per_request: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.getbasetemp() / f"exam-{layout}"
    root.mkdir(exist_ok=True)
    truth = healthy(layout, root)
    exam = exam_for(layout, root)
    store = tmp_path_factory.mktemp("store") / "runs.sqlite"
    with FakeOpenAI(gateway=gateway) as server:
        try:
            samples = run(exam, server.base_url, store, per_request)
        except ModelError as exc:  # a server whose replies cannot be checked stops the run in one line
            assert gateway == "no-tokens" and "cannot be checked against the prompt sent" in str(exc)
            samples = {}
        assert wrong_scores(samples, truth) == []
        errors = [s for s in samples.values() if s.error is not None]
        # replies that echo other prompts: every request's but the first's, or a swapped pair's
        handed_on = gateway.startswith("previous") and len(server.bodies) > 1
        swapped = gateway == "swapped-no-text" and per_request > 1
        if gateway in READ_WHOLE:
            assert errors == []
        elif handed_on or swapped:
            assert errors, "the gateway's replies were read although they echo other prompts"
        server.gateway = None  # the same server, healthy: the run resumes
        resumed = run(exam, server.base_url, store, per_request)
    assert all(s.error is None for s in resumed.values())
    assert wrong_scores(resumed, truth) == []
    assert resumed.keys() == truth.keys()
