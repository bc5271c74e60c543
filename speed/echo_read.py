"""What reading one candidate's score from an echo reply costs the client, against parsing the reply's
JSON (the floor: every reply is parsed), on a 5-shot C-Eval-like prompt.

Since issue 40 a reply is read only when its tokens spell the prompt sent: a reply spelled exactly by
whole-text tokens is checked at C speed (one join, one comparison) and only the tokens around the
candidate get spans; a reply with pieces of split characters (vLLM's U+FFFD, llama-cpp-python's '') is
placed token by token in Python. The toy echo of tests/support/fake_openai.py writes the replies, one
character a token, with the characters in `--split` as two byte pieces.

    .venv/bin/python speed/echo_read.py
"""

from __future__ import annotations

import json
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.fake_openai import TOY_GENERATED, toy_echo

from kaoshi.models import LoglikRequest
from kaoshi.models.openai_echo import echo_prompts, read_echo
from kaoshi.models.openai_replies import json_reply

EXEMPLAR = (
    "题目{i}：在采用分组交换的广域网中，关于路由选择协议与拥塞控制的下列说法中，正确的是____\n"
    "A. 距离向量协议在每个路由器上保存整个网络的拓扑\nB. 链路状态协议收敛较慢且易产生计数到无穷问题\n"
    "C. 拥塞控制的目的是防止过多的分组注入网络\nD. 流量控制与拥塞控制是同一概念的两种说法\n答案：C\n\n"
)
CONTEXT = (
    "以下是中国关于计算机网络考试的单项选择题，请选出其中的正确答案。\n\n"
    + "".join(EXEMPLAR.format(i=i) for i in range(5))
    + "题目：最后的问题____\nA. 甲\nB. 乙\nC. 丙\nD. 丁\n答案："
)
SHAPES = {
    "whole tokens": ("chars", ""),
    "vLLM, U+FFFD pieces": ("vllm", "甲乙"),
    "llama-cpp-python, '' pieces": ("llamacpp", "甲乙"),
}


def main() -> None:
    prompts = echo_prompts(LoglikRequest("q", CONTEXT, ("A", "B", "C", "D")))
    print(f"prompt: {len(prompts[0].text)} characters, 4 candidates")
    print("| reply | tokens | read a candidate | parse its JSON | read / parse |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, (style, split) in SHAPES.items():
        choices = []
        for prompt in prompts:
            tokens = toy_echo(prompt.text, (), split, style, generate=True)
            logprobs = {
                "tokens": [t.text for t in tokens],
                "token_logprobs": [t.logprob for t in tokens],
                "text_offset": [t.offset for t in tokens],
            }
            choices.append({"index": 0, "text": prompt.text + TOY_GENERATED, "logprobs": logprobs})
        bodies = [json.dumps({"choices": [choice]}, ensure_ascii=False).encode() for choice in choices]
        runs = 300
        read = timeit.timeit(
            lambda c=choices: [read_echo(*pair) for pair in zip(c, prompts, strict=True)], number=runs
        )
        parse = timeit.timeit(lambda b=bodies: [json_reply(body) for body in b], number=runs)
        read_ms, parse_ms = (1e3 * t / runs / len(prompts) for t in (read, parse))
        count = len(choices[0]["logprobs"]["tokens"])
        print(f"| {name} | {count} | {read_ms:.3f} ms | {parse_ms:.3f} ms | {read_ms / parse_ms:.2f} |")


if __name__ == "__main__":
    main()
