"""LogiQA (Chinese): loader.py its 8-line text records, benchmark.py the registered Benchmark."""
