"""FinEval: C-Eval's layout and wording with FinEval's subjects (subjects.py); benchmark.py the registered
Benchmark and its submission file."""
