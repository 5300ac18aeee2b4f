"""Say so when a load makes someone wait: "loading the embedding model ..." on the ``neusym.loading`` logger.

A command that sits silent for two seconds looks hung; one that says what it is loading does not. Loads are
announced only when they take longer than :data:`NOTICE_AFTER` seconds (a timer fires while the load runs, so the
line appears during the wait, not after it), and their end is reported with the time taken. Fast loads say
nothing. The command line and the MCP server show this logger on stderr (:func:`show_on_stderr`); a library user
sees it with ``logging.getLogger("neusym.loading").setLevel(logging.INFO)`` and any handler.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["NOTICE_AFTER", "loading", "show_on_stderr"]

log = logging.getLogger("neusym.loading")

#: seconds a load may take before it is announced
NOTICE_AFTER = 0.5


@contextmanager
def loading(what: str, *, after: float | None = None) -> Iterator[None]:
    """Run the block; if it is still running after ``after`` seconds (default :data:`NOTICE_AFTER`), log
    ``loading <what> ...`` and, when it ends, ``loaded <what> in N s`` (or ``loading <what> failed``)."""
    delay = NOTICE_AFTER if after is None else after
    announced = threading.Event()
    started = time.perf_counter()

    def announce() -> None:
        announced.set()
        log.info("loading %s ...", what)

    timer = threading.Timer(delay, announce)
    timer.daemon = True
    timer.start()
    ok = False
    try:
        yield
        ok = True
    finally:
        timer.cancel()
        if announced.is_set():
            if ok:
                log.info("loaded %s in %.1f s", what, time.perf_counter() - started)
            else:
                log.info("loading %s failed after %.1f s", what, time.perf_counter() - started)


def show_on_stderr() -> None:
    """Print this logger's lines on stderr as plain text (idempotent): what the CLI and the MCP server call at
    start. The lines do not propagate to the root logger, so a configured root handler does not print them twice."""
    if any(isinstance(h, _Stderr) for h in log.handlers):
        return
    handler = _Stderr()
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a line is logged (a test runner swaps it; a handler that kept the
    stream it was created with would write to a closed one)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)
