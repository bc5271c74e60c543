"""Row-level data errors: every bad row is reported with file, line, field and reason."""

from __future__ import annotations

from dataclasses import dataclass

from kaoshi.data.limits import MAX_FIELD_NAME_CHARS, MAX_REASON_CHARS, shorten


@dataclass(frozen=True)
class RowError:
    file: str
    line: int | None
    field: str | None
    reason: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        what = f"field '{shorten(self.field, MAX_FIELD_NAME_CHARS)}': " if self.field else ""
        return f"{where}: {what}{shorten(self.reason, MAX_REASON_CHARS)}"


class DataError(Exception):
    """Input data could not be loaded; carries every row error found, not just the first."""

    def __init__(self, message: str, errors: tuple[RowError, ...] = ()) -> None:
        super().__init__(message)
        self.errors = errors

    def __str__(self) -> str:
        # Bounded: a message quoting a huge value must not flood the terminal.
        lines = [shorten(str(self.args[0]), 4 * MAX_REASON_CHARS)]
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
