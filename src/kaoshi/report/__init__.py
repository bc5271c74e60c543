"""Reports: summaries of runs, grouped and rendered."""

from kaoshi.report.aggregate import GROUP_KEYS, RunSummary, Tally, summarize
from kaoshi.report.render import FORMATS, render_summary

__all__ = ["FORMATS", "GROUP_KEYS", "RunSummary", "Tally", "render_summary", "summarize"]
