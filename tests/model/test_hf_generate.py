"""Greedy generation on shared prefixes gives what transformers' own greedy `generate` gives, prompt by
prompt: a tiny random Llama (no weights to download) stands in for a real model."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kaoshi.models.hf_generate import Decoder, Row, eos_ids, growing_cache, plain_greedy

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

EOS = 3
PAD = 0


@pytest.fixture(scope="module")
def tiny() -> Any:
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=48,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        eos_token_id=EOS,
        pad_token_id=PAD,
        bos_token_id=1,
        # Peaked weights and fast-turning rotary positions: a row read at wrong positions, or with a
        # padding slot unmasked, generates something else.
        initializer_range=0.1,
        rope_parameters={"rope_type": "default", "rope_theta": 10.0},
    )
    model = transformers.LlamaForCausalLM(config).eval()
    model.generation_config.eos_token_id = EOS
    model.generation_config.pad_token_id = PAD
    return model


def reference(model: Any, prompt: list[int], budget: int) -> list[int]:
    """transformers' greedy generation of one unpadded prompt, without the end token."""
    with torch.inference_mode():
        out = model.generate(
            torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
            max_new_tokens=budget, do_sample=False,
        )[0, len(prompt):].tolist()  # fmt: skip
    return out[: out.index(EOS)] if EOS in out else out


def decoder(model: Any) -> Decoder:
    return Decoder(
        model, torch, torch.device("cpu"), PAD, frozenset({EOS}), lambda ids: "".join(f"<{i}>" for i in ids)
    )


def test_rows_of_several_prefix_groups_decode_as_their_prompts_alone(tiny: Any) -> None:
    rng = random.Random(1)
    prefixes = [[rng.randrange(4, 48) for _ in range(n)] for n in (9, 17, 5)]
    rows, prompts = [], []
    for group, prefix in enumerate(prefixes):
        for _ in range(4):
            tail = [rng.randrange(4, 48) for _ in range(rng.randrange(1, 12))]  # tails of unequal length
            rows.append(Row(group, tail, rng.choice([3, 8, 20]), ()))
            prompts.append(prefix + tail)
    engine = decoder(tiny)
    caches = [(engine.prefill(prefix), len(prefix)) for prefix in prefixes]
    list(engine.generate(dict(enumerate(caches)), rows))
    for row, prompt in zip(rows, prompts, strict=True):
        assert row.tokens == reference(tiny, prompt, row.budget)[: row.budget]
    assert any(len(row.tokens) == row.budget for row in rows)


def test_an_end_token_and_a_stop_string_end_a_row(tiny: Any) -> None:
    engine = decoder(tiny)
    prefix = [5, 6, 7, 8]
    cache = {0: (engine.prefill(prefix), len(prefix))}
    free = Row(0, [9, 10], 30, ())
    list(engine.generate(cache, [free]))
    expected = reference(tiny, [*prefix, 9, 10], 30)
    assert free.tokens == expected and len(expected) > 2
    stop = expected[2]  # its text ends the row where it first appears
    stopped = Row(0, [9, 10], 30, (f"<{stop}>",))
    list(engine.generate(cache, [stopped]))
    assert stopped.tokens == expected[: expected.index(stop) + 1]


def test_each_row_comes_out_as_it_ends_while_the_batch_decodes_on(tiny: Any) -> None:
    """A batch's answers leave one by one (what the progress bar counts), not all when the last ends."""
    engine = decoder(tiny)
    prefix = [5, 6, 7, 8, 9]
    cache = {0: (engine.prefill(prefix), len(prefix))}
    rows = [Row(0, [10 + i, 11], budget, ()) for i, budget in enumerate((2, 40, 5, 12))]
    seen: list[Row] = []
    for row in engine.generate(cache, rows):
        # when a row comes out, the rows still decoding have generated no more than it has
        out = {id(other) for other in [*seen, row]}
        assert all(len(other.tokens) <= len(row.tokens) for other in rows if id(other) not in out)
        seen.append(row)
    assert sorted(map(id, seen)) == sorted(map(id, rows))
    assert [len(row.tokens) for row in seen] == sorted(len(row.tokens) for row in rows)
    for row in rows:  # streaming leaves every answer as it was
        assert row.tokens == reference(tiny, [*prefix, *row.tail], row.budget)[: row.budget]


def test_eos_ids_and_plain_greedy() -> None:
    config = transformers.GenerationConfig(eos_token_id=[2, 7])
    assert eos_ids(config) == frozenset({2, 7})
    assert plain_greedy(config)
    assert not plain_greedy(transformers.GenerationConfig(repetition_penalty=1.2))
    assert not plain_greedy(transformers.GenerationConfig(no_repeat_ngram_size=3))


def test_only_plain_caches_take_the_prefix_path(tiny: Any) -> None:
    """A sliding-window layer counts the padding between prefix and tail as tokens: such models must
    not be given the prefix path (CausalLM.plain_cache in models/hf_lm.py asks plain_layers)."""
    from kaoshi.models.hf_generate import plain_layers

    def cache_of(model: Any) -> Any:
        with torch.inference_mode():
            return model(input_ids=torch.tensor([[5, 6, 7]]), use_cache=True).past_key_values

    layers = plain_layers(cache_of(tiny))
    assert layers is not None and len(layers) == 2 and layers[0][0].shape[-2] == 3
    config = transformers.MistralConfig(
        vocab_size=48, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, sliding_window=2,
    )  # fmt: skip
    assert plain_layers(cache_of(transformers.MistralForCausalLM(config).eval())) is None


def test_a_growing_cache_reads_as_transformers_own() -> None:
    torch.manual_seed(1)
    keys, values = torch.randn(3, 2, 4, 8), torch.randn(3, 2, 4, 8)
    grown, reference = transformers.DynamicCache(), transformers.DynamicCache()
    grown.update(keys, values, 0)
    reference.update(keys.clone(), values.clone(), 0)
    growing_cache(grown, 2)
    assert type(grown.layers[0]).__name__ == "GrowingLayer"
    for step in range(6):  # past its room of 2: it grows
        if step == 3:  # rows finish and leave the batch
            index = torch.tensor([0, 2])
            grown.batch_select_indices(index)
            reference.batch_select_indices(index)
        rows = len(grown.layers[0].keys)
        new_keys, new_values = torch.randn(rows, 2, 1, 8), torch.randn(rows, 2, 1, 8)
        got = grown.update(new_keys, new_values, 0)
        want = reference.update(new_keys, new_values, 0)
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    assert grown.get_seq_length() == reference.get_seq_length() == 10
    grown.crop(-3)
    reference.crop(-3)
    assert torch.equal(grown.layers[0].keys, reference.layers[0].keys)
    assert torch.equal(
        grown.update(keys[:2, :, :1], values[:2, :, :1], 0)[0],
        reference.update(keys[:2, :, :1], values[:2, :, :1], 0)[0],
    )
