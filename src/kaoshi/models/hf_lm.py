"""A loaded transformers causal LM as the hf backend's scoring and generation read it (models/hf.py).

`CausalLM` holds the model, its tokenizer, torch and the context window, and answers what both concerns
ask of them: the text the model reads, its tokens, whether its KV cache can be reused on a prefix. Requests
that share a token prefix (one subject's header and exemplars) are grouped here, and cut into batches by
their padded size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from kaoshi.models.base import Message
from kaoshi.models.chat import assistant_turn_end, render_with_template
from kaoshi.models.hf_generate import plain_layers, returned_cache
from kaoshi.models.tokens import reusable_prefix

PREFIX_MIN_TOKENS = 32  # a shared prefix shorter than this is not worth a separate prefill
TAIL_TOKEN_BUDGET = 1024  # padded tail tokens per forward pass: small batches stay in CPU caches
MAX_TAIL_BATCH = 64


@dataclass(eq=False)
class CausalLM:
    """A causal LM in eval mode on `device`, its tokenizer (with a pad token), the torch module, and the
    context window every prompt must fit."""

    torch: Any
    model: Any
    tokenizer: Any
    device: Any
    max_length: int

    def render(
        self, prompt: str, messages: tuple[Message, ...] | None, *, thinking: bool | None = None
    ) -> str:
        """The exact text the model reads: the chat template applied to messages (with its
        `enable_thinking` where `thinking` is set), or the plain prompt."""
        return render_with_template(self.tokenizer, prompt, messages, thinking=thinking)

    def encode(self, text: str, *, chat: bool) -> list[int]:
        # A chat template already wrote the special tokens; plain text gets the tokenizer's own (BOS).
        ids: list[int] = self.tokenizer(text, add_special_tokens=not chat)["input_ids"]
        return ids

    def decode(self, ids: list[int]) -> str:
        """The exact text of some tokens (special tokens included, no clean-up)."""
        text: str = self.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        return text

    def decode_generated(self, tokens: list[int]) -> str:
        """The text of generated tokens, as an answer (special tokens left out)."""
        text: str = self.tokenizer.decode(tokens, skip_special_tokens=True)
        return text

    def too_long(self, n_tokens: int, reserve: int) -> str:
        """The error of a prompt of `n_tokens` that leaves no room for `reserve` tokens of answer."""
        return (
            f"prompt has {n_tokens} tokens; with {reserve} tokens for the answer it exceeds the "
            f"{self.max_length}-token context (use fewer --shots or a shorter template)"
        )

    @cached_property
    def plain_cache(self) -> bool:
        """Whether this model's KV cache is plain per-layer keys and values. Prefix reuse puts padding
        between prefix and tail, which a sliding-window layer would count as tokens, and copies caches
        by tensor: models with sliding-window, recurrent or other layers take the plain paths."""
        torch = self.torch
        with torch.inference_mode():
            ids = torch.tensor([[self.tokenizer.pad_token_id] * 2], device=self.device)
            cache = returned_cache(self.model(input_ids=ids, use_cache=True))
        return plain_layers(cache) is not None

    @cached_property
    def turn_end(self) -> str:
        """What ends an assistant turn in this model's chat template: scored after each chat answer."""
        return assistant_turn_end(self.tokenizer)

    @cached_property
    def kv_bytes_per_token(self) -> int:
        """KV cache bytes one token takes in this model (all layers, keys and values)."""
        config = self.model.config.get_text_config()
        heads = getattr(config, "num_attention_heads", 32)
        kv_heads = getattr(config, "num_key_value_heads", None) or heads
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
        element = self.torch.finfo(self.model.dtype).bits // 8
        return int(config.num_hidden_layers * 2 * kv_heads * head_dim * element)


_Prepared = TypeVar("_Prepared", bound=tuple[Any, ...])
_Item = TypeVar("_Item")


def prefix_groups(prepared: list[_Prepared]) -> Iterator[tuple[list[_Prepared], int]]:
    """Requests (request, context token ids, ...) grouped by a shared token prefix (e.g. one subject's
    header and exemplars), with its length.

    The prefix is a common prefix of the contexts' own token lists, so reusing it never changes what the
    model reads: where prefix and question merge into different tokens, the prefix simply ends earlier.
    It always leaves at least one token of each context to run, since the last position is scored.
    """
    ordered = sorted(prepared, key=lambda item: item[1])
    group: list[_Prepared] = []
    prefix_len = 0
    for item in ordered:
        if group:
            shared = reusable_prefix(group[0][1][:prefix_len], item[1])
            if shared >= PREFIX_MIN_TOKENS and shared * 2 >= prefix_len:
                group.append(item)
                prefix_len = shared
                continue
            yield group, prefix_len
        group, prefix_len = [item], len(item[1]) - 1
    if group:
        yield group, prefix_len


def token_batches(
    items: list[_Item],
    length: Callable[[_Item], int],
    budget: int = TAIL_TOKEN_BUDGET,
    max_rows: int = MAX_TAIL_BATCH,
) -> Iterator[list[_Item]]:
    """Items (sorted by length) cut into batches whose padded size stays within the token budget."""
    batch: list[_Item] = []
    for item in items:
        width = max([length(item)] + [length(other) for other in batch])
        if batch and (width * (len(batch) + 1) > budget or len(batch) >= max_rows):
            yield batch
            batch = []
        batch.append(item)
    if batch:
        yield batch
