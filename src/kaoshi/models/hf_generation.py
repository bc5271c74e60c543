"""Generation for the hf backend (models/hf.py): batched greedy decoding with left padding, sorted by
length and budget, through transformers' `generate`; prompts that share a long token prefix are decoded
on it instead, the prefix prefilled once (models/hf_generate.py). A prompt that leaves no room for its
token budget gets an error, never a truncation.

A sampled request (temperature > 0) is generated alone from its own prompt, with torch's generator seeded
from its seed: its text depends on nothing but the request, never on the batch or order it came in, so a
re-run or a resume that batches differently gives the same text. An answer that neither ended nor met a
stop string within its budget is `truncated`; a think block is kept apart from the answer
(models/reasoning.py).
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from kaoshi.models.base import GenerateRequest, ModelOutput
from kaoshi.models.hf_generate import Decoder, Row, eos_ids, plain_greedy
from kaoshi.models.hf_lm import PREFIX_MIN_TOKENS, CausalLM, prefix_groups, token_batches
from kaoshi.models.reasoning import prompt_opens_reasoning, with_reasoning
from kaoshi.models.tokens import decode_whole_characters

# Generation on shared prefixes: the KV cache one batch may hold (rows x (context + new tokens) x the
# model's bytes per token). SmolLM2-135M in fp32 takes 46 KiB per token, so 64 rows of any exam prompt;
# a 7B model with full multi-head attention in bf16 512 KiB, about 8k tokens. Decoding on a CPU costs
# about the same for 8 rows as for 44 (each step reads every weight once), so batches are as large as
# this allows.
GENERATION_CACHE_BYTES = 4 * 1024**3
MAX_GENERATION_BATCH = 64

_Encoded = tuple[GenerateRequest, list[int]]  # a request and its prompt's token ids

# The prompt tokens read to see whether a chat template opened a think block ('<think>\n' at its end).
_OPENING_TOKENS = 32


def generate(
    lm: CausalLM,
    requests: Sequence[GenerateRequest],
    *,
    batch_size: int,
    reuse_prefix: bool,
    max_rows: int | None = None,
    seed: int = 0,
) -> Iterator[ModelOutput]:
    """One output per request. `batch_size` rows go through `generate` at once; `max_rows` (the run's
    --batch-size) caps the rows of a batch on shared prefixes, otherwise bounded by their KV cache.
    `seed`: a sampled request's seed where it sets none (the run's)."""
    encoded: list[_Encoded] = []
    sampled: list[_Encoded] = []
    for request in requests:
        rendered = lm.render(request.prompt, request.messages, thinking=request.sampling.thinking)
        ids = lm.encode(rendered, chat=request.messages is not None)
        if len(ids) + request.max_new_tokens > lm.max_length:
            yield ModelOutput(request.id, error=lm.too_long(len(ids), request.max_new_tokens))
            continue
        (encoded if request.sampling.greedy else sampled).append((request, ids))
    for request, ids in sampled:
        yield _sampled(lm, request, ids, seed)
    if reuse_prefix and lm.plain_cache and plain_greedy(lm.model.generation_config):
        shared, alone = [], []
        for group, prefix_len in prefix_groups(encoded):
            if len(group) > 1 and prefix_len >= PREFIX_MIN_TOKENS:
                shared.append((group, prefix_len))
            else:
                alone.extend(group)
        yield from _on_prefixes(lm, shared, max_rows or MAX_GENERATION_BATCH)
        encoded = alone
    # One budget per batch: a batch generates as long as its largest budget asks. One set of stop strings
    # per batch: `generate` ends every row at any of the batch's stop strings.
    by_stops: dict[tuple[str, ...], list[_Encoded]] = {}
    for item in encoded:
        by_stops.setdefault(item[0].stop, []).append(item)
    for group in by_stops.values():
        group.sort(key=lambda item: (item[0].max_new_tokens, len(item[1])), reverse=True)
        for start in range(0, len(group), batch_size):
            yield from _plain_batch(lm, group[start : start + batch_size])


def _on_prefixes(
    lm: CausalLM, groups: list[tuple[list[_Encoded], int]], max_rows: int
) -> Iterator[ModelOutput]:
    """Prefill each group's shared prefix once, then generate in batches that mix the groups."""
    started = time.perf_counter()
    decoder = Decoder(
        lm.model,
        lm.torch,
        lm.device,
        lm.tokenizer.pad_token_id,
        eos_ids(lm.model.generation_config),
        lm.decode_generated,
    )
    entries = [(index, request, ids) for index, (group, _) in enumerate(groups) for request, ids in group]
    # Batches of one budget, a group's questions together: a prefix cache is made when a batch first
    # needs it and dropped after its group's last batch. Rows are bounded by their KV cache's size.
    entries.sort(key=lambda entry: (entry[1].max_new_tokens, entry[0], len(entry[2])))
    remaining = Counter(index for index, _, _ in entries)
    prefixes: dict[int, tuple[Any, int]] = {}
    done = 0
    for batch in token_batches(
        entries,
        lambda entry: len(entry[2]) + entry[1].max_new_tokens,
        max(1, GENERATION_CACHE_BYTES // lm.kv_bytes_per_token),
        max_rows,
    ):
        for index in {index for index, _, _ in batch} - prefixes.keys():
            group, prefix_len = groups[index]
            prefixes[index] = (decoder.prefill(group[0][1][:prefix_len]), prefix_len)
        rows = [
            Row(index, ids[prefixes[index][1] :], request.max_new_tokens, request.stop)
            for index, request, ids in batch
        ]
        entry_of = {id(row): entry for row, entry in zip(rows, batch, strict=True)}
        # Each answer goes out as its row ends, while the rest of the batch decodes on.
        for row in decoder.generate(prefixes, rows):
            _, request, ids = entry_of[id(row)]
            done += 1
            yield _answer(
                lm,
                request,
                ids,
                row.tokens,
                ended=row.ended_by is not None,
                # as _plain_batch counts: the end token too, unless it is the padding token
                tokens_out=len(row.tokens) + (row.ended_by not in (None, lm.tokenizer.pad_token_id)),
                latency_s=(time.perf_counter() - started) / done,
            )
        for index, _, _ in batch:
            remaining[index] -= 1
            if not remaining[index]:
                del prefixes[index]


def _plain_batch(lm: CausalLM, batch: list[_Encoded]) -> Iterator[ModelOutput]:
    """Generate a batch with transformers' `generate`, prompts left-padded to one width."""
    torch = lm.torch
    width = max(len(ids) for _, ids in batch)
    pad = lm.tokenizer.pad_token_id
    input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for _, ids in batch], device=lm.device)
    attention = torch.tensor(
        [[0] * (width - len(ids)) + [1] * len(ids) for _, ids in batch], device=lm.device
    )
    max_new = max(request.max_new_tokens for request, _ in batch)
    stops = sorted({s for request, _ in batch for s in request.stop})
    started = time.perf_counter()
    with torch.inference_mode():
        output = lm.model.generate(
            input_ids=input_ids,
            attention_mask=attention,
            max_new_tokens=max_new,
            do_sample=False,
            pad_token_id=pad,
            **({"stop_strings": stops, "tokenizer": lm.tokenizer} if stops else {}),
        )
    elapsed = (time.perf_counter() - started) / len(batch)
    eos = eos_ids(lm.model.generation_config)
    for row, (request, ids) in enumerate(batch):
        new_tokens = output[row, width:].tolist()[: request.max_new_tokens]
        n_out = sum(1 for token in new_tokens if token != pad)
        ended = any(token in eos for token in new_tokens)
        yield _answer(lm, request, ids, new_tokens, ended=ended, tokens_out=n_out, latency_s=elapsed)


def _sampled(lm: CausalLM, request: GenerateRequest, ids: list[int], default_seed: int) -> ModelOutput:
    """Sample one request alone from its whole prompt, torch's generator seeded from the request's seed
    (the run's where it sets none): the same request gives the same text whatever it is batched with.
    Top-p and top-k not set are off (not the model's generation-config defaults); the config's other
    settings (a repetition penalty) apply, as they do to greedy decoding."""
    torch = lm.torch
    sampling = request.sampling
    pad = lm.tokenizer.pad_token_id
    stops = list(request.stop)
    started = time.perf_counter()
    with torch.inference_mode(), _seeded(torch, default_seed if sampling.seed is None else sampling.seed):
        output = lm.model.generate(
            input_ids=torch.tensor([ids], device=lm.device),
            attention_mask=torch.ones(1, len(ids), dtype=torch.long, device=lm.device),
            max_new_tokens=request.max_new_tokens,
            do_sample=True,
            temperature=sampling.temperature,
            top_p=1.0 if sampling.top_p is None else sampling.top_p,
            top_k=0 if sampling.top_k is None else sampling.top_k,
            pad_token_id=pad,
            **({"stop_strings": stops, "tokenizer": lm.tokenizer} if stops else {}),
        )
    new_tokens = output[0, len(ids) :].tolist()
    eos = eos_ids(lm.model.generation_config)
    return _answer(
        lm,
        request,
        ids,
        new_tokens,
        ended=any(token in eos for token in new_tokens),
        tokens_out=sum(1 for token in new_tokens if token != pad),
        latency_s=time.perf_counter() - started,
    )


@contextlib.contextmanager
def _seeded(torch: Any, seed: int) -> Iterator[None]:
    """torch's generators seeded with `seed` within, restored after: transformers' sampling draws from
    them (its `generate` takes no generator of its own), and the caller's random state is not ours."""
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed % 2**63)
        yield


def _answer(
    lm: CausalLM,
    request: GenerateRequest,
    ids: list[int],
    tokens: list[int],
    *,
    ended: bool,
    tokens_out: int,
    latency_s: float,
) -> ModelOutput:
    """A request's output from its generated tokens: the text up to a stop string, cut off when neither an
    end token nor a stop string ended it within its budget, its think block kept apart."""
    whole = decode_whole_characters(lm.decode_generated, tokens)
    text = cut_at_stop(whole, request.stop)
    output = ModelOutput(
        request.id,
        text=text,
        tokens_in=len(ids),
        tokens_out=tokens_out,
        latency_s=latency_s,
        truncated=not ended and text == whole,
    )
    return with_reasoning(
        output,
        opened=prompt_opens_reasoning(lm.decode(ids[-_OPENING_TOKENS:])),
        count_tokens=lambda reasoning: len(lm.encode(reasoning, chat=True)),
    )


def cut_at_stop(text: str, stops: Sequence[str]) -> str:
    """The text up to its first stop string."""
    cut = min((text.find(s) for s in stops if s and s in text), default=-1)
    return text if cut < 0 else text[:cut]
