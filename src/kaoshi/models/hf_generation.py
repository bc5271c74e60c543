"""Generation for the hf backend (models/hf.py): batched greedy decoding with left padding, sorted by
length and budget, through transformers' `generate`; prompts that share a long token prefix are decoded
on it instead, the prefix prefilled once (models/hf_generate.py). A prompt that leaves no room for its
token budget gets an error, never a truncation.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from kaoshi.models.base import GenerateRequest, ModelOutput
from kaoshi.models.hf_generate import Decoder, Row, eos_ids, plain_greedy
from kaoshi.models.hf_lm import PREFIX_MIN_TOKENS, CausalLM, prefix_groups, token_batches
from kaoshi.models.tokens import decode_whole_characters

# Generation on shared prefixes: the KV cache one batch may hold (rows x (context + new tokens) x the
# model's bytes per token). SmolLM2-135M in fp32 takes 46 KiB per token, so 64 rows of any exam prompt;
# a 7B model with full multi-head attention in bf16 512 KiB, about 8k tokens. Decoding on a CPU costs
# about the same for 8 rows as for 44 (each step reads every weight once), so batches are as large as
# this allows.
GENERATION_CACHE_BYTES = 4 * 1024**3
MAX_GENERATION_BATCH = 64

_Encoded = tuple[GenerateRequest, list[int]]  # a request and its prompt's token ids


def generate(
    lm: CausalLM,
    requests: Sequence[GenerateRequest],
    *,
    batch_size: int,
    reuse_prefix: bool,
    max_rows: int | None = None,
) -> Iterator[ModelOutput]:
    """One output per request. `batch_size` rows go through `generate` at once; `max_rows` (the run's
    --batch-size) caps the rows of a batch on shared prefixes, otherwise bounded by their KV cache."""
    encoded: list[_Encoded] = []
    for request in requests:
        ids = lm.encode(lm.render(request.prompt, request.messages), chat=request.messages is not None)
        if len(ids) + request.max_new_tokens > lm.max_length:
            yield ModelOutput(request.id, error=lm.too_long(len(ids), request.max_new_tokens))
            continue
        encoded.append((request, ids))
    if reuse_prefix and lm.plain_cache and plain_greedy(lm.model.generation_config):
        shared, alone = [], []
        for group, prefix_len in prefix_groups(encoded):
            if len(group) > 1 and prefix_len >= PREFIX_MIN_TOKENS:
                shared.append((group, prefix_len))
            else:
                alone.extend(group)
        yield from _on_prefixes(lm, shared, max_rows or MAX_GENERATION_BATCH)
        encoded = alone
    # One budget per batch: a batch generates as long as its largest budget asks.
    encoded.sort(key=lambda item: (item[0].max_new_tokens, len(item[1])), reverse=True)
    for start in range(0, len(encoded), batch_size):
        yield from _plain_batch(lm, encoded[start : start + batch_size])


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
            text = cut_at_stop(decode_whole_characters(lm.decode_generated, row.tokens), request.stop)
            yield ModelOutput(
                request.id,
                text=text,
                tokens_in=len(ids),
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
    for row, (request, ids) in enumerate(batch):
        new_tokens = output[row, width:].tolist()[: request.max_new_tokens]
        text = decode_whole_characters(lm.decode_generated, new_tokens)
        text = cut_at_stop(text, request.stop)
        n_out = sum(1 for token in new_tokens if token != pad)
        yield ModelOutput(request.id, text=text, tokens_in=len(ids), tokens_out=n_out, latency_s=elapsed)


def cut_at_stop(text: str, stops: Sequence[str]) -> str:
    """The text up to its first stop string."""
    cut = min((text.find(s) for s in stops if s and s in text), default=-1)
    return text if cut < 0 else text[:cut]
