"""Generated questions in the C-Eval CSV layout (our own, programmatic): a dev split of 5 solved exemplars
and a val split per subject, so the speed benchmark needs no downloaded data."""

from __future__ import annotations

import csv
import random
from pathlib import Path

HEADER = ["id", "question", "A", "B", "C", "D", "answer", "explanation"]


def _arithmetic(rng: random.Random, i: int) -> tuple[str, list[str], int, str]:
    a, b, c = rng.randint(12, 99), rng.randint(12, 99), rng.randint(2, 9)
    right = a * c + b
    wrong = sorted({right + d for d in (-c, c, 10, -10, 1)} - {right})
    options = [right, *rng.sample(wrong, 3)]
    rng.shuffle(options)
    stem = f"某仓库第{i + 1}批货物共有{c}箱，每箱{a}件，另有散装货物{b}件。这批货物一共有多少件____"
    return (
        stem,
        [str(o) for o in options],
        options.index(right),
        f"1. 每箱{a}件，共{c}箱，{a}×{c}={a * c}。\n2. 再加上散装的{b}件。",
    )


def _units(rng: random.Random, i: int) -> tuple[str, list[str], int, str]:
    meters = rng.randint(2, 60) * 50
    right = meters / 1000
    options = [right, right * 10, right / 10, right + 1]
    rng.shuffle(options)
    stem = f"第{i + 1}段施工道路长{meters}米，按工程图纸的要求换算成千米应当是多少____"
    return (
        stem,
        [f"{o:g}千米" for o in options],
        options.index(right),
        f"1. 1千米等于1000米。\n2. {meters}÷1000={right:g}。",
    )


def _percent(rng: random.Random, i: int) -> tuple[str, list[str], int, str]:
    base, rate = rng.randint(10, 90) * 100, rng.choice([5, 8, 10, 12, 15, 20, 25])
    right = base * rate // 100
    options = [right, right * 2, right // 2 + 1, base - right]
    options = list(dict.fromkeys(options))
    while len(options) < 4:
        options.append(options[-1] + 7)
    rng.shuffle(options)
    stem = f"某企业第{i + 1}季度营业收入为{base}万元，按{rate}%的比例计提费用，应计提的费用为多少万元____"
    return (
        stem,
        [str(o) for o in options],
        options.index(right),
        f"1. 计提费用=收入×比例。\n2. {base}×{rate}%={right}。",
    )


GENERATORS = {
    "high_school_mathematics": _arithmetic,
    "civil_servant": _units,
    "accountant": _percent,
    "metrology_engineer": _units,
    "college_economics": _percent,
}


def write_ceval(root: Path, subjects: dict[str, int], seed: int = 0) -> Path:
    """Write dev (5 per subject) and val (`n` per subject) CSVs; returns `root`."""
    for subject, n in subjects.items():
        rng = random.Random(f"{seed}:{subject}")
        make = GENERATORS[subject]
        for split, count in (("dev", 5), ("val", n)):
            path = root / split / f"{subject}_{split}.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w", encoding="utf-8", newline="") as f:
                writer = csv.writer(f)
                writer.writerow(HEADER)
                for i in range(count):
                    stem, options, right, explanation = make(rng, i + (100 if split == "val" else 0))
                    writer.writerow([i, stem, *options, "ABCD"[right], explanation if split == "dev" else ""])
    return root
