"""C-Eval: loader.py its files and the hub copy (its layout is read by kaoshi.benchmarks.common.ceval_layout,
which FinEval shares), subjects.py the 52 subjects and 4 categories, prompts.py its presets of the
evaluator's wording (answer-only, CoT), submission.py the test submission file, benchmark.py `ceval` and
`ceval-hard`."""
