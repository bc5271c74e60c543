"""A question's candidates in one llama.cpp call: the context once in sequence 0, each candidate's tokens in
a sequence of its own that shares the context's KV cells, all of them in one `llama_decode`.

A call costs about the same for one token as for a hundred on a small model (34 ms a call for SmolLM2-135M
on 2 cores), and a 6-option multiple-choice question has 63 letter sets to score: one call per question
instead of one per candidate. `Llama` makes its context with a single sequence, so this one is made with
llama.cpp's own API (`llama_init_from_model` with `n_seq_max`, a unified KV cache so that sequences share
the context's cells, `llama_memory_seq_cp` / `_seq_rm`) on the model `Llama` has loaded.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kaoshi.models.base import ModelError
from kaoshi.models.tokens import reusable_prefix

# The llama.cpp calls this needs (llama-cpp-python 0.3.x names them so).
SEQUENCE_CALLS = (
    "llama_context_default_params",
    "llama_init_from_model",
    "llama_get_memory",
    "llama_memory_seq_rm",
    "llama_memory_seq_cp",
    "llama_batch_init",
    "llama_batch_free",
    "llama_decode",
    "llama_get_logits_ith",
    "llama_vocab_n_tokens",
    "llama_model_get_vocab",
    "llama_free",
)
SEQUENCES = 64  # the context's sequence and 63 candidates: every letter set of a 6-option question
BATCH_TOKENS = 512  # tokens one llama_decode takes


def log_normaliser(row: Any) -> float:
    """log sum exp(row), computed stably in float64 with numpy (a vocabulary of 49k is 0.1 ms, not the
    10 ms of a Python loop, run up to 60 times a multiple-choice question)."""
    values = np.asarray(row, dtype=np.float64)
    peak = values.max()
    return float(peak + np.log(np.exp(values - peak).sum()))


class LlamaSequences:
    """Scores continuations after a context on a llama.cpp context with many sequences."""

    def __init__(self, lib: Any, model: Any, n_ctx: int, base: Any = None) -> None:
        """base: the context parameters `Llama` made its own context with (copied, so that attention, KV
        types and threads are the same); llama.cpp's defaults without it."""
        self.lib = lib
        params = type(base).from_buffer_copy(base) if base is not None else lib.llama_context_default_params()
        params.n_ctx = n_ctx
        params.n_batch = params.n_ubatch = BATCH_TOKENS
        params.n_seq_max = SEQUENCES
        params.kv_unified = True
        self.ctx = lib.llama_init_from_model(model, params)
        if not self.ctx:
            raise ModelError("llama.cpp could not make a context for scoring")
        self.memory = lib.llama_get_memory(self.ctx)
        self.batch = lib.llama_batch_init(BATCH_TOKENS, 0, SEQUENCES)
        self.n_vocab = int(lib.llama_vocab_n_tokens(lib.llama_model_get_vocab(model)))
        self.held: list[int] = []  # the tokens sequence 0 holds

    def close(self) -> None:
        if self.ctx:
            self.lib.llama_batch_free(self.batch)
            self.lib.llama_free(self.ctx)
            self.ctx = None

    def _decode(self, entries: list[tuple[int, int, tuple[int, ...]]], *, all_rows: bool = True) -> None:
        """Run (token, position, sequences) entries as one batch: a token shared by several sequences is
        one entry in each of them. Rows at every entry, or (all_rows False) at the last only."""
        batch = self.batch
        batch.n_tokens = len(entries)
        for index, (token, position, sequences) in enumerate(entries):
            batch.token[index] = token
            batch.pos[index] = position
            batch.n_seq_id[index] = len(sequences)
            for slot, sequence in enumerate(sequences):
                batch.seq_id[index][slot] = sequence
            batch.logits[index] = int(all_rows or index == len(entries) - 1)
        code = self.lib.llama_decode(self.ctx, batch)
        if code != 0:
            raise ModelError(f"llama_decode returned {code}")

    def _row(self, index: int) -> Any:
        pointer = self.lib.llama_get_logits_ith(self.ctx, index)
        return np.ctypeslib.as_array(pointer, shape=(self.n_vocab,))

    def _log_prob(self, index: int, token: int) -> float:
        row = self._row(index)
        return float(row[token]) - log_normaliser(row)

    def score(self, context: list[int], continuations: list[list[int]]) -> list[float]:
        """Each continuation's log-probability after the context (the context's shared prefix with the
        previous call's is kept in the cache). A token is read at the position before it: the first from
        the context's last row, the others from the rows of the continuation's own tokens but the last,
        run in a sequence of their own (continuations that differ only in their last token share one)."""
        kept = reusable_prefix(self.held, context)
        self.lib.llama_memory_seq_rm(self.memory, -1, kept, -1)
        del self.held[kept:]
        for start in range(kept, len(context), BATCH_TOKENS):
            chunk = context[start : start + BATCH_TOKENS]
            self._decode(
                [(token, start + offset, (0,)) for offset, token in enumerate(chunk)], all_rows=False
            )
            self.held.extend(chunk)
        row = self._row(len(context[start:]) - 1)
        norm = log_normaliser(row)
        first = {ids[0]: float(row[ids[0]]) - norm for ids in continuations}
        wants: dict[tuple[int, ...], set[int]] = {}
        for ids in continuations:
            if len(ids) > 1:
                wants.setdefault(tuple(ids[:-1]), set()).add(ids[-1])
        later: dict[tuple[int, ...], tuple[float, dict[int, float]]] = {}
        chunk_paths: list[tuple[int, ...]] = []
        for path in [*sorted(wants), None]:
            size = sum(len(p) for p in chunk_paths)
            if chunk_paths and (
                path is None or len(chunk_paths) == SEQUENCES - 1 or size + len(path) > BATCH_TOKENS
            ):
                later.update(self._run_paths(len(context), chunk_paths, wants))
                chunk_paths = []
            if path is not None:
                chunk_paths.append(path)
        scores = []
        for ids in continuations:
            score = first[ids[0]]
            if len(ids) > 1:
                inner, last = later[tuple(ids[:-1])]
                score += inner + last[ids[-1]]
            scores.append(score)
        return scores

    def _run_paths(
        self, n_context: int, paths: list[tuple[int, ...]], wants: dict[tuple[int, ...], set[int]]
    ) -> dict[tuple[int, ...], tuple[float, dict[int, float]]]:
        """Run the paths as a token tree in one call: each path is a sequence sharing the context's cells,
        and a prefix several paths share is one entry in all their sequences ('A' once for 'AB', 'ACD',
        ...). Per path: the log-probability of its own tokens after its first, and of each last token
        wanted after it."""
        members: dict[tuple[int, ...], list[int]] = {}  # a prefix -> the sequences of the paths through it
        for number, path in enumerate(paths, start=1):
            self.lib.llama_memory_seq_cp(self.memory, 0, number, -1, -1)
            for depth in range(1, len(path) + 1):
                members.setdefault(path[:depth], []).append(number)
        nodes = sorted(members, key=lambda prefix: (len(prefix), prefix))  # a prefix before its extensions
        self._decode([(node[-1], n_context + len(node) - 1, tuple(members[node])) for node in nodes])
        row_of = {node: index for index, node in enumerate(nodes)}
        norms = {node: log_normaliser(self._row(row_of[node])) for node in nodes}
        results = {}
        for path in paths:
            inner = sum(
                float(self._row(row_of[path[: k + 1]])[path[k + 1]]) - norms[path[: k + 1]]
                for k in range(len(path) - 1)
            )
            end = self._row(row_of[path])
            results[path] = (inner, {token: float(end[token]) - norms[path] for token in wants[path]})
        for number in range(1, len(paths) + 1):
            self.lib.llama_memory_seq_rm(self.memory, number, -1, -1)
        return results
