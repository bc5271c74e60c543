"""TextEnum: the base of kaoshi's string-valued enums (statuses, methods, policies)."""

from __future__ import annotations

import enum


class TextEnum(str, enum.Enum):
    """A str-valued enum that prints as its value, like enum.StrEnum (Python 3.11+; kaoshi runs on 3.10).

    Members compare and hash equal to their value, and str(), f-strings, json.dumps and SQLite parameters
    all give the bare value, so stored text and printed output are the plain strings they were before.
    """

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, format_spec: str) -> str:
        return format(str(self.value), format_spec)

    @classmethod
    def known(cls) -> str:
        """The values, comma separated, for messages listing what is accepted."""
        return ", ".join(member.value for member in cls)
