"""Plain text made safe inside Markdown prose and table cells, for pages generated from the code (the
documentation site's command-line reference and benchmark pages): what the text says is what shows."""

from __future__ import annotations

import re

# A code span: its text shows as written, so nothing inside it is escaped.
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
# Markdown's own characters outside code: emphasis, links, HTML, table cells.
_SPECIAL = re.compile(r"([\\*_\[\]|])")


def markdown_text(text: str) -> str:
    """`text` as Markdown that renders it literally: `*`, `_`, brackets, pipes and HTML tags escaped,
    code spans kept as they are (their pipes too: a table reads a pipe inside a code span as text)."""
    parts: list[str] = []
    position = 0
    for match in _CODE_SPAN.finditer(text):
        parts.append(_escape(text[position : match.start()]))
        parts.append(match.group(0))
        position = match.end()
    parts.append(_escape(text[position:]))
    return "".join(parts)


def markdown_cell(text: str) -> str:
    """`text` as one table cell: escaped, on one line."""
    return " ".join(markdown_text(text).split())


def code_span(text: str) -> str:
    """`text` as inline code, with a fence of backticks longer than any run of them inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"


def _escape(text: str) -> str:
    escaped = _SPECIAL.sub(r"\\\1", text)
    return escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
