"""The base class of errors caused by what a user gave: a file, a folder, a key in one, or an option."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input whose message names its place (folder, file and key, or the option); ``simdist`` commands
    print the message as their error line, without a traceback."""
