"""kaoshi's version, recorded in run specs, reports and adapters."""

__version__ = "0.1.0"
