"""A verification's progress line on stderr (Network.verify(progress=True))."""
import sys
from typing import Optional


class ProgressLine:
    """A verification's progress on stderr, once it has run two seconds: on a terminal one line
    rewritten in place; elsewhere (a notebook's captured stream, a log) a whole line every ten
    seconds, as `krc verify` does."""

    def __init__(self) -> None:
        self.width = 0
        self.last: Optional[float] = None
        self.terminal = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()

    def __call__(self, p: "_core.VerifyProgress") -> None:
        if p.seconds < 2.0:
            return
        line = str(p)  # krc verify's own line (runtime's progress_line)
        if not self.terminal:
            if self.last is None or p.seconds >= self.last + 10.0:
                sys.stderr.write(line + "\n")
                sys.stderr.flush()
                self.last = p.seconds
            return
        self.width = max(self.width, len(line))
        sys.stderr.write("\r" + line.ljust(self.width))
        sys.stderr.flush()

    def clear(self) -> None:
        if self.width and self.terminal:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()
