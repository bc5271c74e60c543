"""C-Eval: loader.py its CSV layout (also FinEval's, M3KE's answer files), subjects.py the 52 subjects and 4
categories, prompts.py the evaluator's wording (answer-only, CoT; FinEval's too), submission.py the test
submission file, benchmark.py `ceval` and `ceval-hard`."""
