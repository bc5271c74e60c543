"""A benchmark: the frozen value the registry maps a name to, and what its loader is asked for."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from kaoshi.prompts.base import Template
from kaoshi.results.layout import DomainLayout, LeaderboardLayout
from kaoshi.results.metric import Metric

if TYPE_CHECKING:
    from kaoshi.data.collect import LoadResult
    from kaoshi.store.records import RunRecord, SampleRecord


@dataclass(frozen=True)
class LoadRequest:
    """What `kaoshi.benchmarks.load_exam_result` asks a benchmark's loader for."""

    data: Path | None  # a file or folder; None: the hub, or the copy kaoshi ships
    split: str | None = None  # None: the benchmark's default
    clean: bool = False  # apply the benchmark's cleaning rule, where it has one
    subjects: tuple[str, ...] | None = None  # only these subjects, where the benchmark has subjects


class Specificity(enum.IntEnum):
    """How much of a path a benchmark's detector recognises. Detection asks every benchmark; the most
    specific claim wins, and two equally specific claims are refused (kaoshi.benchmarks.detect)."""

    ANY_FILE = 1  # any file at all: kaoshi's own format, whose loader then names the rows that do not fit
    FILE_TYPE = 2  # the kind of file only: QualBench takes any .json
    FORMAT = 3  # its layout, header or fields (what a detector returning True claims)
    OWN_NAMES = 4  # its format holding its own subject or task names: C-Eval's layout with FinEval's subjects


# Does this existing path hold the benchmark's data, and how specifically is it told? None or False: no.
Detector: TypeAlias = Callable[[Path], "Specificity | bool | None"]


@dataclass(frozen=True)
class Exporter:
    """A file another tool takes, made from one run on the benchmark (`kaoshi export NAME`)."""

    name: str
    description: str
    # (run, its samples, the file to write) -> the lines to tell the user; raises when it cannot be done
    write: Callable[[RunRecord, Iterable[SampleRecord], Path], tuple[str, ...]]


@dataclass(frozen=True)
class PublishedCheck:
    """What was checked against the benchmark's own published repository, at one commit: the loader's
    count on its files beside the official one, and whether kaoshi's prompt and score equal what the
    official code builds and scores on real rows (tests/realdata runs these checks again)."""

    repository: str  # owner/name on GitHub
    commit: str  # the commit checked
    official_count: str  # as the authors state it, e.g. "11,582 test"
    loaded: str  # what kaoshi loads from those files with the default options
    prompt_parity: str  # e.g. "identical on 11,582 rows, 0/5-shot"; "—" where no official code builds prompts
    score_parity: str  # e.g. "equal on 412 outputs"; "—" where no official code scores


@dataclass(frozen=True)
class Benchmark:
    """Everything kaoshi knows of one benchmark, registered under `name`."""

    name: str
    description: str
    load: Callable[[LoadRequest], LoadResult]
    default_prompt: str = "default"  # the template `kaoshi run` uses without --prompt
    # Does this existing path hold the benchmark's format, and how specifically (Specificity; True is
    # FORMAT)? None: never detected; give --benchmark
    detect: Detector | None = None
    hub_id: str | None = None  # the Hugging Face dataset `load` reads when the request has no data
    categories: Mapping[str, str] = field(default_factory=dict)  # subject or domain -> its category
    leaderboard: LeaderboardLayout = field(default_factory=DomainLayout)
    exporters: tuple[Exporter, ...] = ()
    # For `kaoshi benchmarks`: what --data takes, the splits, the published size, the data's licence.
    formats: str = ""
    splits: tuple[str, ...] = ()
    size: str = ""
    licence: str = ""
    published: PublishedCheck | None = None  # what was checked on the benchmark's own files
    # Chinese subject or domain names -> the English ones its paper uses (plots without a Chinese font)
    english_names: Mapping[str, str] = field(default_factory=dict)
    # its own prompt templates, found by name like kaoshi's generic ones
    templates: tuple[Template, ...] = ()
    # its own numbers in its runs' reports and leaderboards, beyond what every exam has
    # (kaoshi.results.metric; shared ones in kaoshi.benchmarks.common.statistics: F1s over answer
    # strings, category averages)
    metrics: tuple[Metric, ...] = ()
