"""What more than one benchmark shares, so that no benchmark package imports another: abcd.py the
A/B/C/D-column rows, ceval_layout.py C-Eval's folder layout (its reader and detection), ceval_prompts.py
C-Eval's prompt wording, answer_files.py the answer files by subject (C-Eval, FinEval, M3KE), sniff.py what
detectors read of a file, exam_jsonl.py kaoshi's own exam schema (the `kaoshi` benchmark's and the bundled
sample's), statistics.py the numbers several benchmarks report beyond accuracy."""
