"""What a run was, in a few words: the settings behind its numbers as `kaoshi runs` and reports show them.

The run spec holds every setting (reports in JSON carry it whole); these are the ones a reader needs to
read a number right: the split, shots, whether the chat template was applied (kaoshi applies an instruct
model's chat template by default, lm-eval does not), the prompt and its version, token budgets and limits.
"""

from __future__ import annotations

from kaoshi.store.records import Method, RunSpec


def chat_text(spec: RunSpec) -> str:
    """Whether the prompts went through the model's chat template, in words."""
    return "chat template" if spec.chat else "no chat template (plain completion)"


def compact_settings(spec: RunSpec) -> str:
    """The settings as one short line for a table column: `val · 5-shot · chat · ceval-answer-only v1`."""
    return " · ".join(_parts(spec, chat="chat" if spec.chat else "no chat", short=True))


def describe_settings(spec: RunSpec) -> str:
    """The settings as a sentence for a report's note: the compact line with the chat choice spelt out."""
    return " · ".join(_parts(spec, chat=chat_text(spec), short=False))


def _parts(spec: RunSpec, chat: str, short: bool) -> list[str]:
    if spec.method is Method.VOTE:
        return [f"vote of {len(spec.members)} runs"] if spec.members else ["vote"]
    parts = [spec.split] if spec.split else []
    parts += [f"{spec.shots}-shot", chat, f"{spec.prompt} v{spec.prompt_version}"]
    if spec.system:
        parts.append("system prompt")
    if spec.method is not Method.LOGLIK:  # a loglik run ranks its objective answers (JSON has the rest)
        parts.append(_tokens(spec, short))
        parts += _decoding(spec, short)
    if spec.limit_per_subject is not None:
        parts.append(f"first {spec.limit_per_subject}/subject")
    if spec.limit is not None:
        parts.append(f"first {spec.limit}")
    if spec.sample is not None:  # drawn with the run's seed, shown with it
        parts.append(f"sample of {spec.sample.get('size')} (seed {spec.seed})")
    if spec.shuffle_seed is not None:
        parts.append(f"options shuffled (seed {spec.shuffle_seed})")
    elif (spec.shots or spec.temperature or spec.repeats > 1) and spec.sample is None:
        parts.append(f"seed {spec.seed}")  # it chose the exemplars, and seeds the samples
    if spec.shard:
        parts.append(f"shard {spec.shard}")
    if spec.rescored_from:
        parts.append(f"rescored from {spec.rescored_from}")
    return parts


def _decoding(spec: RunSpec, short: bool) -> list[str]:
    """How answers were decoded, where not greedy with the model's own thinking switch: `temperature 0.6
    · top-p 0.95 · thinking off · 5 samples a question` (short: `t0.6 · p0.95 · nothink · x5`)."""
    parts: list[tuple[str, str]] = []  # (short, long)
    if spec.temperature:
        parts.append((f"t{spec.temperature:g}", f"temperature {spec.temperature:g}"))
    if spec.top_p is not None:
        parts.append((f"p{spec.top_p:g}", f"top-p {spec.top_p:g}"))
    if spec.top_k is not None:
        parts.append((f"topk{spec.top_k}", f"top-k {spec.top_k}"))
    if spec.thinking is not None:
        switch = "on" if spec.thinking else "off"
        parts.append(("think" if spec.thinking else "nothink", f"thinking {switch}"))
    if spec.repeats > 1:
        parts.append((f"x{spec.repeats}", f"{spec.repeats} samples a question"))
    return [pair[0] if short else pair[1] for pair in parts]


def _tokens(spec: RunSpec, short: bool) -> str:
    """The generation budgets: objective answers, and open answers where theirs differs
    (short: `50/512 tokens`)."""
    open_budget = spec.max_new_tokens if spec.max_new_tokens_open is None else spec.max_new_tokens_open
    if open_budget == spec.max_new_tokens:
        return f"{spec.max_new_tokens} tokens" if short else f"{spec.max_new_tokens} new tokens"
    if short:
        return f"{spec.max_new_tokens}/{open_budget} tokens"
    return f"{spec.max_new_tokens} new tokens ({open_budget} for open answers)"
