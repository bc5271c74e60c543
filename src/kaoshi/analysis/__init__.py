"""Analyses across runs and graders: agreement of graders with human scorers."""
