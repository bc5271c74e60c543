"""One lifecycle for a run of `kaoshi.evaluate`, whatever its store and model: prepared, the store opened,
the spec checked, the model loaded, run, then closed. A model kaoshi loads is closed once, whatever the
store and however the run ends; a model or a Store the caller gives is left open; the LLM extractor is
closed; a bad model spec leaves no store file; the benchmark's board is kept when a run into a file
ends, and only then."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import kaoshi
from kaoshi.analysis.cost import parse_price
from kaoshi.api.evaluation import RunCapped, RunInterrupted
from kaoshi.models import GenerateRequest, Model, ModelError, ModelOptions, ModelOutput
from kaoshi.store import RunStatus, Store, StoreError
from kaoshi.store.leases import SharedLease


class Recorded(Model):
    """Writes `load` when made and `close` when closed to the file its spec ARG names; answers A, each
    answer 1,000 tokens in and out."""

    def __init__(self, spec: str, options: ModelOptions) -> None:
        super().__init__(spec, options)
        self.log = Path(spec)
        self.record("load")

    def record(self, event: str) -> None:
        with self.log.open("a", encoding="utf-8") as log:
            log.write(event + "\n")

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            yield ModelOutput(request.id, text="答案：A", tokens_in=1000, tokens_out=1000)

    def close(self) -> None:
        self.record("close")


class Interrupted(Recorded):
    """Answers one question, then Ctrl-C."""

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        yield from list(super().generate(requests))[:1]
        raise KeyboardInterrupt


def spec(log: Path, model: str = "Recorded") -> str:
    return f"py:{__name__}:{model}:{log}"


def events(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").split() if log.exists() else []


STORES = ["new file", "existing file", "memory", "open Store", "open Store in memory"]


def run_into(kind: str, tmp_path: Path, model: str | Model, **options: object) -> kaoshi.EvalResult:
    """evaluate (two questions of each subject of the sample exam) into a store of this kind."""
    path = tmp_path / "store.sqlite"
    if kind == "existing file":
        kaoshi.evaluate("sample", "random", limit=1, store=path, run_name="before")
    if kind.startswith("open Store"):
        with Store(":memory:" if kind.endswith("memory") else path) as store:
            result = kaoshi.evaluate("sample", model, limit=2, store=store, **options)  # type: ignore[arg-type]
            assert store.get_run(result.name).n_samples == 8  # the caller's store is still open
            return result
    store_given = None if kind == "memory" else path
    return kaoshi.evaluate("sample", model, limit=2, store=store_given, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", STORES)
def test_a_model_kaoshi_loads_is_closed_once_whatever_the_store(kind: str, tmp_path: Path) -> None:
    log = tmp_path / "model.log"
    result = run_into(kind, tmp_path, spec(log))
    assert result.new_samples == 8 and events(log) == ["load", "close"]
    assert (result.store is None) == kind.endswith("memory")


@pytest.mark.parametrize("kind", STORES)
def test_a_model_passed_in_is_never_closed(kind: str, tmp_path: Path) -> None:
    log = tmp_path / "model.log"
    model = Recorded(str(log), ModelOptions())
    assert run_into(kind, tmp_path, model).new_samples == 8
    assert events(log) == ["load"]


@pytest.mark.parametrize("kind", STORES)
def test_the_extractor_is_loaded_once_and_closed(kind: str, tmp_path: Path) -> None:
    model_log, extractor_log = tmp_path / "model.log", tmp_path / "extractor.log"
    run_into(kind, tmp_path, spec(model_log), llm_extractor=spec(extractor_log))
    assert events(model_log) == events(extractor_log) == ["load", "close"]


def test_a_bad_model_spec_leaves_no_store_file(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    with pytest.raises(ModelError, match="unknown model 'nope'"):
        kaoshi.evaluate("sample", "nope", store=path)
    assert not path.exists()


def test_a_changed_spec_is_refused_before_the_model_loads(tmp_path: Path) -> None:
    path, log = tmp_path / "store.sqlite", tmp_path / "model.log"
    kaoshi.evaluate("sample", "random", limit=1, store=path, run_name="r")
    with pytest.raises(StoreError, match="run 'r' already exists with a different spec"):
        kaoshi.evaluate("sample", spec(log), limit=1, store=path, run_name="r")
    assert events(log) == []  # never loaded


def test_ctrl_c_saves_the_answers_and_closes_what_it_loaded(tmp_path: Path) -> None:
    path, model_log, extractor_log = tmp_path / "store.sqlite", tmp_path / "model.log", tmp_path / "x.log"
    with pytest.raises(RunInterrupted) as stopped:
        kaoshi.evaluate(
            "sample",
            spec(model_log, "Interrupted"),
            store=path,
            run_name="r",
            llm_extractor=spec(extractor_log),
        )
    assert (stopped.value.name, stopped.value.saved, stopped.value.store) == ("r", 1, path)
    assert events(model_log) == events(extractor_log) == ["load", "close"]
    with Store(path, read_only=True) as store:
        assert store.get_run("r").status == RunStatus.INTERRUPTED


def test_the_cost_cap_stops_the_run_and_closes_the_model(tmp_path: Path) -> None:
    path, log = tmp_path / "store.sqlite", tmp_path / "model.log"
    with pytest.raises(RunCapped) as capped:  # 0.002 an answer
        kaoshi.evaluate(
            "sample", spec(log), store=path, run_name="r", price=parse_price("1,1"), max_cost=0.003
        )
    assert capped.value.saved < 44 and capped.value.store == path
    assert events(log) == ["load", "close"]
    with Store(path, read_only=True) as store:
        assert store.get_run("r").status == RunStatus.INTERRUPTED


@pytest.fixture
def boards_kept(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Path, str]]:
    """The (store, benchmark) of each board kept at a run's end."""
    kept: list[tuple[Path, str]] = []
    monkeypatch.setattr(
        "kaoshi.api.evaluation.keep_board", lambda store, name: kept.append((store.path, name))
    )
    return kept


@pytest.mark.parametrize("kind", STORES)
def test_the_board_is_kept_when_a_run_into_a_file_ends(
    kind: str, tmp_path: Path, boards_kept: list[tuple[Path, str]]
) -> None:
    run_into(kind, tmp_path, "random")
    runs = 0 if kind.endswith("memory") else 2 if kind == "existing file" else 1  # its first run's too
    assert boards_kept == [(tmp_path / "store.sqlite", "sample")] * runs


def test_the_board_is_left_to_a_process_still_answering_the_run(
    tmp_path: Path, boards_kept: list[tuple[Path, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(SharedLease, "others_alive", lambda self: True)
    kaoshi.evaluate("sample", "random", limit=1, store=tmp_path / "store.sqlite")
    assert boards_kept == []


def test_no_board_is_kept_for_a_run_that_stopped(tmp_path: Path, boards_kept: list[tuple[Path, str]]) -> None:
    with pytest.raises(RunInterrupted):
        kaoshi.evaluate("sample", spec(tmp_path / "model.log", "Interrupted"), store=tmp_path / "s.sqlite")
    assert boards_kept == []


def test_a_model_passed_in_runs_with_the_settings_it_was_loaded_with(tmp_path: Path) -> None:
    model = Recorded(str(tmp_path / "model.log"), ModelOptions(seed=3, batch_size=4))
    assert kaoshi.evaluate("sample", model, limit=1).spec.seed == 3  # its seed is the run's
    assert kaoshi.evaluate("sample", model, limit=1, seed=3, batch_size=4).spec.seed == 3  # the same: fine
    with pytest.raises(TypeError, match=r"seed=1 \(loaded with 3\): would not reach a model already loaded"):
        kaoshi.evaluate("sample", model, limit=1, seed=1)
    with pytest.raises(TypeError, match=r"^dtype='float32' \(loaded with 'auto'\): would not reach"):
        kaoshi.evaluate("sample", model, kaoshi.RunConfig(backend=ModelOptions(dtype="float32")), limit=1)
    assert events(tmp_path / "model.log") == ["load"]
