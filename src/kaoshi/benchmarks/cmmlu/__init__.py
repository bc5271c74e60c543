"""CMMLU: loader.py data/{dev,test}/<subject>.csv, subjects.py the 67 subjects and categories, prompts.py
the official gen_prompt wording, benchmark.py the registered Benchmark."""
