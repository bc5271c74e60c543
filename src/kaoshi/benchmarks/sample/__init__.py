"""The sample exam shipped with kaoshi (sample.jsonl, kaoshi's own questions of every type)."""
