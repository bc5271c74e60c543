"""Any Python callable `prompt -> text` as a backend (`kaoshi.evaluate(exam, model=fn)`)."""

from __future__ import annotations

import hashlib
import time
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from kaoshi.models.base import Capabilities, GenerateRequest, Model, ModelOptions, ModelOutput

PromptFunction = Callable[[Any], str]


def function_spec(function: Callable[..., Any]) -> str:
    """`function:<module>.<qualified name>#<code hash>`: what the run spec records for a callable backend.

    The hash of its code (bytecode, constants, names) tells apart two lambdas, or a function edited in a
    notebook, so that a run never resumes with another function's stored answers."""
    module = getattr(function, "__module__", None) or "?"
    name = getattr(function, "__qualname__", None) or type(function).__qualname__
    return f"function:{module}.{name}#{_code_hash(function)}"


def _code_hash(function: Callable[..., Any]) -> str:
    code = getattr(function, "__code__", None)
    if code is None:  # an object with __call__: hash its method's code
        code = getattr(vars(type(function)).get("__call__"), "__code__", None)
    if code is None:  # a builtin or C callable: its name is all there is
        return "0" * 8
    digest = hashlib.sha256()
    for part in _code_parts(code):
        digest.update(part)
    return digest.hexdigest()[:8]


def _code_parts(code: types.CodeType) -> Iterator[bytes]:
    yield code.co_code
    yield repr(code.co_names).encode()
    for const in code.co_consts:  # nested functions are code objects: hash their code, not their address
        if isinstance(const, types.CodeType):
            yield from _code_parts(const)
        else:
            yield repr(const).encode()


class FunctionModel(Model):
    """Generation by a callable. It gets the prompt text, or for a chat run (`chat=True`) the messages as
    a list of {"role", "content"} dicts, and returns the answer text. An exception becomes that sample's
    error (stored, asked again on resume), as with any backend."""

    name = "function"
    default_batch_size = 1
    capabilities = Capabilities(
        description="a Python callable prompt -> text (kaoshi.evaluate(exam, model=fn))",
        methods=frozenset({"generate"}),
    )

    def __init__(self, function: PromptFunction, options: ModelOptions | None = None, spec: str = "") -> None:
        super().__init__(spec or function_spec(function), options or ModelOptions())
        self.function = function

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            prompt: Any = request.prompt
            if request.messages is not None:
                prompt = [{"role": role, "content": content} for role, content in request.messages]
            start = time.perf_counter()
            try:
                text = self.function(prompt)
            except Exception as exc:
                yield ModelOutput(request.id, error=f"{type(exc).__name__}: {exc}")
                continue
            latency = time.perf_counter() - start
            if not isinstance(text, str):
                error = f"the function returned {type(text).__name__}, not the answer text (str)"
                yield ModelOutput(request.id, error=error, latency_s=latency)
                continue
            yield ModelOutput(request.id, text=text, latency_s=latency)
