"""k samples a question (kaoshi run --repeats K): each sample's seed, and how its decoding is set."""

from __future__ import annotations

import hashlib

from kaoshi.models.base import Sampling
from kaoshi.store.records import RunSpec

# Seeds stay below 2**31: every backend's seed argument takes them (some are C ints).
_SEED_RANGE = 2**31 - 1


def sample_seed(seed: int, sample: int) -> int:
    """The seed of a question's sample `sample` in a run of seed `seed`: the run's seed for the first
    sample (a run of one sample a question keeps the seed it always sent), a hash of both for the others,
    so that runs with nearby seeds never share a sample's seed (seed + k would: seed 1's second sample
    would be seed 2's first)."""
    if sample == 0:
        return seed
    digest = hashlib.sha256(f"kaoshi-sample:{seed}:{sample}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % _SEED_RANGE


def sampling_of(spec: RunSpec, sample: int) -> Sampling:
    """How the run decodes a question's sample `sample`: the spec's settings with that sample's seed."""
    return Sampling(
        temperature=spec.temperature,
        top_p=spec.top_p,
        top_k=spec.top_k,
        seed=sample_seed(spec.seed, sample),
        thinking=spec.thinking,
    )
