"""What the shape of a log-likelihood request costs a `vllm serve`: the same packed C-Eval-layout prompts
(context + candidate, 32 a request, concurrency 64, as kaoshi's openai backend packs them) sent with
each body below, timed, with the reply bytes counted and the scores and token strings checked against
the echo reply's. Run by speed/vllm_gpu.py as phase `shapes` (it starts the server); writes
DIR/phase-shapes.json.

Bodies:
- echo-lp1: `echo`, `logprobs: 1` (kaoshi's and lm-eval's local-completions request today);
- echo-lp0: `echo`, `logprobs: 0` (no top alternative per position);
- echo-lp1-plp0: `echo`, `logprobs: 1`, `prompt_logprobs: 0`;
- plp0: `prompt_logprobs: 0` alone, no echo (vLLM's own field: no `logprobs` object, no offsets);
- plp0-ids: `prompt_logprobs: 0` and `return_token_ids`.

Checks per body against echo-lp1, prompt by prompt: the summed log-probability of every prompt token
(same within 1e-4), and, for the bodies without echo, whether the `decoded_token` strings put end to end
give back the prompt (what locating a candidate by those strings would need).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

SHAPES: dict[str, dict[str, Any]] = {
    "echo-lp1": {"echo": True, "logprobs": 1},
    "echo-lp0": {"echo": True, "logprobs": 0},
    "echo-lp1-plp0": {"echo": True, "logprobs": 1, "prompt_logprobs": 0},
    "plp0": {"prompt_logprobs": 0},
    "plp0-ids": {"prompt_logprobs": 0, "return_token_ids": True},
}


def packed_prompts(exam: Any, questions: int, shots: int, per_request: int) -> list[list[str]]:
    """The first `questions` questions' candidate prompts, consecutive questions packed while they fit."""
    import kaoshi
    from kaoshi.prompts.candidates import answer_candidates

    packs: list[list[str]] = []
    for question in exam.questions[:questions]:
        context = kaoshi.render_prompt(exam, question.id, shots=shots, chat=False).prompt.text
        prompts = [context + candidate for candidate in answer_candidates(question)]
        if not packs or len(packs[-1]) + len(prompts) > per_request:
            packs.append([])
        packs[-1] += prompts
    return packs


async def _send(url: str, bodies: list[bytes], concurrency: int) -> tuple[list[Any], int]:
    import aiohttp

    replies: list[Any] = [None] * len(bodies)
    size = 0
    pending = iter(enumerate(bodies))
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600)) as session:

        async def worker() -> None:
            nonlocal size
            for index, body in pending:
                async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as r:
                    raw = await r.read()
                    size += len(raw)
                    replies[index] = (
                        json.loads(raw)
                        if r.status == 200
                        else {"status": r.status, "body": raw[:500].decode(errors="replace")}
                    )

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return replies, size


def _per_prompt(reply: dict[str, Any]) -> list[tuple[float | None, list[str] | None]]:
    """For each choice in prompt order: the summed prompt log-probability, and the prompt's token
    strings where they come from `prompt_logprobs` (None from an echo's `logprobs`)."""
    out: list[tuple[float | None, list[str] | None]] = []
    for choice in sorted(reply.get("choices") or [], key=lambda c: c.get("index", 0)):
        values = (choice.get("logprobs") or {}).get("token_logprobs")
        if values:  # echo with max_tokens 1: the last position is the generated token
            out.append((sum(v for v in values[:-1] if v is not None), None))
            continue
        total: float | None = 0.0
        strings: list[str] = []
        ids = choice.get("prompt_token_ids")
        for position, entry in enumerate(choice.get("prompt_logprobs") or []):
            if entry is None:  # the first position has no log-probability
                strings.append("")
                continue
            chosen = entry.get(str(ids[position])) if ids else None
            if chosen is None and len(entry) == 1:  # prompt_logprobs 0: the prompt's own token alone
                chosen = next(iter(entry.values()))
            if chosen is None:
                total = None
                break
            total += chosen["logprob"]
            strings.append(chosen.get("decoded_token") or "")
        out.append((total, strings))
    return out


def run(url: str, exam: Any, questions: int, shots: int, model: str, concurrency: int = 64) -> dict[str, Any]:
    packs = packed_prompts(exam, questions, shots, 32)
    record: dict[str, Any] = {"questions": questions, "requests": len(packs), "prompts": sum(map(len, packs))}
    reference: list[tuple[float | None, list[str] | None]] | None = None
    flat_prompts = [prompt for pack in packs for prompt in pack]
    for name, shape in SHAPES.items():
        bodies = [
            json.dumps({"model": model, "prompt": pack, "max_tokens": 1, "temperature": 0, **shape}).encode()
            for pack in packs
        ]
        try:
            asyncio.run(_send(url, bodies[:1], 1))  # untimed: the server's first request of this shape
            started = time.perf_counter()
            replies, size = asyncio.run(_send(url, bodies, concurrency))
        except Exception as exc:  # one shape's failure is reported; the others still run
            record[name] = {"error": f"{type(exc).__name__}: {exc}"}
            print(f"[shapes] {name}: {record[name]['error']}", flush=True)
            continue
        seconds = time.perf_counter() - started
        refused = [r for r in replies if "status" in r]
        entry: dict[str, Any] = {
            "seconds": seconds,
            "questions_per_second": questions / seconds,
            "reply_bytes": size,
            "refused": len(refused),
            "first_refusal": refused[0] if refused else None,
            "sample": json.dumps(replies[0], ensure_ascii=False)[:3000],
            "echo_reply_has_prompt_logprobs": any(
                c.get("prompt_logprobs") is not None for c in replies[0].get("choices") or []
            ),
        }
        if not refused:
            scores = [p for reply in replies for p in _per_prompt(reply)]
            entry["choices"] = len(scores)
            if reference is None:
                reference = scores
            entry["max_diff_vs_echo_lp1"] = max(
                (
                    abs(a[0] - b[0])
                    for a, b in zip(scores, reference, strict=False)
                    if a[0] is not None and b[0] is not None
                ),
                default=None,
            )
            with_strings = [(s, p) for (_, s), p in zip(scores, flat_prompts, strict=False) if s is not None]
            if with_strings:
                entry["decoded_tokens_rebuild_prompt"] = sum("".join(s) == p for s, p in with_strings)
                entry["decoded_tokens_checked"] = len(with_strings)
                entry["first_mismatch"] = next(
                    ([s[:40], p[:80]] for s, p in with_strings if "".join(s) != p), None
                )
        record[name] = entry
        print(
            f"[shapes] {name}: {seconds:.1f} s, {questions / seconds:.1f} q/s, {size / 1e6:.1f} MB, "
            f"refused {len(refused)}, max diff {entry.get('max_diff_vs_echo_lp1')}, "
            f"rebuilt {entry.get('decoded_tokens_rebuild_prompt')}/{entry.get('decoded_tokens_checked')}",
            flush=True,
        )
    return record
