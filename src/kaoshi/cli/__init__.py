"""The kaoshi command line."""
