"""Readers more than one benchmark shares: abcd.py, the A/B/C/D-column rows of C-Eval's layout."""
