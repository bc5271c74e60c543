"""AGIEval's Chinese tasks: loader.py reads data/v1, rows.py one row, options.py the published option
quirks, demos.py the few-shot demos, prompts.py AGIEval's own prompt, benchmark.py the registered
Benchmark."""
