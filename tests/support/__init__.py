"""Helpers shared by the test modules of every layer; test modules import only from here (tests/unit/
test_layout.py checks it), and tests/conftest.py holds pytest fixtures only.

files: exam files in each benchmark's published format (write_jsonl, write_csv, C-Eval folders, QualBench).
runs: mock-model and mock-judge scripts, run specs, the command line called in-process.
stores: a run spec, sample records, small stores and the file-level probes of a store.
questions: questions built in code for the extraction, scoring and store tests.
extraction_cases, judge_cases: the tables of replies and the answers or scores to read from them.
fake_openai, fault_server, interruptions, models, toy_benchmark: servers, backends and a plugin benchmark
the tests (and speed/) start by name.
"""
