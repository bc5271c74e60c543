"""Reports: summaries of runs, grouped and rendered."""

from kaoshi.report.render import FORMATS, render_summary
from kaoshi.results.aggregate import GROUP_KEYS, RunSummary, summarize
from kaoshi.results.tally import Tally

__all__ = ["FORMATS", "GROUP_KEYS", "RunSummary", "Tally", "render_summary", "summarize"]
