"""The fake server's Batch API (tests/support/fake_batches.py), driven by a plain aiohttp client: the
files and batches routes, answers equal to real-time ones, and each scripted fault."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from tests.support.fake_openai import FakeOpenAI

CHAT = "/v1/chat/completions"
QUESTIONS = ["甲题：1+1=?", "乙题：2+2=?", "丙题：3+3=?", "丁题：4+4=?", "戊题：5+5=?", "己题：6+6=?"]


def chat_line(custom_id: str, question: str, url: str = CHAT) -> dict[str, Any]:
    body = {
        "model": "m",
        "messages": [{"role": "system", "content": "答题"}, {"role": "user", "content": question}],
    }
    return {"custom_id": custom_id, "method": "POST", "url": url, "body": body}


def chat_lines(count: int = len(QUESTIONS)) -> list[dict[str, Any]]:
    return [chat_line(f"q{index}", question) for index, question in enumerate(QUESTIONS[:count])]


def jsonl(lines: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()


class Client:
    """Synchronous calls to the fake through aiohttp (its FormData writes the uploads)."""

    def __init__(self, fake: FakeOpenAI, query: str = "") -> None:
        self.base_url = fake.base_url
        self.query = query

    def call(self, method: str, path: str, **kwargs: Any) -> tuple[int, bytes]:
        async def send() -> tuple[int, bytes]:
            async with (
                aiohttp.ClientSession() as session,
                session.request(method, self.base_url + path + self.query, **kwargs) as response,
            ):
                return response.status, await response.read()

        return asyncio.run(send())

    def json(self, method: str, path: str, expect: int = 200, **kwargs: Any) -> dict[str, Any]:
        status, raw = self.call(method, path, **kwargs)
        assert status == expect, raw
        reply: dict[str, Any] = json.loads(raw)
        return reply

    def upload(self, content: bytes, purpose: str = "batch", expect: int = 200) -> dict[str, Any]:
        form = aiohttp.FormData()
        form.add_field("purpose", purpose)
        form.add_field("file", content, filename="questions.jsonl", content_type="application/jsonl")
        return self.json("POST", "/files", expect, data=form)

    def create(self, lines: list[dict[str, Any]], endpoint: str = CHAT, **extra: Any) -> dict[str, Any]:
        file_id = self.upload(jsonl(lines))["id"]
        body = {"input_file_id": file_id, "endpoint": endpoint, "completion_window": "24h", **extra}
        return self.json("POST", "/batches", json=body)

    def poll(self, batch_id: str) -> dict[str, Any]:
        return self.json("GET", f"/batches/{batch_id}")

    def finish(self, batch_id: str) -> dict[str, Any]:
        for _ in range(20):
            batch = self.poll(batch_id)
            if batch["status"] in ("completed", "failed", "expired", "cancelled"):
                return batch
        raise AssertionError("the batch never finished")

    def lines(self, file_id: str | None) -> list[dict[str, Any]]:
        if file_id is None:
            return []
        status, raw = self.call("GET", f"/files/{file_id}/content")
        assert status == 200
        return [json.loads(line) for line in raw.decode().splitlines()]

    def real_time(self, line: dict[str, Any]) -> dict[str, Any]:
        return self.json("POST", line["url"].removeprefix("/v1"), json=line["body"])


def without_created(reply: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in reply.items() if key != "created"}


@pytest.mark.parametrize("endpoint", [CHAT, "/v1/completions"])
def test_a_batch_answers_each_line_as_a_real_time_request_would(endpoint: str) -> None:
    lines = chat_lines()
    if endpoint != CHAT:
        lines = [
            {
                **line,
                "url": endpoint,
                "body": {"model": "m", "prompt": line["body"]["messages"][-1]["content"]},
            }
            for line in lines
        ]
    with FakeOpenAI(answers={"乙题": "答案：B"}, openai_fields=True) as fake:
        client = Client(fake)
        batch = client.create(lines, endpoint, metadata={"run": "r1"})
        assert batch["status"] == "validating" and batch["metadata"] == {"run": "r1"}
        assert batch["request_counts"] == {"total": 6, "completed": 0, "failed": 0}
        statuses = [client.poll(batch["id"])["status"] for _ in range(3)]
        assert statuses == ["in_progress", "finalizing", "completed"]
        done = client.poll(batch["id"])  # a final batch stays as it is
        assert done["status"] == "completed" and done["error_file_id"] is None
        assert done["request_counts"] == {"total": 6, "completed": 6, "failed": 0}
        assert done["completed_at"] is not None and done["in_progress_at"] is not None
        output = client.lines(done["output_file_id"])
        assert fake.bodies == [] and fake.paths == []
        custom_ids = [record["custom_id"] for record in output]
        assert custom_ids != [line["custom_id"] for line in lines]
        assert sorted(custom_ids) == sorted(line["custom_id"] for line in lines)
        by_id = {record["custom_id"]: record for record in output}
        for line in lines:
            record = by_id[line["custom_id"]]
            assert record["id"].startswith("batch_req_") and record["error"] is None
            assert record["response"]["status_code"] == 200
            assert record["response"]["request_id"].startswith("req_")
            assert without_created(record["response"]["body"]) == without_created(client.real_time(line))
        choice = by_id["q1"]["response"]["body"]["choices"][0]
        assert (choice["message"]["content"] if endpoint == CHAT else choice["text"]) == "答案：B"
        assert fake.batch.succeeded == {line["custom_id"]: 1 for line in lines}
        assert fake.batch.created[0]["custom_ids"] == [line["custom_id"] for line in lines]
        assert fake.batch.created[0]["metadata"] == {"run": "r1"}
        assert (fake.batch.uploads, fake.batch.polls) == (1, 4)
        assert fake.batch.downloads == [done["output_file_id"]]
        batch_usages = fake.usages[: len(lines)]
        assert fake.batch.batch_usage == {
            "prompt_tokens": sum(usage["prompt_tokens"] for usage in batch_usages),
            "completion_tokens": sum(usage["completion_tokens"] for usage in batch_usages),
            "cached_tokens": 0,
        }


def test_the_output_order_is_a_seeded_shuffle() -> None:
    orders = []
    for _ in range(2):
        with FakeOpenAI() as fake:
            fake.batch.polls_to_finish = 0
            client = Client(fake)
            batch = client.create(chat_lines(2))
            assert batch["status"] == "completed"  # polls_to_finish 0: final at creation
            orders.append([record["custom_id"] for record in client.lines(batch["output_file_id"])])
    assert orders == [["q1", "q0"], ["q1", "q0"]]


def test_batch_answers_share_the_prefix_cache_and_report_its_tokens() -> None:
    with FakeOpenAI(prefix_cache=2) as fake:
        fake.batch.polls_to_finish = 1
        client = Client(fake)
        lines = [chat_line(f"q{index}", f"共同的很长的前缀，第{index}题") for index in range(3)]
        done = client.finish(client.create(lines)["id"])
        assert done["status"] == "completed"
        cached = [usage["prompt_tokens_details"]["cached_tokens"] for usage in fake.usages]
        assert cached[0] == 0 and cached[1] > 0
        assert fake.batch.batch_usage["cached_tokens"] == sum(cached)


@pytest.mark.parametrize("key", ["乙题", "q1"])  # a piece of the prompt, or the custom_id
def test_a_scripted_line_failure_goes_to_the_error_file_then_succeeds(key: str) -> None:
    with FakeOpenAI() as fake:
        fake.batch.fail_lines = {key: 1}
        client = Client(fake)
        done = client.finish(client.create(chat_lines(3))["id"])
        assert done["status"] == "completed"
        assert done["request_counts"] == {"total": 3, "completed": 2, "failed": 1}
        [failed] = client.lines(done["error_file_id"])
        assert failed["custom_id"] == "q1" and failed["error"] is None
        assert failed["response"]["status_code"] == 500
        assert failed["response"]["body"]["error"]["type"] == "server_error"
        assert sorted(record["custom_id"] for record in client.lines(done["output_file_id"])) == ["q0", "q2"]
        again = client.finish(client.create([chat_lines(3)[1]])["id"])
        assert again["error_file_id"] is None
        assert [record["custom_id"] for record in client.lines(again["output_file_id"])] == ["q1"]
        assert fake.batch.succeeded == {"q0": 1, "q1": 1, "q2": 1}


def test_a_line_the_real_time_route_refuses_goes_to_the_error_file() -> None:
    with FakeOpenAI(echo_support="refused") as fake:
        fake.batch.polls_to_finish = 0
        client = Client(fake)
        body = {"model": "m", "prompt": "题目", "echo": True, "logprobs": 1, "max_tokens": 0}
        line = {"custom_id": "e", "method": "POST", "url": "/v1/completions", "body": body}
        batch = client.create([line], "/v1/completions")
        assert batch["output_file_id"] is None
        [refused] = client.lines(batch["error_file_id"])
        assert refused["response"]["status_code"] == 400
        assert refused["response"]["body"] == client.json("POST", "/completions", 400, json=body)


def test_a_scripted_batch_failure_fails_validation() -> None:
    with FakeOpenAI() as fake:
        fake.batch.fail_batches = 1
        client = Client(fake)
        failed = client.create(chat_lines(2))
        assert failed["status"] == "failed" and failed["failed_at"] is not None
        assert [error["code"] for error in failed["errors"]["data"]] == ["scripted"]
        assert (failed["output_file_id"], failed["error_file_id"]) == (None, None)
        assert client.poll(failed["id"])["status"] == "failed"
        assert client.create(chat_lines(2))["status"] == "validating"
        assert [created["custom_ids"] for created in fake.batch.created] == [["q0", "q1"], ["q0", "q1"]]


def test_validation_names_each_bad_line() -> None:
    good = chat_line("a", "题")
    rows = [
        json.dumps(good),
        json.dumps(good),  # the same custom_id again
        json.dumps({**good, "custom_id": "b", "method": "GET"}),
        json.dumps({**good, "custom_id": "c", "url": "/v1/completions"}),
        json.dumps({**good, "custom_id": "d", "body": "text"}),
        json.dumps({**good, "custom_id": ""}),
        "{not json",
    ]
    with FakeOpenAI() as fake:
        client = Client(fake)
        file_id = client.upload(("\n".join(rows) + "\n").encode())["id"]
        body = {"input_file_id": file_id, "endpoint": CHAT, "completion_window": "24h"}
        failed = client.json("POST", "/batches", json=body)
        assert failed["status"] == "failed"
        found = [(error["line"], error["code"]) for error in failed["errors"]["data"]]
        assert found == [
            (2, "duplicate_custom_id"),
            (3, "invalid_method"),
            (4, "invalid_url"),
            (5, "invalid_body"),
            (6, "missing_custom_id"),
            (7, "invalid_json_line"),
        ]


@pytest.mark.parametrize(
    ("limit", "code"), [("max_lines", "too_many_requests"), ("max_bytes", "file_too_large")]
)
def test_a_file_over_the_limits_fails(limit: str, code: str) -> None:
    with FakeOpenAI() as fake:
        setattr(fake.batch, limit, 2)
        failed = Client(fake).create(chat_lines(3))
        assert failed["status"] == "failed"
        assert [error["code"] for error in failed["errors"]["data"]] == [code]


def test_an_expired_batch_returns_the_first_half_and_the_rest_as_errors() -> None:
    with FakeOpenAI() as fake:
        fake.batch.expire_batches = 1
        client = Client(fake)
        done = client.finish(client.create(chat_lines(5))["id"])
        assert done["status"] == "expired" and done["expired_at"] is not None
        assert done["request_counts"] == {"total": 5, "completed": 2, "failed": 3}
        assert sorted(record["custom_id"] for record in client.lines(done["output_file_id"])) == ["q0", "q1"]
        errors = client.lines(done["error_file_id"])
        assert [record["custom_id"] for record in errors] == ["q2", "q3", "q4"]
        assert all(record["response"] is None for record in errors)
        assert {record["error"]["code"] for record in errors} == {"batch_expired"}
        assert fake.batch.succeeded == {"q0": 1, "q1": 1}
        assert client.finish(client.create(chat_lines(1))["id"])["status"] == "completed"


def test_a_cancel_request_cancels_at_the_next_poll() -> None:
    with FakeOpenAI() as fake:
        client = Client(fake)
        batch = client.create(chat_lines(4))
        assert client.json("POST", f"/batches/{batch['id']}/cancel")["status"] == "cancelling"
        assert fake.batch.succeeded == {}
        done = client.poll(batch["id"])
        assert done["status"] == "cancelled" and done["cancelled_at"] is not None
        assert done["request_counts"] == {"total": 4, "completed": 2, "failed": 2}
        errors = client.lines(done["error_file_id"])
        assert {record["error"]["code"] for record in errors} == {"batch_cancelled"}
        assert fake.batch.cancels == [batch["id"]]
        client.json("POST", f"/batches/{batch['id']}/cancel", 400)  # a final batch stays as it is


def test_a_batch_cancelled_by_someone_else() -> None:
    with FakeOpenAI() as fake:
        fake.batch.cancel_batches = 1
        client = Client(fake)
        batch = client.create(chat_lines(2))
        assert [client.poll(batch["id"])["status"] for _ in range(2)] == ["cancelling", "cancelled"]
        assert fake.batch.cancels == []


def test_an_unreadable_output_file_then_the_real_one() -> None:
    with FakeOpenAI() as fake:
        fake.batch.unreadable_output = 1
        fake.batch.polls_to_finish = 0
        client = Client(fake)
        batch = client.create(chat_lines(4))
        status, broken = client.call("GET", f"/files/{batch['output_file_id']}/content")
        assert status == 200
        *whole, cut = broken.decode().split("\n")
        assert whole and cut
        with pytest.raises(json.JSONDecodeError):
            json.loads(cut)
        assert len(client.lines(batch["output_file_id"])) == 4
        assert fake.batch.downloads == [batch["output_file_id"]]


def test_content_errors_then_the_file() -> None:
    with FakeOpenAI() as fake:
        fake.batch.content_errors = 1
        client = Client(fake)
        file_id = client.upload(b"{}\n")["id"]
        assert client.call("GET", f"/files/{file_id}/content")[0] == 500
        assert client.call("GET", f"/files/{file_id}/content") == (200, b"{}\n")
        assert client.call("GET", "/files/file-none/content")[0] == 404


def test_listing_pages_newest_first() -> None:
    with FakeOpenAI() as fake:
        fake.batch.list_page = 2
        client = Client(fake, query="?api-key=K")  # a query string on every call is ignored
        ids = [client.create(chat_lines(1))["id"] for _ in range(5)]
        newest_first = ids[::-1]
        seen, after = [], None
        while True:
            listing = client.json("GET", "/batches", params={"after": after} if after else {})
            seen += [batch["id"] for batch in listing["data"]]
            assert listing["object"] == "list" and listing["first_id"] == listing["data"][0]["id"]
            if not listing["has_more"]:
                break
            after = listing["last_id"]
        assert seen == newest_first
        whole = client.json("GET", "/batches", params={"limit": "500"})
        assert [batch["id"] for batch in whole["data"]] == newest_first and not whole["has_more"]
        page = client.json("GET", "/batches", params={"limit": "3", "after": newest_first[0]})
        assert [batch["id"] for batch in page["data"]] == newest_first[1:4] and page["has_more"]
        assert fake.batch.polls == 0
        assert all(
            request.endswith("api-key=K") or "api-key=K&" in request for request in fake.batch.requests
        )


def test_an_empty_listing() -> None:
    with FakeOpenAI() as fake:
        listing = Client(fake).json("GET", "/batches")
        assert listing == {"object": "list", "data": [], "first_id": None, "last_id": None, "has_more": False}


@pytest.mark.parametrize(
    ("change", "ok"),
    [
        ({"metadata": {f"k{i}": "v" * 512 for i in range(16)}}, True),
        ({"metadata": None}, True),
        ({"metadata": {f"k{i}": "v" for i in range(17)}}, False),
        ({"metadata": {"k": "v" * 513}}, False),
        ({"metadata": {"k": 1}}, False),
        ({"metadata": ["k"]}, False),
        ({"endpoint": "/v1/embeddings"}, False),
        ({"completion_window": "1h"}, False),
        ({"input_file_id": "file-unknown"}, False),
    ],
)
def test_creating_a_batch_checks_its_request(change: dict[str, Any], ok: bool) -> None:
    with FakeOpenAI() as fake:
        client = Client(fake)
        file_id = client.upload(jsonl(chat_lines(1)))["id"]
        body = {"input_file_id": file_id, "endpoint": CHAT, "completion_window": "24h", **change}
        reply = client.json("POST", "/batches", 200 if ok else 400, json=body)
        assert ("error" not in reply) == ok
        assert len(fake.batch.created) == ok


def test_uploads_and_routes_are_checked() -> None:
    with FakeOpenAI() as fake:
        client = Client(fake)
        assert "error" in client.upload(b"{}\n", purpose="fine-tune", expect=400)
        uploaded = client.upload(b"{}\n")
        assert (
            uploaded["bytes"] == 3
            and uploaded["filename"] == "questions.jsonl"
            and uploaded["purpose"] == "batch"
        )
        assert client.json("GET", f"/files/{uploaded['id']}") == uploaded
        assert client.json("DELETE", f"/files/{uploaded['id']}")["deleted"] is True
        assert client.call("GET", f"/files/{uploaded['id']}/content")[0] == 404
        assert client.call("GET", "/batches/batch_none")[0] == 404
        assert client.call("GET", "/batches/x/y/z")[0] == 404
        assert client.call("PUT", "/batches")[0] == 405
        assert fake.batch.uploads == 1
        assert client.json("POST", "/chat/completions", json=chat_line("a", "题")["body"])["choices"]
        assert len(fake.bodies) == 1  # the real-time route is as it was


def test_batch_requests_count_toward_max_requests() -> None:
    with FakeOpenAI(max_requests=2) as fake:
        client = Client(fake)
        client.json("GET", "/batches")
        client.json("GET", "/batches")
        with pytest.raises(aiohttp.ClientError):
            client.call("GET", "/batches")
