"""Row-level data errors: every bad row is reported with file, line, field and reason."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RowError:
    file: str
    line: int | None
    field: str | None
    reason: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        what = f"field '{self.field}': " if self.field else ""
        return f"{where}: {what}{self.reason}"


class DataError(Exception):
    """Input data could not be loaded; carries every row error found, not just the first."""

    def __init__(self, message: str, errors: tuple[RowError, ...] = ()) -> None:
        super().__init__(message)
        self.errors = errors

    def __str__(self) -> str:
        lines = [self.args[0]]
        lines.extend(f"  {error}" for error in self.errors[:50])
        if len(self.errors) > 50:
            lines.append(f"  ... and {len(self.errors) - 50} more")
        return "\n".join(lines)


class FieldError(ValueError):
    """Raised by a row parser; the loader adds file and line."""

    def __init__(self, field: str | None, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason
