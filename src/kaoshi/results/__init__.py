"""Results: the summary of a run (aggregate.py), its metrics (metrics.py, standard.py) and the
leaderboard layouts benchmarks choose from (layout.py, subject_layout.py)."""
