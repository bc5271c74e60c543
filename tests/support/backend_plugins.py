"""Model backends as another package would declare them: a backend class, and the metadata of an installed
distribution (a .dist-info folder with its entry points) that importlib.metadata finds on sys.path."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from kaoshi.models import GenerateRequest, Model, ModelOptions, ModelOutput
from kaoshi.models.base import Capabilities, ChatForm

# A module no environment has: what a backend needs that is not installed here.
ABSENT_MODULE = "kaoshi_test_absent_module"


class LetterModel(Model):
    """Answers the letter its spec names (`letter:B`), as chat messages unless the run says otherwise."""

    capabilities = Capabilities(
        description="answers the letter its spec names",
        argument="LETTER",
        methods=frozenset({"generate"}),
        chat=ChatForm.CHAT,
        needs=(ABSENT_MODULE,),
        install="pip install 'kaoshi-letter[fast]'",
    )

    def __init__(self, spec: str, options: ModelOptions) -> None:
        super().__init__(spec, options)
        self.letter = spec.partition(":")[2]

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            yield ModelOutput(request.id, text=self.letter)


def declare_backends(site: Path, distribution: str, entries: Mapping[str, str]) -> None:
    """Write what installing `distribution` with these `kaoshi.models` entry points leaves in `site`."""
    info = site / f"{distribution.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1\n", encoding="utf-8"
    )
    lines = "".join(f"{name} = {target}\n" for name, target in entries.items())
    (info / "entry_points.txt").write_text(f"[kaoshi.models]\n{lines}", encoding="utf-8")
