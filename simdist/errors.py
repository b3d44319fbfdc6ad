"""What a user gave wrong, and the one boundary every ``simdist`` command runs inside.

:class:`InputError` is bad input whose message names its place. :func:`guarded` turns every *expected* failure
(bad input, a missing, unreadable or unwritable path, a path of the wrong kind) into one error line and exit
status 2; anything else is a bug and keeps its traceback. ``--debug`` or ``SIMDIST_DEBUG=1`` shows the
traceback of expected failures too.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable


class InputError(ValueError):
    """Bad input whose message names its place (folder, file and key, or the option); ``simdist`` commands
    print the message as their error line, without a traceback."""


#: operating-system failures that mean a path the user gave is wrong (missing, of the wrong kind, not allowed)
PATH_ERRORS: tuple[type[OSError], ...] = (FileNotFoundError, FileExistsError, NotADirectoryError,
                                          IsADirectoryError, PermissionError)


def debug_requested(argv: list[str]) -> bool:
    """``--debug`` in ``argv`` or ``SIMDIST_DEBUG`` set to anything but ``0``/empty."""
    return "--debug" in argv or os.environ.get("SIMDIST_DEBUG", "0") not in ("", "0")


def expected_failure(err: BaseException) -> bool:
    """Whether ``err`` is the user's input (an :class:`InputError`, an unknown registered name, a path error)
    rather than a bug."""
    from simdist.registry import RegistryError

    return isinstance(err, (InputError, RegistryError, *PATH_ERRORS))


def one_line(err: BaseException) -> str:
    """The message of ``err`` on one line (a path error names its path and what went wrong)."""
    if isinstance(err, OSError) and err.filename is not None and err.strerror:
        text = f"{err.filename}: {err.strerror.lower()}"
        if err.filename2 is not None:
            text += f" ({err.filename2})"
    else:
        text = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
    return joined(text)


def joined(text: str) -> str:
    """A multi-line message on one line: its lines joined by ``; `` (by a space after a line ending in ``:``)."""
    out = ""
    for line in (ln.strip() for ln in text.splitlines()):
        if line:
            out += ("" if not out else " " if out.endswith(":") else "; ") + line
    return out


def guarded(prog: str, run: Callable[[], int], debug: bool = False) -> int:
    """``run()`` inside the error boundary: an expected failure prints ``PROG: error: MESSAGE`` (one line) and
    returns 2; a bug propagates with its traceback. ``debug``: print the traceback of expected failures too."""
    try:
        return run()
    except Exception as err:
        if not expected_failure(err):
            raise
        if debug:
            traceback.print_exc()
        print(f"{prog}: error: {one_line(err)}", file=sys.stderr)
        return 2
