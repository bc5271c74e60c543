"""CMExam: loader.py its CSVs, prompts.py the repository's zero-shot prompt, benchmark.py the registered
Benchmark."""
