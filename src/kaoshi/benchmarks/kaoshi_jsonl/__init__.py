"""kaoshi's own JSONL exam format: loader.py, benchmark.py (the catch-all reader of any file)."""
