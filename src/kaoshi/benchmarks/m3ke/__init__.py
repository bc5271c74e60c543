"""M3KE: loader.py data/{dev,test}/<task>.jsonl, tasks.py the 71 tasks, benchmark.py the registered
Benchmark and its answer file."""
