"""Greedy generation that prefills a shared prompt prefix once (the hf backend's fast path).

Every QualBench prompt of a type starts with the same instruction and demo, every C-Eval prompt of a
subject with the same header and exemplars, every chat prompt with the same system turn. transformers'
`generate` prefills each prompt whole; here the prefix is run once, its cache copied to the batch, each
question's tail run once on top of it, and the batch decoded together, dropping rows as they finish.

What the model reads is unchanged: the prefix is a common prefix of the prompts' own token lists, the
padding between prefix and tail is masked out and positions continue the prefix, so each row is the
unpadded prompt. Decoding is argmax, as `generate(do_sample=False)`; a model whose generation config
changes the scores (repetition penalty, banned or forced tokens) is left to `generate`.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# Generation config fields that change greedy choices, with their neutral values.
NEUTRAL_SETTINGS: dict[str, tuple[object, ...]] = {
    "repetition_penalty": (None, 1.0),
    "no_repeat_ngram_size": (None, 0),
    "encoder_repetition_penalty": (None, 1.0),
    "bad_words_ids": (None,),
    "suppress_tokens": (None,),
    "begin_suppress_tokens": (None,),
    "forced_bos_token_id": (None,),
    "forced_eos_token_id": (None,),
    "min_length": (None, 0),
    "min_new_tokens": (None, 0),
    "sequence_bias": (None,),
    "exponential_decay_length_penalty": (None,),
    "num_beams": (None, 1),
    "guidance_scale": (None, 1.0),
    "stop_strings": (None,),
    "watermarking_config": (None,),
}


def plain_greedy(generation_config: Any) -> bool:
    """True when greedy decoding is the argmax of the raw scores for this model."""
    settings = NEUTRAL_SETTINGS.items()
    return all(getattr(generation_config, name, None) in neutral for name, neutral in settings)


def eos_ids(generation_config: Any) -> frozenset[int]:
    """The tokens that end generation, as `generate` reads them (from the generation config only)."""
    value = getattr(generation_config, "eos_token_id", None)
    if value is None:
        return frozenset()
    return frozenset([value] if isinstance(value, int) else value)


@functools.cache
def _cache_argument(model_type: Any) -> str:
    """The name this model class's forward takes its KV cache by: `cache` in newer transformers, where
    `past_key_values` is deprecated (a FutureWarning and a log line per run), `past_key_values` before."""
    try:
        parameters = inspect.signature(model_type.forward).parameters
    except (AttributeError, TypeError, ValueError):  # no introspectable forward: the long-standing name
        return "past_key_values"
    return "cache" if "cache" in parameters else "past_key_values"


def with_cache(model: Any, cache: Any) -> dict[str, Any]:
    """The keyword argument that hands `cache` to the model's forward, by the name it accepts."""
    return {_cache_argument(model.__class__): cache}


def returned_cache(output: Any) -> Any:
    """The KV cache a forward pass returned, read by the field name its output class has (reading the
    deprecated `past_key_values` of a newer output class logs a deprecation warning)."""
    names = {f.name for f in dataclasses.fields(output)} if dataclasses.is_dataclass(output) else set()
    return output.cache if "cache" in names else output.past_key_values


def plain_layers(cache: Any) -> list[tuple[Any, Any]] | None:
    """A KV cache's per-layer (keys, values) tensors, [batch, heads, length, dim]; None for a cache that
    holds anything else (sliding windows, quantized or offloaded layers)."""
    layers = getattr(cache, "layers", None)
    if layers is None or any(type(layer).__name__ not in _PLAIN_LAYERS for layer in layers):
        return None
    return [(layer.keys, layer.values) for layer in layers]


_PLAIN_LAYERS = frozenset({"DynamicLayer", "GrowingLayer"})


def growing_cache(cache: Any, extra: int) -> None:
    """Give each plain layer of `cache` room for `extra` more tokens, in place: transformers' DynamicLayer
    appends by concatenation, copying the whole cache at every decoding step (5 s of a 31 s profile); a
    growing layer writes the step's token into spare room instead."""
    dynamic, growing = _layer_classes()
    layers: list[Any] = cache.layers
    cache.layers = [growing(one.keys, one.values, extra) if type(one) is dynamic else one for one in layers]


@functools.cache
def _layer_classes() -> tuple[Any, Any]:
    """(transformers' DynamicLayer, kaoshi's GrowingLayer), made on first use: transformers is imported
    only once a model runs."""
    from transformers.cache_utils import DynamicLayer

    class GrowingLayer(DynamicLayer):  # type: ignore[misc]
        """Keys and values in buffers with spare room at the end; `keys` / `values` are views of the
        filled part, so everything that reads a DynamicLayer reads this one the same way."""

        def __init__(self, keys: Any, values: Any, room: int) -> None:
            super().__init__()
            self.dtype, self.device = keys.dtype, keys.device
            self.is_initialized = True
            self._length = keys.shape[-2]
            self._keys = _with_room(keys, room)
            self._values = _with_room(values, room)
            self._views()

        def _views(self) -> None:
            self.keys = self._keys[..., : self._length, :]
            self.values = self._values[..., : self._length, :]

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            added = key_states.shape[-2]
            if self._length + added > self._keys.shape[-2]:  # out of room: grow by half again
                room = max(added, self._keys.shape[-2] // 2)
                self._keys, self._values = _with_room(self.keys, room), _with_room(self.values, room)
            self._keys[..., self._length : self._length + added, :] = key_states
            self._values[..., self._length : self._length + added, :] = value_states
            self._length += added
            self._views()
            return self.keys, self.values

        def batch_select_indices(self, indices: Any) -> None:
            self._keys, self._values = self._keys[indices, ...], self._values[indices, ...]
            self._views()

        def batch_repeat_interleave(self, repeats: int) -> None:
            self._keys = self._keys.repeat_interleave(repeats, dim=0)
            self._values = self._values.repeat_interleave(repeats, dim=0)
            self._views()

        def crop(self, max_length: int) -> None:
            super().crop(max_length)
            self._length = self.keys.shape[-2]
            self._keys, self._values = _with_room(self.keys, 0), _with_room(self.values, 0)
            self._views()

    return DynamicLayer, GrowingLayer


def _with_room(tensor: Any, room: int) -> Any:
    """A copy of a [batch, heads, length, dim] tensor with `room` more (uninitialised) positions."""
    batch, heads, length, dim = tensor.shape
    grown = tensor.new_empty(batch, heads, length + room, dim)
    grown[..., :length, :] = tensor
    return grown


def tails_on_prefix(
    torch: Any, device: Any, pad: int, cache: Any, prefix_len: int, tails: Sequence[list[int]]
) -> tuple[Any, Any, Any, Any]:
    """What runs a batch of tails after one prefix: (input ids, attention mask, position ids, the prefix's
    cache copied per row). The padding sits between prefix and tail, masked out, and the positions go on
    from the prefix, so each row reads exactly its own context."""
    width = max(len(tail) for tail in tails)
    input_ids = torch.tensor([[pad] * (width - len(t)) + t for t in tails], device=device)
    tail_mask = torch.tensor([[0] * (width - len(t)) + [1] * len(t) for t in tails], device=device)
    attention = torch.cat(
        [torch.ones(len(tails), prefix_len, dtype=tail_mask.dtype, device=device), tail_mask], dim=1
    )
    positions = (prefix_len + tail_mask.cumsum(dim=1) - 1).clamp(min=prefix_len)
    batch_cache = copy.deepcopy(cache)
    batch_cache.batch_repeat_interleave(len(tails))
    return input_ids, attention, positions, batch_cache


def last_logits(model: Any, input_ids: Any, attention: Any, positions: Any, cache: Any) -> Any:
    """The logits at each row's last position, the cache extended by the input."""
    return model(
        input_ids=input_ids,
        attention_mask=attention,
        position_ids=positions,
        use_cache=True,
        logits_to_keep=1,
        **with_cache(model, cache),
    ).logits[:, -1, :]


@dataclass
class Row:
    """One prompt being generated: its prefix group, its tail after that prefix, budget, stop strings,
    and what it generated."""

    group: int
    tail: list[int]
    budget: int
    stops: tuple[str, ...]
    tokens: list[int] = field(default_factory=list)
    ended_by: int | None = None  # the end token that ended it (None: its budget or a stop string did)


@dataclass
class _Batch:
    """Rows being decoded together: their KV cache, attention mask, next positions and last logits."""

    rows: list[Row]
    cache: Any
    attention: Any
    next_positions: Any
    logits: Any


@dataclass(frozen=True)
class Decoder:
    """What greedy decoding on prefixes needs from the backend."""

    model: Any
    torch: Any
    device: Any
    pad: int
    eos: frozenset[int]
    decode: Callable[[list[int]], str]  # token ids -> text, for stop strings

    def prefill(self, prefix: list[int]) -> Any:
        """The prefix's KV cache (batch of one)."""
        torch = self.torch
        with torch.inference_mode():
            ids = torch.tensor([prefix], device=self.device)
            # No position of the prefix is read: one row of logits instead of a vocabulary per token.
            return returned_cache(self.model(input_ids=ids, use_cache=True, logits_to_keep=1))

    def generate(self, prefixes: Mapping[int, tuple[Any, int]], rows: Sequence[Row]) -> Iterator[Row]:
        """Generate every row greedily after its group's prefix (cache, length), filling its `tokens`
        (without the end token); each row is yielded as it finishes, while the others decode on. Rows of
        several groups are decoded as one batch. Every row is started (its tail run on a copy of its
        prefix cache) before the first is yielded, so `prefixes` may be changed after that."""
        parts = []
        for group in sorted({row.group for row in rows}):
            cache, prefix_len = prefixes[group]
            parts.append(self._start(cache, prefix_len, [row for row in rows if row.group == group]))
        merged = self._merge(parts)
        if merged is not None:
            parts.clear()  # the merged copy holds every row: the parts' caches are freed while it decodes
            yield from self._decode(merged)
            return
        while parts:
            yield from self._decode(parts.pop(0))

    def _start(self, cache: Any, prefix_len: int, rows: list[Row]) -> _Batch:
        """Run the rows' tails on copies of their prefix cache: left-padded between prefix and tail (masked
        out), positions continuing the prefix, so each row reads exactly its own prompt."""
        torch = self.torch
        input_ids, attention, positions, batch_cache = tails_on_prefix(
            torch, self.device, self.pad, cache, prefix_len, [row.tail for row in rows]
        )
        with torch.inference_mode():
            logits = self._last_logits(input_ids, attention, positions, batch_cache)
        return _Batch(rows, batch_cache, attention, positions[:, -1:] + 1, logits)

    def _merge(self, parts: list[_Batch]) -> _Batch | None:
        """One batch of several groups' rows: each cache left-padded (masked) to the longest. None when
        the cache does not hold plain per-layer key/value tensors (the parts are then decoded apart)."""
        if len(parts) == 1:
            return parts[0]
        torch = self.torch
        layered = [plain_layers(part.cache) for part in parts]
        if any(layers is None for layers in layered):
            return None
        length = max(part.attention.shape[1] for part in parts)

        def left_pad(tensor: Any, missing: int) -> Any:
            if missing == 0:
                return tensor
            shape = (*tensor.shape[:-2], missing, tensor.shape[-1])
            return torch.cat([tensor.new_zeros(shape), tensor], dim=-2)

        data = []
        for index in range(len(layered[0])):  # type: ignore[arg-type]
            keys, values = [], []
            for part, layers in zip(parts, layered, strict=True):
                missing = length - part.attention.shape[1]
                layer_keys, layer_values = layers[index]  # type: ignore[index]
                keys.append(left_pad(layer_keys, missing))
                values.append(left_pad(layer_values, missing))
            data.append((torch.cat(keys), torch.cat(values)))
        attention = torch.cat(
            [
                torch.cat(
                    [
                        part.attention.new_zeros(len(part.rows), length - part.attention.shape[1]),
                        part.attention,
                    ],
                    dim=1,
                )
                for part in parts
            ]
        )
        return _Batch(
            [row for part in parts for row in part.rows],
            type(parts[0].cache)(data),
            attention,
            torch.cat([part.next_positions for part in parts]),
            torch.cat([part.logits for part in parts]),
        )

    def _decode(self, batch: _Batch) -> Iterator[Row]:
        """Greedy steps until every row ends; finished rows leave the batch and are yielded at once.

        They are yielded outside inference mode, which is entered for each step: the caller's code runs
        between steps, and a thread-wide mode left on (or restored under it) would be a surprise there."""
        torch = self.torch
        active, cache, attention = batch.rows, batch.cache, batch.attention
        next_positions, logits = batch.next_positions, batch.logits
        growing_cache(cache, max(row.budget - len(row.tokens) for row in active))
        while True:
            chosen = logits.argmax(dim=-1).tolist()
            ended = [self._advance(row, token) for row, token in zip(active, chosen, strict=True)]
            keep = [slot for slot, end in enumerate(ended) if not end]
            finished = [row for row, end in zip(active, ended, strict=True) if end]
            yield from finished
            if not keep:
                return
            with torch.inference_mode():
                if finished:
                    index = torch.tensor(keep, device=self.device)
                    cache.batch_select_indices(index)
                    attention, next_positions = attention[index], next_positions[index]
                    active = [active[slot] for slot in keep]
                step = torch.tensor([[row.tokens[-1]] for row in active], device=self.device)
                attention = torch.cat([attention, torch.ones_like(attention[:, :1])], dim=1)
                logits = self._last_logits(step, attention, next_positions, cache)
                next_positions = next_positions + 1

    def _last_logits(self, input_ids: Any, attention: Any, positions: Any, cache: Any) -> Any:
        return last_logits(self.model, input_ids, attention, positions, cache)

    def _advance(self, row: Row, token: int) -> bool:
        """Add one chosen token; True when the row is done (end token, budget, or a stop string)."""
        if token in self.eos:
            row.ended_by = token
            return True
        row.tokens.append(token)
        if len(row.tokens) >= row.budget:
            return True
        if row.stops:
            # A stop string of n characters lies within the last 2n + 2 tokens (byte tokens split
            # characters); only those are decoded at each step.
            window = 2 * max(len(stop) for stop in row.stops) + 2
            recent = self.decode(row.tokens[-window:])
            return any(stop in recent for stop in row.stops if stop)
        return False
