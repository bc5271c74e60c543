"""The pieces of --batch that need no server: input files cut within a provider's limits, a batch's state
read from the provider's reply, output files read whole or not at all, the waiting line, and batch prices."""

from __future__ import annotations

import pytest

from kaoshi.analysis.cost import Price, Usage
from kaoshi.models.base import ModelError
from kaoshi.models.batches import BatchState, parts
from kaoshi.models.openai_batch import _records, custom_id, request_of
from kaoshi.runner.batching import BatchPolicy, BatchWait


@pytest.mark.parametrize(
    ("sizes", "max_lines", "max_bytes", "ends"),
    [
        ([10, 10, 10], 50, 1000, [3]),  # one file
        ([10] * 7, 3, 1000, [3, 6, 7]),  # by lines
        ([10, 10, 10, 10], 50, 25, [2, 4]),  # by bytes
        ([40, 10], 50, 25, [1, 2]),  # a line over the byte limit goes alone (the provider says why)
        ([], 50, 25, []),
    ],
)
def test_lines_are_cut_into_files_within_the_limits(
    sizes: list[int], max_lines: int, max_bytes: int, ends: list[int]
) -> None:
    assert parts([b"x" * size for size in sizes], max_lines, max_bytes) == ends


def test_a_batch_state_is_read_from_the_providers_reply() -> None:
    state = BatchState.parse(
        {
            "id": "batch_1",
            "status": "failed",
            "input_file_id": "file-1",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": 1_700_000_000,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "metadata": {"kaoshi_run": "r"},
            "errors": {
                "object": "list",
                "data": [{"code": "too_many_requests", "message": "over", "line": 3}],
            },
        }
    )
    assert state.final and state.metadata == {"kaoshi_run": "r"}
    assert state.errors == "too_many_requests: over (line 3)"
    # a provider that leaves out the counts, the metadata and the errors (Alibaba's early replies)
    bare = BatchState.parse({"id": "b", "status": "in_progress"})
    assert not bare.final and (bare.total, bare.metadata, bare.errors) == (0, {}, None)


def test_an_output_file_is_read_whole_or_not_at_all() -> None:
    whole = b'{"custom_id": "a"}\n\n{"custom_id": "b"}\n'
    assert [r["custom_id"] for r in _records(whole, "f", "here")] == ["a", "b"]
    assert [r["custom_id"] for r in _records(whole.rstrip(b"\n"), "f", "here")] == ["a", "b"]
    with pytest.raises(ModelError, match="ends in the middle of a line"):
        list(_records(b'{"custom_id": "a"}\n{"custom_id": "b', "f", "here"))
    with pytest.raises(ModelError, match="not JSON"):
        list(_records(b'{"custom_id": "a"}\n<html>\n{"custom_id": "b"}\n', "f", "here"))


def test_the_waiting_line_says_what_the_batches_do() -> None:
    wait = BatchWait(2, (("finalizing", 1), ("in_progress", 1)), 1000, 412, 3, 312.4)
    assert (
        wait.describe()
        == "2 batches (finalizing 1, in_progress 1): 412 of 1,000 done, 3 failed; waited 0:05:12"
    )
    one = BatchWait(1, (("validating", 1),), 10, 0, 0, 3_700)
    assert one.describe() == "1 batch (validating 1): 0 of 10 done; waited 1:01:40"


@pytest.mark.parametrize(
    "settings", [{"fallback": "never"}, {"rounds": 0}, {"poll_s": -1}, {"max_lines": 0}, {"max_bytes": 0}]
)
def test_a_batch_policy_refuses_settings_that_cannot_work(settings: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        BatchPolicy(**settings)  # type: ignore[arg-type]


def test_batch_answers_cost_the_batch_share_of_the_price() -> None:
    price = Price(2.0, 8.0, 1.0)
    assert price.cost(1_000_000, 1_000_000, 500_000, batch=True) == pytest.approx((1.0 + 0.5 + 8.0) / 2)
    assert Price(2.0, 8.0, batch=0.4).cost(1_000_000, 0, batch=True) == pytest.approx(0.8)
    # a run with answers of both kinds: each at its own price
    usage = Usage(
        answers=3, prompt=300, completion=30, cached=100, batched=2, batch_prompt=200, batch_completion=20
    )
    realtime = price.cost(100, 10, 100)
    batched = price.cost(200, 20, 0, batch=True)
    assert usage.cost(price) == pytest.approx(realtime + batched)
    assert "batch_answers" in usage.to_json() and "batch_answers" not in Usage(answers=1).to_json()


@pytest.mark.parametrize("request_id", ["q1", "q1\x1f2", "a%1Fb", "法学/3\x1f10", "%", "%%1F\x1f", "tab\tid"])
def test_a_custom_id_holds_no_control_character_and_reads_back(request_id: str) -> None:
    written = custom_id(request_id)
    assert not any(ord(ch) < 32 or ord(ch) == 127 for ch in written)
    assert request_of(written) == request_id
