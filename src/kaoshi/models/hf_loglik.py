"""Log-likelihood scoring for the hf backend (models/hf.py).

Each candidate is scored followed by what ends an answer in the prompt's format (the request's
`answer_end`, or the chat template's end of the assistant turn), token by token as the model reads
context + candidate + end. A shared prefix (header and exemplars) is prefilled once, each question's tail
once on top of it, and each candidate's remaining tokens on top of its question; contexts without one are
scored in plain left-padded batches.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from kaoshi.models.base import LoglikRequest, ModelOutput
from kaoshi.models.hf_generate import last_logits, plain_layers, returned_cache, tails_on_prefix, with_cache
from kaoshi.models.hf_lm import PREFIX_MIN_TOKENS, CausalLM, prefix_groups, token_batches
from kaoshi.models.tokens import tokenize_request

CANDIDATE_TOKEN_BUDGET = 16384  # cached tokens held by one pass's candidate rows (each copies its context)

_Prepared = tuple[LoglikRequest, list[int], list[list[int]]]  # request, context ids, candidates' ids


@dataclass
class _Pending:
    """One log-likelihood request on its way through the prefix path."""

    request: LoglikRequest
    context: list[int]
    continuations: list[list[int]]
    scores: dict[str, float] = field(default_factory=dict)


def loglikelihood(
    lm: CausalLM, requests: Sequence[LoglikRequest], *, batch_size: int, reuse_prefix: bool
) -> Iterator[ModelOutput]:
    """One output per request: each candidate's log-probability, or an error for a context too long."""
    prepared: list[_Prepared] = []
    for request in requests:
        context = lm.render(request.context, request.messages)
        context_ids, continuations = tokenize_request(request, context, lm.encode, lm.decode, lm.turn_end)
        longest = max((len(ids) for ids in continuations), default=0)
        if len(context_ids) + longest > lm.max_length:
            yield ModelOutput(request.id, error=lm.too_long(len(context_ids), longest))
            continue
        prepared.append((request, context_ids, continuations))
    for group, prefix_len in prefix_groups(prepared):
        # A lone question gains too when several of its candidates span tokens: its own context is
        # then the prefix, prefilled once instead of once per candidate.
        shared = len(group) > 1 or any(len(ids) > 1 for _, _, conts in group for ids in conts)
        if prefix_len >= PREFIX_MIN_TOKENS and shared and reuse_prefix and lm.plain_cache:
            yield from _with_prefix(lm, group, prefix_len)
            continue
        group.sort(key=lambda item: len(item[1]), reverse=True)
        for start in range(0, len(group), batch_size):
            yield from _plain_batch(lm, group[start : start + batch_size])


def _with_prefix(lm: CausalLM, group: list[_Prepared], prefix_len: int) -> Iterator[ModelOutput]:
    """Prefill the shared prefix once; run each request's tail once on a copy of its cache, and then each
    candidate's further tokens on the request's cache, computing logits only where they are scored."""
    torch = lm.torch
    started = time.perf_counter()
    prefix = group[0][1][:prefix_len]
    with torch.inference_mode():
        # No position of the prefix is scored: one row of logits instead of a vocabulary per token.
        cache = returned_cache(
            lm.model(input_ids=torch.tensor([prefix], device=lm.device), use_cache=True, logits_to_keep=1)
        )
    items = [_Pending(request, context, continuations) for request, context, continuations in group]
    items.sort(key=lambda item: len(item.context))
    done = 0
    for batch in token_batches(items, lambda item: len(item.context) - prefix_len):
        _score_tails(lm, cache, prefix_len, batch)
        for item in batch:
            done += 1
            yield ModelOutput(
                item.request.id,
                logprobs=item.scores,
                tokens_in=len(item.context),
                tokens_out=0,
                latency_s=(time.perf_counter() - started) / done,
            )


def _score_tails(lm: CausalLM, cache: Any, prefix_len: int, batch: list[_Pending]) -> None:
    """Run the batch's tails after the prefix. The last position scores every candidate's first token;
    candidates with more tokens (an answer end always adds some) go on from their request's cache."""
    torch = lm.torch
    input_ids, attention, positions, batch_cache = tails_on_prefix(
        torch,
        lm.device,
        lm.tokenizer.pad_token_id,
        cache,
        prefix_len,
        [i.context[prefix_len:] for i in batch],
    )
    with torch.inference_mode():
        logits = last_logits(lm.model, input_ids, attention, positions, batch_cache)
    last = torch.log_softmax(logits.float(), dim=-1).cpu()
    later: list[list[tuple[str, list[int]]]] = [[] for _ in batch]
    for row, item in enumerate(batch):
        for candidate, ids in zip(item.request.continuations, item.continuations, strict=True):
            item.scores[candidate] = float(last[row, ids[0]])
            if len(ids) > 1:
                later[row].append((candidate, ids))
    layers = plain_layers(batch_cache)
    if layers is None:  # one candidate of each request per pass, on the batch's own cache
        for slot in range(max(len(entries) for entries in later)):
            chosen = [entries[slot] if slot < len(entries) else None for entries in later]
            _score_slot(lm, batch_cache, attention, batch, chosen)
        return
    # One row per candidate, on a copy of its request's cache: a multiple-choice question's 31 letter
    # sets take a few passes instead of 31. Rows per pass are bounded by the tokens their copies hold.
    entries = [(row, entry) for row, entries in enumerate(later) for entry in entries]
    per_pass = max(1, CANDIDATE_TOKEN_BUDGET // attention.shape[1])
    for start in range(0, len(entries), per_pass):
        chunk = entries[start : start + per_pass]
        index = torch.tensor([row for row, _ in chunk], device=lm.device)
        rows_cache = type(batch_cache)([(keys[index], values[index]) for keys, values in layers])
        rows = [batch[row] for row, _ in chunk]
        _score_slot(lm, rows_cache, attention[index], rows, [entry for _, entry in chunk])


def _score_slot(
    lm: CausalLM,
    batch_cache: Any,
    attention: Any,
    batch: list[_Pending],
    chosen: list[tuple[str, list[int]] | None],
) -> None:
    """Add the log-probabilities of the tokens past the first of one candidate per row (None: no more
    for that row; a request may fill several rows). Each row runs its candidate's tokens but the last on
    its request's cache (prefix + tail), left-padded like the tails; they are cropped off again after."""
    torch = lm.torch
    input_ids, feed_mask = _left_padded(lm, [entry[1][:-1] if entry else [] for entry in chosen])
    positions = attention.sum(dim=1, keepdim=True) + feed_mask.cumsum(dim=1) - 1
    width = input_ids.shape[1]
    with torch.inference_mode():
        logits = lm.model(
            input_ids=input_ids,
            attention_mask=torch.cat([attention, feed_mask], dim=1),
            position_ids=positions,
            use_cache=True,
            logits_to_keep=width,
            **with_cache(lm.model, batch_cache),
        ).logits
    batch_cache.crop(-width)
    logprobs = torch.log_softmax(logits.float(), dim=-1).cpu()
    for row, (item, entry) in enumerate(zip(batch, chosen, strict=True)):
        if entry is None:
            continue
        candidate, ids = entry
        # Column width - n + i holds token i of the candidate and predicts token i + 1.
        n = len(ids) - 1
        item.scores[candidate] += sum(
            float(logprobs[row, width - n + i, token]) for i, token in enumerate(ids[1:])
        )


def _left_padded(lm: CausalLM, rows: list[list[int]]) -> tuple[Any, Any]:
    """Token rows left-padded to one width (so every row ends in the last column), and their mask."""
    torch = lm.torch
    width = max(len(tokens) for tokens in rows)
    pad = lm.tokenizer.pad_token_id
    input_ids = torch.tensor([[pad] * (width - len(t)) + t for t in rows], device=lm.device)
    mask = torch.tensor([[0] * (width - len(t)) + [1] * len(t) for t in rows], device=lm.device)
    return input_ids, mask


def _plain_batch(lm: CausalLM, batch: list[_Prepared]) -> Iterator[ModelOutput]:
    """Score a batch without a shared prefix: one pass over the contexts, one per multi-token request."""
    started = time.perf_counter()
    # One pass over the contexts: the last position scores every single-token candidate.
    last_logprobs = _last_position_logprobs(lm, [ids for _, ids, _ in batch])
    elapsed = (time.perf_counter() - started) / len(batch)
    for row, (request, context_ids, continuations) in enumerate(batch):
        scores: dict[str, float] = {}
        multi: list[tuple[str, list[int]]] = []
        for candidate, ids in zip(request.continuations, continuations, strict=True):
            if len(ids) == 1:
                scores[candidate] = float(last_logprobs[row, ids[0]])
            else:
                multi.append((candidate, ids))
        if multi:
            scores.update(_score_sequences(lm, context_ids, multi))
        yield ModelOutput(
            request.id, logprobs=scores, tokens_in=len(context_ids), tokens_out=0, latency_s=elapsed
        )


def _last_position_logprobs(lm: CausalLM, contexts: list[list[int]]) -> Any:
    """Log-softmax at each context's last position. Contexts are left-padded (explicit position ids keep
    the padding invisible) so the last column is every row's last token, and logits are computed for
    that column only."""
    torch = lm.torch
    width = max(len(ids) for ids in contexts)
    pad = lm.tokenizer.pad_token_id
    input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids in contexts], device=lm.device)
    attention = torch.tensor(
        [[0] * (width - len(ids)) + [1] * len(ids) for ids in contexts], device=lm.device
    )
    positions = (attention.cumsum(dim=1) - 1).clamp(min=0)
    with torch.inference_mode():
        logits = lm.model(
            input_ids=input_ids, attention_mask=attention, position_ids=positions, logits_to_keep=1
        ).logits[:, -1, :]
    return torch.log_softmax(logits.float(), dim=-1).cpu()


def _score_sequences(
    lm: CausalLM, context_ids: list[int], candidates: list[tuple[str, list[int]]]
) -> dict[str, float]:
    """Sum of log-probabilities of each multi-token continuation after the context."""
    torch = lm.torch
    sequences = [context_ids + ids for _, ids in candidates]
    width = max(len(s) for s in sequences)
    pad = lm.tokenizer.pad_token_id
    input_ids = torch.tensor([s + [pad] * (width - len(s)) for s in sequences], device=lm.device)
    attention = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in sequences], device=lm.device)
    with torch.inference_mode():
        logits = lm.model(input_ids=input_ids, attention_mask=attention).logits.float()
    logprobs = torch.log_softmax(logits, dim=-1).cpu()
    scores = {}
    start = len(context_ids)
    for row, (candidate, ids) in enumerate(candidates):
        positions = torch.arange(start - 1, start - 1 + len(ids))
        scores[candidate] = float(logprobs[row, positions, torch.tensor(ids)].sum())
    return scores
