"""krc's errors. The C++ core raises them with the messages the krc command prints, spelt for
Python: an option is named by its keyword (`max_memory`), not its flag (`--max-memory`)."""

from typing import Optional


class KrcError(Exception):
    """Base of the errors krc raises on purpose (bad input, a limit)."""


class InputError(KrcError, ValueError):
    """Bad input: a file (or an argument) krc refuses, with where and why.

    ``file`` names the file ("<input>" style names for things that are not files, such as
    "zoo" or "word"), ``place`` the place in it (a line and column, a JSON pointer, a tensor
    name; may be empty) and ``problem`` what is wrong. ``str(error)`` is "file: place: problem".
    """

    def __init__(self, message: str, file: str = "", place: str = "", problem: str = ""):
        super().__init__(message)
        self.file = file
        self.place = place
        self.problem = problem


class LimitError(KrcError):
    """A request krc cannot serve within its limits (a semigroup too large, the memory budget).

    ``option`` is the keyword (or ``"max_memory"`` for :func:`krc.set_max_memory`) that raises
    the limit, when there is one; the message names it too.
    """

    def __init__(self, message: str, option: Optional[str] = None):
        super().__init__(message)
        self.option = option


class VerificationError(KrcError):
    """A network krc built was found wrong by its verification (the command line's exit status
    1): raised by krc.suite, which then writes nothing. The message names the model and holds
    the verifier's report with its first counterexample."""


class ReadingNote(UserWarning):
    """What a reader decided by a convention, the command line's `krc: note: FILE: ...` lines:
    a partial acceptor completed with a rejecting sink state, an NFA determinised, the first
    state taken as initial, edge labels read as bit vectors or guards. krc.load_automaton,
    parse_automaton and the from_* functions raise one warning per note;
    ``warnings.simplefilter("ignore", krc.ReadingNote)`` silences them, and "error" turns them
    into exceptions (to refuse, say, any automaton krc had to complete)."""


class MissingExtraError(KrcError, ImportError):
    """A framework krc's core does not need, asked for and not installed: the message names
    the package and the extra that installs it (``pip install 'krc[torch]'``)."""


def require(modules, extra, what):
    """Imports each of `modules` or raises MissingExtraError naming `extra` for `what`."""
    import importlib

    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise MissingExtraError(
                "%s needs the Python package %r, which is not installed: pip install 'krc[%s]' "
                "(or krc[all]) installs it" % (what, module, extra)) from e
