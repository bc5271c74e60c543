"""The model interface: one class, two capabilities (generate, loglikelihood), results streamed by id."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

Message = tuple[str, str]  # (role, content)


class ModelError(Exception):
    """A backend could not be created or used (bad spec, missing dependency, missing file)."""


class CapabilityError(ModelError):
    """The backend cannot do what the run asks (e.g. log-likelihood from a text-only API)."""


@dataclass(frozen=True)
class GenerateRequest:
    id: str
    prompt: str
    # Valid answer strings for the question (letters, letter sets, 正确/错误); real models ignore them,
    # baselines answer from them.
    choices: tuple[str, ...] = ()
    max_new_tokens: int = 256
    stop: tuple[str, ...] = ()
    messages: tuple[Message, ...] | None = None  # chat form; `prompt` then holds their JSON


@dataclass(frozen=True)
class LoglikRequest:
    id: str
    context: str
    continuations: tuple[str, ...]
    messages: tuple[Message, ...] | None = None  # chat form: the continuation follows the assistant turn
    # What ends an answer in the prompt's format (the template's `answer_end`), scored with every
    # continuation so that 'ABCD' never loses to its own prefix 'AB'. None: a chat request's answer ends
    # the assistant turn (the backend scores its end-of-turn text); a completion request scores the bare
    # continuation.
    answer_end: str | None = None

    def scored_end(self, turn_end: str) -> str:
        """The text scored after every continuation, given the backend's end of an assistant turn."""
        if self.answer_end is not None:
            return self.answer_end
        return turn_end if self.messages is not None else ""


@dataclass(frozen=True)
class ModelOutput:
    """One request's result. `error` set means no usable output; it is stored, never scored as wrong."""

    id: str
    text: str | None = None
    logprobs: dict[str, float] | None = None  # continuation -> log-probability
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float | None = None
    error: str | None = None
    truncated: bool = False  # the text stopped at the token limit (finish_reason "length"), not by choice


@dataclass(frozen=True)
class ModelOptions:
    """Run-level settings a backend may use; each backend reads the ones that concern it."""

    seed: int = 0
    batch_size: int | None = None
    # HTTP APIs
    base_url: str | tuple[str, ...] | None = None  # several: requests spread over them (models/endpoints.py)
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 8
    requests_per_minute: float | None = None
    timeout_s: float = 120.0
    max_retries: int = 6
    max_wait_s: float | None = None  # the longest Retry-After honoured (None: timeout_s x max_retries)
    # The longest reply text kept; a longer one is an error sample, and a body is read no further than
    # 32 bytes per character (openai_transport.REPLY_BYTES_PER_CHAR). 500,000 characters are about
    # 125,000 tokens of English (4 characters a token), beyond the longest output APIs offer today.
    max_reply_chars: int = 500_000
    # local weights
    device: str = "auto"
    dtype: str = "auto"
    trust_remote_code: bool = False
    max_length: int | None = None  # context window override
    tensor_parallel_size: int = 1
    adapter: str | None = None  # a LoRA adapter folder (kaoshi finetune) applied to hf/gguf/smollm2 models
    # Data parallelism on Ray (models/ray_replicas.py): replicas of the backend, each with its GPUs.
    ray: bool = False
    replicas: int = 1
    gpus_per_replica: float = 0
    ray_address: str | None = None

    @property
    def on_ray(self) -> bool:
        return self.ray or self.replicas > 1 or self.ray_address is not None

    def __post_init__(self) -> None:
        # Zero or negative values would silently turn timeouts, retries or rate limits off.
        positive = {
            "--timeout": self.timeout_s,
            "--concurrency": self.concurrency,
            "--rpm": self.requests_per_minute,
            "--max-wait": self.max_wait_s,
            "--max-reply-chars": self.max_reply_chars,
            "--batch-size": self.batch_size,
            "--max-length": self.max_length,
            "--tensor-parallel-size": self.tensor_parallel_size,
            "--replicas": self.replicas,
        }
        for flag, value in positive.items():
            if value is not None and not value > 0:  # `not >` also refuses NaN
                raise ModelError(f"{flag} must be > 0, got {value:g}")
        if self.max_retries < 0:
            raise ModelError(f"--max-retries must be >= 0, got {self.max_retries}")
        if not self.gpus_per_replica >= 0:
            raise ModelError(f"--gpus-per-replica must be >= 0, got {self.gpus_per_replica:g}")


class Model:
    """Base class of every backend. Override `generate` and/or `loglikelihood`.

    Both take a batch and yield one ModelOutput per request, in any order, as soon as each is ready:
    the runner stores each output the moment it arrives.
    """

    name = "model"
    default_batch_size = 1
    # Whether prompts are sent as chat messages unless the run says otherwise (--chat / --no-chat).
    default_chat = False

    def __init__(self, spec: str, options: ModelOptions) -> None:
        self.spec = spec
        self.options = options

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        raise CapabilityError(f"model {self.spec!r} cannot generate text")

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        raise CapabilityError(f"model {self.spec!r} cannot score log-likelihoods; use --method generate")

    def supports(self, method: str) -> bool:
        """Whether this backend overrides the method's entry point."""
        entry = {"generate": "generate", "loglik": "loglikelihood"}[method]
        return getattr(type(self), entry) is not getattr(Model, entry)

    def fits(self, prompt_text: str, messages: tuple[Message, ...] | None = None, reserve: int = 256) -> bool:
        """Whether a prompt and `reserve` new tokens fit the context window; backends with a tokenizer
        override this."""
        return True

    def chunk_size(self, method: str) -> int:
        """How many requests the runner hands over at once (the backend still streams each result back)."""
        return self.batch_size

    @property
    def batch_size(self) -> int:
        return self.options.batch_size or self.default_batch_size

    def close(self) -> None:
        """Release resources (weights, connections)."""
