"""QualBench's six vertical domains: what its Benchmark registers (categories, English names) without
importing the loader, which reads them for each question's category."""

from __future__ import annotations

# The six vertical domains and the English names the paper's tables use.
QUALBENCH_DOMAINS: dict[str, str] = {
    "安全生产": "Production Safety",
    "消防": "Fire Safety",  # the data says 消防, not 消防安全
    "建筑工程": "Civil Engineering",
    "经济金融": "Economics and Finance",
    "石油天然气": "Oil and Gas",
    "银行保险": "Banking and Insurance",
}
