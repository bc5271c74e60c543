"""The model interface: one class, two capabilities (generate, loglikelihood), results streamed by id."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

from kaoshi.enums import TextEnum
from kaoshi.models.errors import CapabilityError as CapabilityError
from kaoshi.models.errors import ModelError as ModelError
from kaoshi.option_fields import cli

if TYPE_CHECKING:
    from kaoshi.models.batches import BatchEndpoint

Message = tuple[str, str]  # (role, content)
# The help sections of the backend options (kaoshi run, kaoshi judge).
_BACKENDS = "backends"
_RAY = "data parallelism (Ray: pip install 'kaoshi[ray]')"


# The decoding options a backend may honour (Sampling's fields but the seed, which every backend takes);
# a backend declares the ones it honours in its `Capabilities.sampling`.
SAMPLING_OPTIONS = ("temperature", "top_p", "top_k", "thinking")


@dataclass(frozen=True)
class Sampling:
    """How a generated answer is decoded. The default is greedy decoding with the model's own thinking
    default; a run sets it from --temperature, --top-p, --top-k, --thinking, and gives each sample its own
    seed (kaoshi.runner.repeats.sample_seed: from --seed, the question and the sample index)."""

    temperature: float = 0.0  # 0: greedy
    top_p: float | None = None
    top_k: int | None = None
    seed: int | None = None  # this request's seed; None: the backend's own (ModelOptions.seed)
    # The chat template's `enable_thinking` (local backends) or the server's thinking switch (openai);
    # None: the model's own default, nothing sent.
    thinking: bool | None = None

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    def options_set(self) -> tuple[str, ...]:
        """The decoding options this sampling sets away from their defaults (seed aside)."""
        unset = GREEDY
        return tuple(name for name in SAMPLING_OPTIONS if getattr(self, name) != getattr(unset, name))


GREEDY = Sampling()


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
    sampling: Sampling = GREEDY
    # Which of a question's k samples this is (--repeats); `id` is then unique per sample
    # (kaoshi.models.base.request_id), so a scripted backend reads the question id back with question_of.
    sample: int = 0


# Between a question id and its sample index in a request id of a sample after the first: a control
# character no question id holds, so a request id maps back to one (question, sample) pair.
_SAMPLE_MARK = "\x1f"


def request_id(question_id: str, sample: int) -> str:
    """A request's id: the question id for its first sample, unique per sample for the others."""
    return question_id if sample == 0 else f"{question_id}{_SAMPLE_MARK}{sample}"


def question_of(request_id: str) -> tuple[str, int]:
    """The (question id, sample index) a request id stands for."""
    question_id, mark, sample = request_id.rpartition(_SAMPLE_MARK)
    return (question_id, int(sample)) if mark and sample.isdigit() else (request_id, 0)


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
    # The model the server says answered, set only when it differs from the one asked for: a gateway may
    # route a request elsewhere, and the numbers are then not the asked model's.
    served_model: str | None = None
    # The model's reasoning (a reasoning model's `reasoning_content`), kept apart from the answer text and
    # never read for the answer; the backends that receive it separately fill it.
    reasoning: str | None = None
    # Tokens of the reasoning, where the backend knows them (a server's usage.completion_tokens_details,
    # a local tokenizer); they are part of tokens_out.
    reasoning_tokens: int | None = None
    # Prompt tokens a server read from its prompt cache (usage.prompt_tokens_details.cached_tokens; DeepSeek's
    # prompt_cache_hit_tokens), part of tokens_in and priced lower by providers that cache; None: not said.
    cached_tokens: int | None = None
    # The provider batch that answered it (kaoshi run --batch; None: a real-time request).
    batch_id: str | None = None


# Field names that hold credentials: --extra-body is recorded in the run spec, so it refuses them.
_SECRET_FIELD = re.compile(r"api[_-]?key|secret|password|authorization|access[_-]?token|credential", re.I)


def parse_extra_body(text: str) -> dict[str, Any]:
    """--extra-body's JSON object; ValueError for anything else, or a field that holds a credential."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"--extra-body is not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ValueError(f"--extra-body must be a JSON object, got {type(value).__name__}")
    check_extra_body(value)
    return value


# Request fields kaoshi sets itself, each from its own option: --extra-body may not change them behind the
# run spec's back (a spec saying temperature 0.6 over requests sent at 0).
OWN_FIELDS = frozenset(
    {
        "model", "messages", "prompt", "max_tokens", "max_completion_tokens", "temperature", "top_p",
        "top_k", "seed", "stop", "n", "stream", "logprobs", "top_logprobs", "echo",
    }
)  # fmt: skip


def check_extra_body(body: Mapping[str, Any], *, top: bool = True) -> None:
    """ValueError for a field kaoshi sets itself (at the top), or one that holds a credential (at any
    depth: the body is recorded in the spec)."""
    own = sorted(OWN_FIELDS & set(body)) if top else []
    if own:
        raise ValueError(
            f"--extra-body sets {', '.join(own)}, which kaoshi sets from its own options (--temperature, "
            "--top-p, --top-k, --seed, --max-new-tokens, ...)"
        )
    for key, value in body.items():
        if _SECRET_FIELD.search(str(key)):
            raise ValueError(
                f"--extra-body field {key!r} looks like a credential; it would be recorded in the run "
                "spec: pass credentials through --api-key-env"
            )
        if isinstance(value, Mapping):
            check_extra_body(value, top=False)


@dataclass(frozen=True)
class ModelOptions:
    """What a model is loaded with; each backend reads the settings that concern it.

    Each field is the `kaoshi run` option of that name (generated from its `cli(...)` metadata; a run's
    `kaoshi.RunConfig` holds these in its `backend`). Seed, batch size and adapter are listed among a
    command's own options (the run's seed also chooses its exemplars and sample, its adapter is recorded
    in the run spec); the other settings under their backends' help sections. An adapter may be given as
    a Path; it is kept as a str."""

    seed: int = field(
        default=0,
        metadata=cli(
            "chooses the exemplars and seeds sampling (each of --repeats' samples gets its own seed from it)",
            type=int,
        ),
    )
    batch_size: int | None = field(
        default=None, metadata=cli("requests per model call (default: the backend's)", type=int)
    )
    # a LoRA adapter folder (kaoshi finetune) merged into hf/gguf/smollm2 models when they load
    adapter: str | None = field(
        default=None, metadata=cli("a LoRA adapter folder from kaoshi finetune (hf, gguf, smollm2 models)")
    )
    # HTTP APIs
    # several: requests spread over them (models/endpoints.py)
    base_url: str | tuple[str, ...] | None = field(
        default=None,
        metadata=cli(
            "OpenAI-compatible endpoint (default: $OPENAI_BASE_URL or api.openai.com); repeat it to spread "
            "requests over several servers",
            action="append",
            collect=lambda urls: None if not urls else urls[0] if len(urls) == 1 else tuple(urls),
            group=_BACKENDS,
        ),
    )
    api_key_env: str = field(
        default="OPENAI_API_KEY", metadata=cli("environment variable holding the API key", group=_BACKENDS)
    )
    concurrency: int = field(
        default=8, metadata=cli("API requests in flight at once", type=int, group=_BACKENDS)
    )
    requests_per_minute: float | None = field(
        default=None,
        metadata=cli("at most this many API requests per minute", flag="--rpm", type=float, group=_BACKENDS),
    )
    timeout_s: float = field(
        default=120.0,
        metadata=cli(
            "seconds before an API request times out", flag="--timeout", type=float, group=_BACKENDS
        ),
    )
    max_retries: int = field(
        default=6, metadata=cli("retries of a failed API request", type=int, group=_BACKENDS)
    )
    # how long a request may keep retrying in all, Retry-After waits included (None: timeout_s x max_retries)
    max_wait_s: float | None = field(
        default=None,
        metadata=cli(
            "how long a request may keep retrying in all, a server's Retry-After included (default: "
            "--timeout x --max-retries)",
            flag="--max-wait",
            type=float,
            metavar="SECONDS",
            group=_BACKENDS,
        ),
    )
    # The longest reply text kept; a longer one is an error sample, and a body is read no further than
    # 32 bytes per character (openai_transport.REPLY_BYTES_PER_CHAR). 500,000 characters are about
    # 125,000 tokens of English (4 characters a token), beyond the longest output APIs offer today.
    max_reply_chars: int = field(
        default=500_000,
        metadata=cli(
            "the longest API reply text kept; a longer one is an error sample (default 500,000)",
            type=int,
            group=_BACKENDS,
        ),
    )
    # Log-likelihood over /completions: a question's candidates and the next questions' in one request.
    prompts_per_request: int = field(
        default=32,
        metadata=cli(
            "openai --method loglik: the most prompts one request carries (a question's candidates, and "
            "the next questions' while they fit; 1: one candidate a request)",
            type=int,
            group=_BACKENDS,
        ),
    )
    # Request fields merged into every generation request's body, over kaoshi's own (openai); recorded in
    # the run spec, so never a secret.
    extra_body: Mapping[str, Any] | None = field(
        default=None,
        metadata=cli(
            "openai: a JSON object merged into each generation request's body over kaoshi's own fields, "
            'e.g. \'{"reasoning_effort": "high"}\' (recorded in the run spec: never a secret)',
            parse=parse_extra_body,
            metavar="JSON",
            group=_BACKENDS,
        ),
    )
    # local weights
    device: str = field(default="auto", metadata=cli("hf: auto, cpu, cuda, cuda:1 ...", group=_BACKENDS))
    dtype: str = field(
        default="auto", metadata=cli("hf/vllm: auto, float32, bfloat16, float16", group=_BACKENDS)
    )
    max_length: int | None = field(
        default=None, metadata=cli("context window override (tokens)", type=int, group=_BACKENDS)
    )
    trust_remote_code: bool = field(
        default=False,
        metadata=cli("hf/vllm: run the model repo's own code", action="store_true", group=_BACKENDS),
    )
    tensor_parallel_size: int = field(
        default=1, metadata=cli("vllm: GPUs per model", type=int, group=_BACKENDS)
    )
    # Data parallelism on Ray (models/ray_replicas.py): replicas of the backend, each with its GPUs.
    ray: bool = field(
        default=False, metadata=cli("run the backend in Ray actors", action="store_true", group=_RAY)
    )
    replicas: int = field(
        default=1, metadata=cli("backend replicas, one Ray actor each", type=int, group=_RAY)
    )
    gpus_per_replica: float = field(
        default=0, metadata=cli("GPUs each replica holds", type=float, group=_RAY)
    )
    ray_address: str | None = field(
        default=None, metadata=cli("join this Ray cluster (e.g. auto, ray://head:10001)", group=_RAY)
    )

    @property
    def on_ray(self) -> bool:
        return self.ray or self.replicas > 1 or self.ray_address is not None

    def __post_init__(self) -> None:
        if self.adapter is not None:  # a Path given (evaluate(adapter=Path(...))): the str backends read
            object.__setattr__(self, "adapter", str(self.adapter))
        # Zero or negative values would silently turn timeouts, retries or rate limits off.
        positive = {
            "--timeout": self.timeout_s,
            "--concurrency": self.concurrency,
            "--rpm": self.requests_per_minute,
            "--max-wait": self.max_wait_s,
            "--max-reply-chars": self.max_reply_chars,
            "--prompts-per-request": self.prompts_per_request,
            "--batch-size": self.batch_size,
            "--max-length": self.max_length,
            "--tensor-parallel-size": self.tensor_parallel_size,
            "--replicas": self.replicas,
        }
        for flag, value in positive.items():
            if value is not None and not value > 0:  # `not >` also refuses NaN
                raise ModelError(f"{flag} must be > 0, got {value:g}")
        if self.extra_body is not None:
            if not isinstance(self.extra_body, Mapping):
                raise ModelError(f"extra_body must be a mapping, not {type(self.extra_body).__name__}")
            try:
                check_extra_body(self.extra_body)
            except ValueError as exc:
                raise ModelError(str(exc)) from None
        if self.max_retries < 0:
            raise ModelError(f"--max-retries must be >= 0, got {self.max_retries}")
        if not self.gpus_per_replica >= 0:
            raise ModelError(f"--gpus-per-replica must be >= 0, got {self.gpus_per_replica:g}")


class ChatForm(TextEnum):
    """How a backend sends prompts unless the run says otherwise (--chat / --no-chat)."""

    PLAIN = "plain"  # the prompt text
    CHAT = "chat"  # chat messages
    # Chat messages where the loaded model has a chat template (its tokenizer's, its GGUF file's), else
    # the prompt text: known only once the model has loaded.
    LOADED = "loaded"


# The run's methods (--method) -> the Model method that answers them.
METHOD_ENTRIES = {"generate": "generate", "loglik": "loglikelihood"}


@dataclass(frozen=True)
class Capabilities:
    """What a backend class can do, declared on it (`Model.capabilities`) and read without loading a
    model: the run's checks, --adapter, kaoshi finetune, the default chat form of a run and `kaoshi
    models` all read it from there."""

    description: str = ""  # one line: what the backend runs
    # What follows `NAME:` in a model spec ("FILE", "MODEL"); empty: the name alone is the spec.
    argument: str = ""
    # The methods it answers ("generate", "loglik"); a declaration must name exactly the ones whose Model
    # method (METHOD_ENTRIES) the class overrides.
    methods: frozenset[str] = frozenset()
    chat: ChatForm = ChatForm.PLAIN
    chat_loglik: ChatForm | None = None  # --method loglik's default form where it differs from `chat`
    # The decoding options (SAMPLING_OPTIONS) it honours; a run setting another is refused before any
    # request. Every backend takes a request's seed.
    sampling: frozenset[str] = frozenset()
    extra_body: bool = False  # it sends ModelOptions.extra_body (--extra-body) with its requests
    # Local transformers weights: --adapter applies a LoRA adapter to them, and kaoshi finetune trains one.
    adapters: bool = False
    # A provider batch endpoint (kaoshi run --batch): the class overrides Model.batch_endpoint.
    batch_endpoint: bool = False
    # The modules it imports once chosen (`kaoshi models` looks for them without importing them), and the
    # command that installs them.
    needs: tuple[str, ...] = ()
    install: str = ""

    def __post_init__(self) -> None:
        unknown_methods = sorted(set(self.methods) - set(METHOD_ENTRIES))
        if unknown_methods:
            raise ValueError(f"unknown methods {unknown_methods} (known: {', '.join(METHOD_ENTRIES)})")
        unknown_options = sorted(set(self.sampling) - set(SAMPLING_OPTIONS))
        if unknown_options:
            raise ValueError(
                f"unknown sampling options {unknown_options} (known: {', '.join(SAMPLING_OPTIONS)})"
            )

    def chat_form(self, method: str) -> ChatForm:
        """The default form of a run of `method`."""
        return self.chat_loglik if method == "loglik" and self.chat_loglik is not None else self.chat

    def chat_before_load(self, method: str) -> bool | None:
        """Whether a run of `method` sends chat messages unless it says otherwise, known before a model
        loads; None where only the loaded model knows (ChatForm.LOADED)."""
        form = self.chat_form(method)
        return None if form is ChatForm.LOADED else form is ChatForm.CHAT


class Model:
    """Base class of every backend. Override `generate` and/or `loglikelihood`, and declare what the
    backend can do in `capabilities`.

    Both take a batch and yield one ModelOutput per request, in any order, as soon as each is ready:
    the runner stores each output the moment it arrives.
    """

    name = "model"
    default_batch_size = 1
    # What this backend can do; each backend class declares its own. A subclass that declares none (a
    # backend written before capabilities were) keeps its parent's, answers the methods it overrides, and
    # has its chat form known once it loads, as it may set `default_chat` when it does.
    capabilities: ClassVar[Capabilities] = Capabilities(chat=ChatForm.LOADED)
    # The chat form a ChatForm.LOADED backend found when it loaded (set through `default_chat`).
    _loaded_chat: bool | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "default_chat_loglik" in vars(cls):
            # read before capabilities were declared, and no longer: a class still setting it would run its
            # log-likelihood prompts in the other form without a word
            raise TypeError(
                f"{cls.__qualname__} sets default_chat_loglik, which kaoshi no longer reads: declare "
                "capabilities = Capabilities(..., chat_loglik=ChatForm.CHAT or ChatForm.PLAIN) "
                "(kaoshi.models.base)"
            )
        overridden = frozenset(
            method
            for method, entry in METHOD_ENTRIES.items()
            if getattr(cls, entry) is not getattr(Model, entry)
        )
        if "capabilities" not in vars(cls):
            cls.capabilities = replace(cls.capabilities, methods=overridden)
            return
        # A declaration that says otherwise than the code would be believed by every reader of it.
        declared = cls.capabilities
        if declared.methods != overridden:
            raise TypeError(
                f"{cls.__qualname__} declares the methods {sorted(declared.methods)} but answers "
                f"{sorted(overridden)}: a method is answered by overriding {METHOD_ENTRIES}"
            )
        batches = cls.batch_endpoint is not Model.batch_endpoint
        if declared.batch_endpoint != batches:
            raise TypeError(
                f"{cls.__qualname__} declares batch_endpoint={declared.batch_endpoint} but "
                f"{'overrides' if batches else 'does not override'} Model.batch_endpoint"
            )

    @property
    def default_chat(self) -> bool:
        """Whether prompts are sent as chat messages unless the run says otherwise (--chat / --no-chat):
        the class's declaration, or for ChatForm.LOADED what the backend found when it loaded."""
        if self._loaded_chat is not None:
            return self._loaded_chat
        return self.capabilities.chat is ChatForm.CHAT

    @default_chat.setter
    def default_chat(self, chat: bool) -> None:
        self._loaded_chat = chat

    @property
    def sampling_options(self) -> frozenset[str]:
        """The decoding options (SAMPLING_OPTIONS) this backend honours."""
        return self.capabilities.sampling

    @property
    def takes_extra_body(self) -> bool:
        """Whether the backend sends ModelOptions.extra_body (--extra-body) with its requests."""
        return self.capabilities.extra_body

    def cached_by_default(self) -> bool:
        """Whether a run takes this backend's answers from the cache unless it says otherwise
        (kaoshi.runner.cache): a provider's model, whose requests are paid for and whose name is the
        model. A local model's weights may change under the same spec (a folder trained again, a new
        checkpoint served under the same name), so its runs ask it afresh."""
        return False

    def default_chat_for(self, method: str) -> bool:
        """Whether a run of `method` sends chat messages unless it says otherwise."""
        loglik = self.capabilities.chat_loglik
        if method == "loglik" and loglik is not None and loglik is not ChatForm.LOADED:
            return loglik is ChatForm.CHAT
        return self.default_chat

    def __init__(self, spec: str, options: ModelOptions) -> None:
        self.spec = spec
        self.options = options

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        raise CapabilityError(f"model {self.spec!r} cannot generate text")

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        raise CapabilityError(f"model {self.spec!r} cannot score log-likelihoods; use --method generate")

    def supports(self, method: str) -> bool:
        """Whether this backend answers `method` ("generate", "loglik")."""
        return method in self.capabilities.methods

    def fits(self, prompt_text: str, messages: tuple[Message, ...] | None = None, reserve: int = 256) -> bool:
        """Whether a prompt and `reserve` new tokens fit the context window; backends with a tokenizer
        override this."""
        return True

    def count_tokens(self, prompt_text: str, messages: tuple[Message, ...] | None = None) -> int | None:
        """The prompt's tokens as this model reads them (its chat template applied for `messages`); None
        for a backend without a tokenizer here (a provider's model): an estimate then approximates."""
        return None

    def chunk_size(self, method: str) -> int:
        """How many requests the runner hands over at once (the backend still streams each result back)."""
        return self.batch_size

    @property
    def batch_size(self) -> int:
        return self.options.batch_size or self.default_batch_size

    def batch_endpoint(self) -> BatchEndpoint | None:
        """The provider batch endpoint this model's generation requests can go through (kaoshi run
        --batch; kaoshi.models.batches); None: the model has none."""
        return None

    def close(self) -> None:
        """Release resources (weights, connections)."""
