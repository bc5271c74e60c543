"""QualBench: loader.py QualBench.json and its shuffled JSONL, domains.py its six domains, paper_prompt.py
the authors' prompt, prompts.py kaoshi's wording, benchmark.py the registered Benchmark."""
