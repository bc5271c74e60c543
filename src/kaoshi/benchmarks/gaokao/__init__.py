"""GAOKAO-Bench: loader.py Data/, prompt_files.py Bench/'s prompt files, subjects.py subjects, full marks
and weights, prompts.py its prompt and kaoshi's, benchmark.py the registered Benchmark with its subject
and exam totals."""
