"""CFLUE knowledge: loader.py its JSON array, official_prompt.py CFLUE's own prompt, prompts.py kaoshi's
wording, benchmark.py the registered Benchmark."""
