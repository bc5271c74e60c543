"""kaoshi against its peers on the API path: the same questions, the same loopback server, side by side.

    .venv/bin/python speed/http_peers.py [--quick] [--no-llamacpp]

(a) The fake server (tests/support/fake_openai.py in its own process; a fixed 50 ms a request, whatever
the request holds), concurrency 32 for every tool:
- log-likelihood of plain prompts: kaoshi's openai backend (/v1/completions with echo, a question's
  candidates as one list prompt) against lm-evaluation-harness's `local-completions` at several
  settings. The fake tokenizes echo requests with SmolLM2's tokenizer (saved from the GGUF under
  speed/work/), so lm-eval, which counts the context's tokens with it, reads the values kaoshi places
  by text, and may send token ids.
- generation from chat messages: kaoshi (/v1/chat/completions) against lm-eval's
  `local-chat-completions` and EvalScope's OpenAI-API service mode on a local `general_mcq` dataset
  (EvalScope has no log-likelihood over HTTP: its OpenAI client calls chat.completions only).
(b) llama-cpp-python's server on the real GGUF: a few questions' log-likelihood, kaoshi against lm-eval.

Each peer runs in its own venv (speed/.venv-lmeval, speed/.venv-evalscope; installed when missing,
torch==2.13.0 first) through speed/http_peers_worker.py; lm-eval's LM classes get exactly the
(context, continuation) pairs and chat messages kaoshi sends. Model, tokenizer and venv start-up are
outside every clock. Prints the table and writes it, with the settings, to speed/work/http_peers.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / "work"
sys.path.insert(0, str(HERE))

from ceval_data import GENERATORS, write_ceval  # noqa: E402

LATENCY_S = 0.050
CONCURRENCY = 32
LLAMACPP_CONCURRENCY = 2
PROMPTS_PER_REQUEST = 32  # kaoshi's default --prompts-per-request
MODEL = "smollm2"
TOKENIZER = WORK / "smollm2-tokenizer"
LMEVAL_VENV = HERE / ".venv-lmeval"
EVALSCOPE_VENV = HERE / ".venv-evalscope"
WORKER = HERE / "http_peers_worker.py"
# lm-eval's log-likelihood settings: prompts a request (batch_size), token ids or text (tokenized_requests)
LMEVAL_LOGLIK = [(1, True), (1, False), (4, True), (4, False), (32, True), (32, False), (64, True)]
LMEVAL_LOGLIK_QUICK = [(1, True), (4, True), (32, True)]
Counts = tuple[int | None, int | None]  # requests and prompts, as the server counted them


@dataclass
class Row:
    server: str
    method: str
    tool: str
    setting: str
    questions: int
    seconds: float  # 0: not run (the note says why)
    requests: int | None = None
    prompts: int | None = None
    same_answers: int | None = None  # questions answered as kaoshi's backend answers them
    compared: int | None = None
    max_logprob_diff: float | None = None
    note: str = ""

    @property
    def per_second(self) -> float:
        return self.questions / self.seconds if self.seconds else 0.0


@dataclass
class Section:
    """The rows of one server and method, all on the same questions."""

    server: str
    method: str
    questions: int
    rows: list[Row] = field(default_factory=list)

    def add(
        self,
        tool: str,
        setting: str,
        seconds: float,
        counts: Counts | None = None,
        same: int | None = None,
        diff: float | None = None,
        note: str = "",
    ) -> None:
        compared = self.questions if same is not None else None
        requests, prompts = counts or (None, None)
        row = Row(self.server, self.method, tool, setting, self.questions, seconds, requests, prompts)
        row.same_answers, row.compared, row.max_logprob_diff, row.note = same, compared, diff, note
        self.rows.append(row)
        print(f"  {tool} ({setting}): " + (f"{row.per_second:.3g} q/s" if seconds else note), flush=True)


@dataclass
class Questions:
    """The exam and, per question, what kaoshi sends: the plain prompt for log-likelihood, the chat
    messages for generation, and the candidates."""

    exam: Any
    data: Path
    plain: dict[str, str] = field(default_factory=dict)
    chats: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    candidates: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class Peers:
    """Each peer's interpreter, or why it cannot run."""

    lmeval: Path | str
    evalscope: Path | str


# -- set-up -----------------------------------------------------------------------------------------------
def ensure_venv(venv: Path, packages: Sequence[str], check: str) -> Path | str:
    """The venv's python, after installing `packages` (torch==2.13.0 first) when `check` fails there;
    or a line saying why it could not be installed."""
    python = venv / "bin" / "python"
    if python.exists() and subprocess.run([python, "-c", check], capture_output=True).returncode == 0:
        return python
    print("installing", " ".join(packages), "into", venv, flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        pip = [python, "-m", "pip", "install", "-q"]
        subprocess.run([*pip, "torch==2.13.0"], check=True)  # pinned first: never a CUDA torch
        subprocess.run([*pip, *packages], check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as exc:
        return f"not run: installing {' '.join(packages)} failed: {(exc.stderr or str(exc))[-300:]}"
    return python


def export_tokenizer() -> None:
    """SmolLM2's tokenizer, read from the GGUF by transformers, saved where lm-eval loads it offline."""
    if (TOKENIZER / "tokenizer.json").exists():
        return
    from transformers import AutoTokenizer

    from kaoshi.models.hf_load import smollm2_path

    gguf = smollm2_path()
    AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(TOKENIZER)


def load_questions(root: Path, per_subject: int, subjects: Sequence[str]) -> Questions:
    """Our generated C-Eval-layout questions (val split), rendered as kaoshi renders them, 0-shot."""
    import kaoshi
    from kaoshi.models.chat import as_dicts
    from kaoshi.prompts.candidates import answer_candidates

    data = write_ceval(root, dict.fromkeys(subjects, per_subject))
    exam = kaoshi.load_exam("ceval", data, "val")
    questions = Questions(exam, data)
    for question in exam.questions:
        plain = kaoshi.render_prompt(exam, question.id, shots=0, chat=False).prompt
        chat = kaoshi.render_prompt(exam, question.id, shots=0, chat=True).prompt
        assert chat.messages is not None
        questions.plain[question.id] = plain.text
        questions.chats[question.id] = as_dicts(chat.messages)
        questions.candidates[question.id] = answer_candidates(question)
    return questions


# -- servers ----------------------------------------------------------------------------------------------
@contextlib.contextmanager
def fake_server() -> Iterator[str]:
    """The fake in its own process (`serve_fake`), so that it does not share the client's interpreter."""
    from api_throughput import server_process

    with server_process([sys.executable, str(Path(__file__)), "--serve-fake"]) as base_url:
        yield base_url


def serve_fake() -> None:
    """tests/support/fake_openai.py with SmolLM2's tokenizer for echo requests (`tokenizer_echo`),
    OpenAI's reply fields, a /stats route counting requests and prompts, and each prompt's echo choice
    kept once made. Making an echo reply costs the server far more CPU than a client spends reading it
    (~7 ms a 4-prompt reply, mostly the repr of its ~1,300 floats), and here it shares two cores with
    the client: so the raw client's first pass over the questions fills the table, and every tool after
    it gets the same bytes for the price of a lookup (by text or by token ids); a prompt not seen before
    is made as the fake makes it."""
    sys.path.insert(0, str(ROOT))
    from tests.support.fake_openai import TOY_GENERATED, FakeOpenAI, tokenizer_echo
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(TOKENIZER)
    made: dict[str | tuple[int, ...], tuple[bytes, int]] = {}  # prompt or its ids -> (choice JSON, tokens)
    counts = {"requests": 0, "prompts": 0}

    def echo_choice(prompt: str | list[int]) -> tuple[bytes, int]:
        key = prompt if isinstance(prompt, str) else tuple(prompt)
        if key not in made:
            text, logprobs = tokenizer_echo(prompt, tokenizer, generate=True)
            choice = {"finish_reason": "length", "text": text + TOY_GENERATED, "logprobs": logprobs}
            made[key] = json.dumps(choice, ensure_ascii=False)[1:].encode(), len(logprobs["tokens"]) - 1
            ids = tokenizer.backend_tokenizer.encode(text, add_special_tokens=False).ids
            made[tuple(ids)] = made[key]
        return made[key]

    class Fake(FakeOpenAI):
        async def _respond(self, request_line: str, headers: dict[str, str], raw: bytes) -> Any:
            if request_line.split()[1].endswith("/stats"):
                return 200, {}, json.dumps(counts).encode()
            body = json.loads(raw)
            prompt = body.get("prompt")
            listed = isinstance(prompt, list) and bool(prompt) and not isinstance(prompt[0], int)
            prompts = prompt if listed else [prompt]
            counts["requests"] += 1
            counts["prompts"] += len(prompts)
            if not body.get("echo") or body.get("max_tokens") != 1:
                return await super()._respond(request_line, headers, raw)
            await asyncio.sleep(self.latency_s)
            choices = [echo_choice(p) for p in prompts]
            joined = b",".join(b'{"index":%d,%s' % (i, choice) for i, (choice, _) in enumerate(choices))
            usage = {"prompt_tokens": sum(n for _, n in choices), "completion_tokens": len(choices)}
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            head = {"id": "x", "object": "text_completion", "model": body.get("model"), "usage": usage}
            return 200, {}, json.dumps(head).encode()[:-1] + b', "choices": [' + joined + b"]}"

    options = {"tokenizer": tokenizer, "openai_fields": True, "max_requests": None, "max_seconds": None}
    with Fake(latency_s=LATENCY_S, **options) as server:
        print(server.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)


def server_counts(base_url: str) -> tuple[int, int]:
    with urllib.request.urlopen(f"{base_url}/stats", timeout=10) as reply:
        counts = json.loads(reply.read())
    return counts["requests"], counts["prompts"]


@contextlib.contextmanager
def llamacpp_server(log: Path) -> Iterator[str]:
    from kaoshi.models.hf_load import smollm2_path

    sys.path.insert(0, str(ROOT))
    from tests.support.llama_server import llama_server

    with llama_server(smollm2_path(), log, "--n_ctx", "1024") as base_url:
        yield base_url


# -- a client that only sends and reads: the most any client can get from the server here ---------------
async def _raw_client(host: str, port: int, path: str, bodies: list[bytes]) -> None:
    pending = iter(bodies)

    async def connection() -> None:
        reader, writer = await asyncio.open_connection(host, port)
        head = f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        for body in pending:
            writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
            await reader.readline()
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            await reader.readexactly(length)
        writer.close()

    await asyncio.gather(*(connection() for _ in range(CONCURRENCY)))


def raw_seconds(base_url: str, path: str, bodies: list[bytes]) -> float:
    """Seconds for CONCURRENCY keep-alive connections to send `bodies` and read the replies unparsed."""
    host, port = base_url.split("//")[1].split("/")[0].split(":")
    started = time.perf_counter()
    asyncio.run(_raw_client(host, int(port), f"/v1{path}", bodies))
    return time.perf_counter() - started


def kaoshi_bodies(
    questions: Questions, method: str, max_new_tokens: int, prompts_per_request: int = PROMPTS_PER_REQUEST
) -> list[bytes]:
    """The bodies kaoshi sends (openai_loglik.py's for log-likelihood: consecutive questions' prompts
    while they fit `prompts_per_request`; openai_api.py's for chat)."""
    if method != "loglik":
        chats = questions.chats.values()
        return [
            json.dumps(
                {"model": MODEL, "messages": chat, "max_tokens": max_new_tokens, "temperature": 0, "seed": 0}
            ).encode()
            for chat in chats
        ]
    packs: list[list[str]] = []
    for q, context in questions.plain.items():
        prompts = [context + candidate for candidate in questions.candidates[q]]
        if not packs or len(packs[-1]) + len(prompts) > prompts_per_request:
            packs.append([])
        packs[-1] += prompts
    body = dict(max_tokens=1, temperature=0, logprobs=0, echo=True, seed=0)
    return [json.dumps({"model": MODEL, "prompt": pack, **body}).encode() for pack in packs]


# -- kaoshi -----------------------------------------------------------------------------------------------
Sender = Callable[[list[Any]], Any]


def timed(url: str, send: Sender, requests: list[Any], warmup: int, counted: bool = True) -> tuple[Any, ...]:
    """Send `requests` after `warmup` of them untimed: seconds, the server's counts, the outputs."""
    list(send(requests[:warmup]))
    before = server_counts(url) if counted else None
    started = time.perf_counter()
    outputs = list(send(requests))
    seconds = time.perf_counter() - started
    errors = [output.error for output in outputs if output.error]
    assert not errors, errors[:3]
    if before is None:
        return seconds, (None, None), outputs
    after = server_counts(url)
    return seconds, (after[0] - before[0], after[1] - before[1]), outputs


def kaoshi_model(base_url: str, concurrency: int, prompts_per_request: int = PROMPTS_PER_REQUEST) -> Any:
    from kaoshi.models import ModelOptions, resolve_model

    options = ModelOptions(
        base_url=base_url, concurrency=concurrency, prompts_per_request=prompts_per_request
    )
    return resolve_model(f"openai:{MODEL}", options)


def kaoshi_loglik(
    questions: Questions,
    url: str,
    concurrency: int,
    warmup: int,
    counted: bool = True,
    prompts_per_request: int = PROMPTS_PER_REQUEST,
) -> Any:
    """The backend alone, its `loglikelihood` on the requests kaoshi's runner builds: seconds, the
    server's counts and each question's scores."""
    from kaoshi.models import LoglikRequest

    model = kaoshi_model(url, concurrency, prompts_per_request)
    candidates = questions.candidates
    requests = [LoglikRequest(q, text, candidates[q], answer_end="") for q, text in questions.plain.items()]
    seconds, counts, outputs = timed(url, model.loglikelihood, requests, warmup, counted)
    return seconds, counts, {output.id: dict(output.logprobs or {}) for output in outputs}


def kaoshi_generate(questions: Questions, url: str, max_new_tokens: int) -> Any:
    """The backend alone, its `generate` on the requests kaoshi's runner builds (chat form): seconds,
    the server's counts and each question's text."""
    from kaoshi.models import GenerateRequest

    model = kaoshi_model(url, CONCURRENCY)
    requests = []
    for q, chat in questions.chats.items():
        messages = tuple((m["role"], m["content"]) for m in chat)
        text = json.dumps(chat, ensure_ascii=False)
        requests.append(GenerateRequest(q, text, questions.candidates[q], max_new_tokens, messages=messages))
    seconds, counts, outputs = timed(url, model.generate, requests, CONCURRENCY * 2)
    return seconds, counts, {output.id: output.text or "" for output in outputs}


def kaoshi_evaluate(questions: Questions, base_url: str, method: str) -> tuple[float, Counts, Any]:
    """All of `kaoshi.evaluate`: prompts, the backend, scoring, an in-memory store."""
    import kaoshi

    chat = method == "generate"
    before = server_counts(base_url)
    started = time.perf_counter()
    options = dict(method=method, chat=chat, shots=0, base_url=base_url, concurrency=CONCURRENCY)
    result = kaoshi.evaluate(questions.exam, model=f"openai:{MODEL}", **options)
    seconds = time.perf_counter() - started
    after = server_counts(base_url)
    assert result.errors == 0, [s.error for s in result.samples if s.error][:3]
    for sample in result.samples:  # what it sent is what every tool here is given
        sent = json.loads(sample.prompt) if chat else sample.prompt
        assert sent == (questions.chats if chat else questions.plain)[sample.question_id], sample.question_id
    return seconds, (after[0] - before[0], after[1] - before[1]), result


def answer_text(answer: Any) -> str:
    return "".join(sorted(answer)) if isinstance(answer, (set, frozenset, tuple, list)) else str(answer)


def best(scores: dict[str, float]) -> str:
    """The highest-scoring candidate, the first one on a tie."""
    return max(scores, key=lambda candidate: scores[candidate])


Scores = dict[str, dict[str, float]]  # question -> candidate -> log-probability


def compare_scores(ours: Scores, theirs: Scores) -> tuple[int, float]:
    """How many questions get the same best candidate, and the largest difference of one score."""
    same = sum(best(ours[q]) == best(theirs[q]) for q in ours)
    return same, max(abs(ours[q][c] - theirs[q][c]) for q in ours for c in ours[q])


# -- peers ------------------------------------------------------------------------------------------------
def run_worker(python: Path, tool: str, job: dict[str, Any]) -> dict[str, Any]:
    job_path, out = WORK / f"http-peers-{tool}-job.json", WORK / f"http-peers-{tool}.json"
    job_path.write_text(json.dumps(job, ensure_ascii=False), encoding="utf-8")
    out.unlink(missing_ok=True)
    command = [str(python), str(WORKER), tool, str(job_path), str(out)]
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""})
    if result.returncode != 0:
        lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
        raise RuntimeError(" | ".join(lines[-3:])[-600:])
    record: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return record


def described(config: dict[str, Any]) -> str:
    return ", ".join(f"{key}={value}" for key, value in config.items())


def lmeval_loglik(
    section: Section,
    questions: Questions,
    url: str,
    python: Path | str,
    ours: Scores,
    configs: Sequence[dict[str, Any]],
    warmup: int,
) -> None:
    """lm-eval's local-completions `loglikelihood` on kaoshi's (context, continuation) pairs."""
    if isinstance(python, str):
        section.add("lm-eval", "local-completions", 0.0, note=python)
        return
    pairs = [[q, context, c] for q, context in questions.plain.items() for c in questions.candidates[q]]
    job = dict(base_url=url, model=MODEL, tokenizer=str(TOKENIZER), pairs=pairs, warmup=warmup)
    for config in configs:
        try:
            run = run_worker(python, "lmeval-loglik", {**job, "configs": [config]})["runs"][0]
        except RuntimeError as exc:
            section.add("lm-eval", described(config), 0.0, note=f"failed: {exc}")
            continue
        same, diff = compare_scores(ours, run["logprobs"])
        zeros = sum(value == 0.0 for scores in run["logprobs"].values() for value in scores.values())
        note = f"{zeros} of its {len(pairs)} scores are 0.0" if zeros else ""
        section.add("lm-eval", described(config), run["seconds"], run["counts"], same, diff, note)


def lmeval_generate(
    section: Section,
    questions: Questions,
    url: str,
    python: Path | str,
    texts: dict[str, str],
    max_new_tokens: int,
) -> None:
    """lm-eval's local-chat-completions `generate_until` on kaoshi's chat messages."""
    config = {"num_concurrent": CONCURRENCY}
    if isinstance(python, str):
        section.add("lm-eval", "local-chat-completions", 0.0, note=python)
        return
    chats = [[q, chat] for q, chat in questions.chats.items()]
    job = dict(base_url=url, model=MODEL, chats=chats, max_gen_toks=max_new_tokens, warmup=CONCURRENCY * 2)
    try:
        run = run_worker(python, "lmeval-generate", {**job, "configs": [config]})["runs"][0]
    except RuntimeError as exc:
        section.add("lm-eval", described(config), 0.0, note=f"failed: {exc}")
        return
    same = sum(run["texts"].get(q) == text for q, text in texts.items())
    note = "same text as kaoshi's; batch_size is always 1 for chat (lm-eval's rule)"
    section.add("lm-eval", described(config), run["seconds"], run["counts"], same, note=note)


def evalscope_generate(
    section: Section,
    questions: Questions,
    url: str,
    python: Path | str,
    letters: dict[str, str],
    max_new_tokens: int,
) -> None:
    """EvalScope's general_mcq on our CSVs (one folder, a subset per subject), with its own prompt."""
    setting = f"eval_batch_size={CONCURRENCY} threads, general_mcq, its own prompt"
    if isinstance(python, str):
        section.add("EvalScope", setting, 0.0, note=python)
        return
    data, work_dir = WORK / "http-peers-evalscope-data", WORK / "http-peers-evalscope-run"
    for folder in (data, work_dir):
        shutil.rmtree(folder, ignore_errors=True)
    data.mkdir(parents=True)
    subjects = sorted({q.split("/")[0] for q in questions.plain})
    for subject, split in ((subject, split) for subject in subjects for split in ("dev", "val")):
        shutil.copy(questions.data / split / f"{subject}_{split}.csv", data / f"{subject}_{split}.csv")
    job = dict(base_url=url, model=MODEL, data=str(data), subsets=subjects, work_dir=str(work_dir))
    job.update(concurrency=CONCURRENCY, max_tokens=max_new_tokens)
    try:
        run = run_worker(python, "evalscope", job)
    except RuntimeError as exc:
        section.add("EvalScope", setting, 0.0, note=f"not run: {exc}")
        return
    same = sum(run["answers"].get(q) == letter for q, letter in letters.items())
    note = f"same letter as kaoshi.evaluate's; its sample pool, of run_task's {run['seconds']:.1f} s"
    section.add("EvalScope", setting, run["pool_seconds"], run["counts"], same, note=note)


# -- the two servers --------------------------------------------------------------------------------------
RAW = "kaoshi's bodies; replies read, not parsed: the most a client gets here"
BACKEND = f"openai backend, concurrency={CONCURRENCY}"  # its defaults otherwise
EVALUATE = "kaoshi.evaluate, in-memory store"


def fake_rows(questions: Questions, peers: Peers, lmeval_settings: Sequence[tuple[int, bool]]) -> list[Row]:
    n = len(questions.plain)
    loglik, generate = Section("fake", "loglik", n), Section("fake", "generate", n)
    with fake_server() as url:
        print("log-likelihood on the fake server", flush=True)
        prompts = sum(map(len, questions.candidates.values()))
        one_each = kaoshi_bodies(questions, "loglik", 0, prompts_per_request=4)
        packed = kaoshi_bodies(questions, "loglik", 0)
        for setting, bodies, note in (
            ("each reply made when asked", one_each, RAW + "; fills the server's table"),
            ("replies from the table, one question a request", one_each, RAW),
            (f"replies from the table, {PROMPTS_PER_REQUEST} prompts a request", packed, RAW),
        ):
            seconds = raw_seconds(url, "/completions", bodies)
            loglik.add("raw client", setting, seconds, (len(bodies), prompts), note=note)
        seconds, counts, ours = kaoshi_loglik(questions, url, CONCURRENCY, CONCURRENCY * 2)
        loglik.add("kaoshi", BACKEND, seconds, counts, n, 0.0)
        seconds, counts, alone = kaoshi_loglik(
            questions, url, CONCURRENCY, CONCURRENCY * 2, prompts_per_request=4
        )
        setting = f"{BACKEND}, prompts_per_request=4 (one question a request)"
        loglik.add("kaoshi", setting, seconds, counts, *compare_scores(ours, alone))
        seconds, counts, result = kaoshi_evaluate(questions, url, "loglik")
        evaluated = {s.question_id: dict(s.logprobs or {}) for s in result.samples}
        loglik.add("kaoshi", EVALUATE, seconds, counts, *compare_scores(ours, evaluated))
        configs = [
            dict(num_concurrent=CONCURRENCY, batch_size=size, tokenized_requests=tokenized)
            for size, tokenized in lmeval_settings
        ]
        lmeval_loglik(loglik, questions, url, peers.lmeval, ours, configs, CONCURRENCY * 8)

        print("generation on the fake server", flush=True)
        evaluate_seconds, evaluate_counts, result = kaoshi_evaluate(questions, url, "generate")
        from kaoshi.runner.samples import new_tokens

        max_new_tokens = new_tokens(result.spec, "single")
        bodies = kaoshi_bodies(questions, "generate", max_new_tokens)
        generate.add("raw client", "", raw_seconds(url, "/chat/completions", bodies), (n, n), note=RAW)
        seconds, counts, texts = kaoshi_generate(questions, url, max_new_tokens)
        generate.add("kaoshi", BACKEND, seconds, counts, n)
        same = sum(s.response == texts[s.question_id] for s in result.samples)
        generate.add("kaoshi", EVALUATE, evaluate_seconds, evaluate_counts, same, note="same text")
        lmeval_generate(generate, questions, url, peers.lmeval, texts, max_new_tokens)
        letters = {s.question_id: answer_text(s.answer) for s in result.samples}
        evalscope_generate(generate, questions, url, peers.evalscope, letters, max_new_tokens)
    return loglik.rows + generate.rows


def llamacpp_rows(questions: Questions, peers: Peers) -> list[Row]:
    """A few questions' log-likelihood through llama-cpp-python's server. It refuses list prompts, so
    kaoshi sends one prompt a request once its first question has found out; it takes no token ids, so
    lm-eval sends text, one prompt a request."""
    loglik = Section("llama.cpp", "loglik", len(questions.plain))
    print("log-likelihood on llama-cpp-python's server", flush=True)
    with llamacpp_server(WORK / "http-peers-llamacpp.log") as url:
        seconds, _, ours = kaoshi_loglik(questions, url, LLAMACPP_CONCURRENCY, 0, counted=False)
        note = "includes finding out that the server refuses a list"
        setting = f"openai backend, concurrency={LLAMACPP_CONCURRENCY}"
        loglik.add("kaoshi", setting, seconds, None, len(questions.plain), 0.0, note=note)
        config = dict(num_concurrent=LLAMACPP_CONCURRENCY, batch_size=1, tokenized_requests=False)
        lmeval_loglik(loglik, questions, url, peers.lmeval, ours, [config], 0)
    return loglik.rows


# -- the table --------------------------------------------------------------------------------------------
COLUMNS = [  # heading: field, format
    "server:server:",
    "method:method:",
    "tool:tool:",
    "setting:setting:",
    "questions:questions:d",
    "requests:requests:d",
    "prompts/request:prompts_per_request:.1f",
    "s:seconds:.2f",
    "q/s:questions_per_s:.3g",
    "req/s:requests_per_s:.3g",
    "q/s ÷ ideal:of_ideal_questions:.2f",
    "req/s ÷ ideal:of_ideal_requests:.2f",
    "kaoshi ÷ this:kaoshi_over_this:.2f",
    "same answers:same:",
    "max \\|Δ log p\\|:max_logprob_diff:.1e",
    "note:note:",
]


def table(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Each row with its rates, its ratios to the ideal (fake server: concurrency / latency, in requests
    and in questions at one request each) and kaoshi's backend's rate over its own."""
    ideal = CONCURRENCY / LATENCY_S
    kaoshi: dict[tuple[str, str], float] = {}
    for r in rows:  # the first backend row of each section: kaoshi at its defaults
        if r.tool == "kaoshi" and r.setting.startswith("openai backend"):
            kaoshi.setdefault((r.server, r.method), r.per_second)
    records = []
    for row in rows:
        record: dict[str, Any] = asdict(row)
        ran, fake = row.seconds > 0, row.server == "fake" and row.seconds > 0
        requests_per_s = row.requests / row.seconds if ran and row.requests else None
        record.update(
            seconds=row.seconds if ran else None,
            questions_per_s=row.per_second if ran else None,
            requests_per_s=requests_per_s,
            prompts_per_request=row.prompts / row.requests if row.requests and row.prompts else None,
            of_ideal_questions=row.per_second / ideal if fake else None,
            of_ideal_requests=requests_per_s / ideal if fake and requests_per_s else None,
            kaoshi_over_this=kaoshi[row.server, row.method] / row.per_second if ran else None,
            same=f"{row.same_answers}/{row.compared}" if row.same_answers is not None else None,
        )
        records.append(record)
    return records


def render(records: Sequence[dict[str, Any]]) -> str:
    """A Markdown table."""
    columns = [column.split(":") for column in COLUMNS]
    lines = ["| " + " | ".join(heading for heading, _, _ in columns) + " |", "|" + "---|" * len(columns)]
    for record in records:
        cells = ["—" if record[key] is None else format(record[key], form) for _, key, form in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def version(python: Path | str, package: str) -> str:
    if isinstance(python, str):
        return "not installed"
    code = f"import importlib.metadata as m; print(m.version({package!r}))"
    return subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.strip()


def load_average() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    quick = "200 questions, 3 lm-eval settings, 1 on llama.cpp"
    parser.add_argument("--quick", action="store_true", help=quick)
    parser.add_argument("--no-llamacpp", action="store_true", help="skip llama-cpp-python's server")
    parser.add_argument("--serve-fake", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_fake:
        serve_fake()
        return
    started = time.perf_counter()
    WORK.mkdir(exist_ok=True)
    export_tokenizer()
    lmeval = ensure_venv(LMEVAL_VENV, ["lm_eval[api]", "transformers", "gguf"], "import lm_eval, tenacity")
    peers = Peers(lmeval, ensure_venv(EVALSCOPE_VENV, ["evalscope"], "import evalscope"))
    questions = load_questions(WORK / "http-peers-ceval", 40 if args.quick else 320, list(GENERATORS))
    before = load_average()
    print(f"{len(questions.plain)} questions; load average before: {before}", flush=True)
    rows = fake_rows(questions, peers, LMEVAL_LOGLIK_QUICK if args.quick else LMEVAL_LOGLIK)
    if not args.no_llamacpp:
        few = load_questions(WORK / "http-peers-llamacpp", 1, list(GENERATORS)[: 1 if args.quick else 4])
        rows += llamacpp_rows(few, peers)
    records = table(rows)
    text = render(records)
    settings = {
        "command": " ".join(["speed/http_peers.py", *sys.argv[1:]]),
        "latency_s": LATENCY_S,
        "concurrency": CONCURRENCY,
        "ideal_requests_per_s": CONCURRENCY / LATENCY_S,
        "llamacpp_concurrency": LLAMACPP_CONCURRENCY,
        "questions": len(questions.plain),
        "shots": 0,
        "versions": {
            "python": platform.python_version(),
            "kaoshi": version(Path(sys.executable), "kaoshi"),
            "aiohttp": version(Path(sys.executable), "aiohttp"),
            "lm_eval": version(peers.lmeval, "lm_eval"),
            "evalscope": version(peers.evalscope, "evalscope"),
            "llama_cpp_python": version(Path(sys.executable), "llama_cpp_python"),
        },
        "cpu_cores": os.cpu_count(),
        "load_average_before": before,
        "load_average_after": load_average(),
        "seconds_in_all": time.perf_counter() - started,
    }
    out = WORK / "http_peers.json"
    document = {"settings": settings, "rows": records, "table": text}
    out.write_text(json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"\n{text}\n\nideal: {CONCURRENCY} / {LATENCY_S:g} s = {CONCURRENCY / LATENCY_S:.0f} requests/s")
    print(f"load average before {before}, after {settings['load_average_after']}")
    print(f"{settings['seconds_in_all']:.0f} s in all; written to {out}")


if __name__ == "__main__":
    main()
