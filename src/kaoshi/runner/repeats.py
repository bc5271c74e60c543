"""k samples a question (kaoshi run --repeats K): each sample's seed, and how its decoding is set."""

from __future__ import annotations

import hashlib

from kaoshi.models.base import Sampling
from kaoshi.store.records import RunSpec

# Seeds stay below 2**31: every backend's seed argument takes them (some are C ints).
_SEED_RANGE = 2**31 - 1


def sample_seed(seed: int, question_id: str, sample: int) -> int:
    """The seed of sample `sample` of question `question_id` in a run of seed `seed`: a hash of all three.

    Each question's samples get their own seeds, never shared with another question: a backend that
    draws the same noise for the same seed (torch's generator, vLLM's per-request one) would otherwise
    push every question's sample k the same way, so that the samples of one index rise and fall together
    and avg@k's interval, which treats questions as independent, would be too narrow. Runs with nearby
    seeds share none either (seed + k would give seed 1's second sample seed 2's first)."""
    digest = hashlib.sha256(f"kaoshi-sample:{seed}:{sample}:{question_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % _SEED_RANGE


def sampling_of(spec: RunSpec, question_id: str, sample: int) -> Sampling:
    """How the run decodes sample `sample` of a question: the spec's settings with that sample's seed. A
    greedy run keeps the run's seed (what it always sent; greedy decoding draws nothing)."""
    sampled = spec.temperature > 0
    return Sampling(
        temperature=spec.temperature,
        top_p=spec.top_p,
        top_k=spec.top_k,
        seed=sample_seed(spec.seed, question_id, sample) if sampled else spec.seed,
        thinking=spec.thinking,
    )
