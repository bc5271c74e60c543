"""What kaoshi raises when the user's input cannot be used, as opposed to a bug.

The command line exits 2 with the message for these (and for DataError, StoreError, ModelError); any
other exception is an internal error: exit 1, "please report it", the traceback behind --debug. Both
subclass the built-in they refine, so `except ValueError` / `except KeyError` still catch them."""

from __future__ import annotations


class InputError(ValueError):
    """An option, name or value the user gave cannot be used; the message says which and why."""


class UnknownName(InputError, KeyError):
    """A name that is not known (a prompt, benchmark, question id); the message lists what is."""

    def __str__(self) -> str:
        # KeyError would quote the message; this is a sentence, not a key.
        return str(self.args[0]) if self.args else ""
