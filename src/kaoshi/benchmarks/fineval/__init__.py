"""FinEval: C-Eval's layout and wording (kaoshi.benchmarks.common) with FinEval's subjects (subjects.py)
and prompt presets (prompts.py); benchmark.py the registered Benchmark and its submission file."""
