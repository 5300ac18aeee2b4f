"""What every ``neusym`` command shares: connection and scope options, the memory it opens, JSON or rich output,
and the error contract (one readable line on stderr, a non-zero exit code, the details with ``--verbose``).

Commands are plain functions taking an :class:`Opts` first; :func:`command` appends the shared options to their
signature (so ``--user``/``--json``/... appear on every command, after its own options) and wraps the call.
"""

from __future__ import annotations

import inspect
import json
import logging
import math
import os
import re
import shutil
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum, StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import click
import typer
from rich.console import Console

from neusym.errors import (
    BackendUnavailableError,
    DimensionMismatchError,
    EmbedderMismatchError,
    InvalidInputError,
    NeuSymError,
    RecordNotFoundError,
)

if TYPE_CHECKING:
    from neusym.facade import NeuSymMemory
    from neusym.record import Scope

__all__ = [
    "EXIT_CODES",
    "Opts",
    "command",
    "emit",
    "err_console",
    "jsonable",
    "out_console",
    "parse_duration",
    "parse_json_object",
    "parse_time",
    "progress_bar",
]

F = TypeVar("F", bound=Callable[..., Any])

EXIT_CODES = {"error": 1, "invalid input": 2, "not found": 3, "backend unavailable": 4, "interrupted": 130}

_CONNECTION = "Connection"
_SCOPE = "Scope"
_OUTPUT = "Output"


class Backend(StrEnum):
    embedded = "embedded"
    falkordb = "falkordb"
    neo4j = "neo4j"


def _kw(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


_CONNECTION_PARAMS = [
    _kw("data_dir", Annotated[Path | None, typer.Option(
        "--data-dir", envvar="NEUSYM_DATA_DIR", show_envvar=True, rich_help_panel=_CONNECTION,
        help="Data directory of the embedded graph and the indexes (default ~/.neusym).")], None),
    _kw("graph", Annotated[str | None, typer.Option(
        "--graph", envvar="NEUSYM_GRAPH", show_envvar=True, rich_help_panel=_CONNECTION,
        help="Graph name inside the data directory / database (default neusym).")], None),
    _kw("backend", Annotated[Backend | None, typer.Option(
        "--backend", envvar="NEUSYM_BACKEND", show_envvar=True, rich_help_panel=_CONNECTION,
        help="embedded (default), falkordb (FALKORDB_HOST/PORT) or neo4j (NEO4J_URI, NEO4J_USERNAME, "
             "NEO4J_PASSWORD, NEO4J_DATABASE).")], None),
    _kw("embedder", Annotated[str, typer.Option(
        "--embedder", envvar="NEUSYM_EMBEDDER", show_envvar=True, rich_help_panel=_CONNECTION,
        help="minilm (the offline default, onnxruntime), minilm-torch or st:MODEL_DIR (sentence-transformers, "
             "needs neusym[torch]) or hashing[:DIM] (fast, for tests); must match the data (else: reindex "
             "--reembed).")], "minilm"),
]
_SCOPE_PARAMS = [
    _kw("user", Annotated[str | None, typer.Option(
        "--user", "-u", envvar="NEUSYM_USER", rich_help_panel=_SCOPE,
        help="Tenant (user_id): every command that reads or writes memories needs it (or --all-tenants where an "
             "operator view is allowed).")],
        None),
    _kw("agent", Annotated[str | None, typer.Option(
        "--agent", "-a", envvar="NEUSYM_AGENT", rich_help_panel=_SCOPE, help="agent_id.")], None),
    _kw("session", Annotated[str | None, typer.Option(
        "--session", "-s", envvar="NEUSYM_SESSION", rich_help_panel=_SCOPE, help="session_id.")], None),
]
_TENANT_PARAMS = [
    _kw("all_tenants", Annotated[bool, typer.Option(
        "--all-tenants", rich_help_panel=_SCOPE,
        help="Operator mode: cover every tenant (instead of a scope).")], False),
]
_OUTPUT_PARAMS = [
    _kw("json_out", Annotated[bool, typer.Option(
        "--json", rich_help_panel=_OUTPUT, help="Machine-readable JSON on stdout.")], False),
    _kw("verbose", Annotated[bool, typer.Option(
        "--verbose", "-v", rich_help_panel=_OUTPUT, help="Log progress and show tracebacks on errors.")], False),
]


@dataclass
class Opts:
    """The shared options of one invocation."""

    data_dir: Path | None = None
    graph: str | None = None
    backend: str | None = None
    embedder: str = "minilm"
    user: str | None = None
    agent: str | None = None
    session: str | None = None
    all_tenants: bool = False
    admin: bool = False  # the command accepts --all-tenants
    json: bool = False
    verbose: bool = False

    @property
    def ids(self) -> dict[str, str | None]:
        return {"user_id": self.user, "agent_id": self.agent, "session_id": self.session}

    @property
    def scoped(self) -> bool:
        return any(v is not None for v in self.ids.values())

    def check_scope(self) -> None:
        """Refuse a command without a tenant before anything opens: ``--user`` (or ``--all-tenants`` where the
        command is an operator view). An agent or a session alone would span tenants."""
        from neusym.errors import ScopeError

        if self.all_tenants:
            if self.scoped:
                raise InvalidInputError("pass either scope options (--user/--agent/--session) or --all-tenants")
            return
        if not self.user or not self.user.strip():  # None, or --user "" (a blank name is no tenant either)
            raise ScopeError("this command needs --user (the tenant; or NEUSYM_USER)"
                             + (" or --all-tenants" if self.admin else "")
                             + ("; --agent/--session only narrow a tenant" if self.scoped else ""))

    def scope(self, mem: NeuSymMemory) -> Scope:
        """The scope to read or write: the options (``--user`` required); empty with --all-tenants."""
        from neusym.record import Scope

        self.check_scope()
        if self.all_tenants:
            return Scope()
        return mem.scope_for(user_id=self.user, agent_id=self.agent, session_id=self.session)

    def make_embedder(self) -> Any:
        name, _, arg = self.embedder.strip().lower().partition(":")
        if name in ("minilm", "default", ""):
            return None  # the facade's shared default (loaded lazily: commands that never embed stay fast)
        if name in ("minilm-torch", "st", "sentence-transformers"):
            from neusym.embeddings import SentenceTransformerEmbedder

            source = self.embedder.strip().partition(":")[2] or None  # the path keeps its case
            if name == "minilm-torch" and source:
                raise InvalidInputError("--embedder minilm-torch takes no argument (use st:MODEL_DIR)")
            return SentenceTransformerEmbedder(source)
        if name == "hashing":
            from neusym.embeddings import HashingEmbedder

            try:
                return HashingEmbedder(int(arg) if arg else 256)
            except ValueError as err:
                raise InvalidInputError(f"--embedder hashing:DIM needs an integer DIM, got {arg!r}") from err
        raise InvalidInputError(
            f"unknown embedder {self.embedder!r}; use minilm, minilm-torch, st:MODEL_DIR or hashing[:DIM]")

    def config(self) -> Any:
        from neusym.config import NeuSymConfig

        overrides: dict[str, Any] = {"graph_name": self.graph, "backend": self.backend}
        if self.data_dir is not None:
            overrides["data_dir"] = self.data_dir.expanduser()
        return NeuSymConfig.from_env(**overrides)

    @contextmanager
    def memory(self, **options: Any) -> Iterator[NeuSymMemory]:
        """Open the memory the options point at (embedded by default) and close it afterwards; ``options`` go to
        the constructor (e.g. ``reembed=True``)."""
        from neusym.facade import NeuSymMemory

        mem = NeuSymMemory(config=self.config(), embedder=self.make_embedder(), **options)
        try:
            yield mem
        finally:
            mem.close()


# ---------------------------------------------------------------------------------------------------- output
def out_console() -> Console:
    """stdout; wide when not a terminal so piped tables do not wrap mid-word."""
    width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", "0") or 0) or 200
    return Console(highlight=False, width=width, soft_wrap=False)


def err_console() -> Console:
    width = None if sys.stderr.isatty() else shutil.get_terminal_size((120, 20)).columns
    return Console(stderr=True, highlight=False, width=width)


def jsonable(value: Any) -> Any:
    """Plain JSON data from records, pydantic models, datetimes, enums and numpy scalars."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if hasattr(value, "model_dump"):
        return jsonable(value.model_dump(mode="json"))
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if hasattr(value, "item"):  # numpy scalar
        return jsonable(value.item())
    return str(value)


def emit(opts: Opts, data: Any, human: Callable[[Console], None] | None = None) -> None:
    """JSON on stdout with ``--json``; otherwise the human rendering (or pretty JSON when there is none)."""
    if opts.json or human is None:
        sys.stdout.write(json.dumps(jsonable(data), ensure_ascii=False, indent=2) + "\n")
        sys.stdout.flush()
        return
    human(out_console())


@contextmanager
def progress_bar(opts: Opts, label: str, *, enabled: bool = True) -> Iterator[Callable[[int, int], None]]:
    """A ``progress(done, total)`` callback drawing a bar on stderr, shown from the first call on: a command that
    fails while validating prints its one error line and no bar."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar: Progress | None = None
    task: Any = None

    def update(done: int, total: int) -> None:
        nonlocal bar, task
        if not enabled or opts.json:
            return
        if bar is None:
            bar = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                           console=err_console(), transient=False)
            bar.start()
            task = bar.add_task(label, total=total)
        bar.update(task, completed=done, total=total)

    try:
        yield update
    finally:
        if bar is not None:
            bar.stop()


# ---------------------------------------------------------------------------------------------------- parsing
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|d|w)?\s*$", re.IGNORECASE)
_UNIT = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str, what: str = "duration") -> float:
    """``90``, ``90s``, ``10m``, ``2h``, ``7d``, ``1w`` -> seconds."""
    m = _DURATION.match(text or "")
    if not m:
        raise InvalidInputError(f"{what} {text!r} is not a duration like 90s, 10m, 2h, 7d or 1w")
    return float(m.group(1)) * _UNIT[(m.group(2) or "s").lower()]


def parse_time(text: str, what: str = "time") -> datetime:
    """ISO-8601 date/time (naive = UTC), epoch seconds, ``now``, or relative ``-7d`` / ``+2h``."""
    raw = (text or "").strip()
    now = datetime.now(UTC)
    if raw.lower() == "now":
        return now
    if raw[:1] in "+-" and raw[1:2].isdigit() and not re.match(r"^[+-]?\d+(\.\d+)?$", raw):
        delta = timedelta(seconds=parse_duration(raw[1:], what))
        return now + delta if raw[0] == "+" else now - delta
    try:
        return datetime.fromtimestamp(float(raw), tz=UTC)
    except ValueError:
        pass
    try:
        value = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError as err:
        raise InvalidInputError(f"{what} {text!r} is not ISO-8601, epoch seconds, 'now' or like -7d") from err
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def parse_json_object(text: str | None, what: str) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as err:
        raise InvalidInputError(f"{what} is not valid JSON: {err}") from err
    if not isinstance(value, dict):
        raise InvalidInputError(f"{what} must be a JSON object")
    return value


# ---------------------------------------------------------------------------------------------------- errors
def _exit_code(err: BaseException) -> int:
    if isinstance(err, RecordNotFoundError):
        return EXIT_CODES["not found"]
    if isinstance(err, InvalidInputError):
        return EXIT_CODES["invalid input"]
    if isinstance(err, BackendUnavailableError):
        return EXIT_CODES["backend unavailable"]
    if isinstance(err, KeyboardInterrupt):
        return EXIT_CODES["interrupted"]
    return EXIT_CODES["error"]


def _one_line(err: BaseException) -> str:
    if isinstance(err, KeyboardInterrupt):
        return "interrupted"
    text = str(err).strip().splitlines()
    msg = text[0] if text else type(err).__name__
    if isinstance(err, OSError) and err.filename is not None and err.strerror:
        msg = f"{err.strerror}: {err.filename}"
    if not isinstance(err, NeuSymError | OSError):
        msg = f"unexpected {type(err).__name__}: {msg}"
    if isinstance(err, DimensionMismatchError) and not isinstance(err, EmbedderMismatchError):  # that one says
        msg += " -- pass the --embedder the data was written with (or set NEUSYM_EMBEDDER)"
    return msg


def fail(opts: Opts, err: BaseException) -> typer.Exit:
    """Report ``err`` the CLI way and return the ``Exit`` to raise."""
    code = _exit_code(err)
    msg = _one_line(err)
    if opts.verbose:
        sys.stderr.write("".join(traceback.format_exception(err)))
    hint = "" if opts.verbose else " (--verbose for details)"
    if not isinstance(err, NeuSymError | OSError | KeyboardInterrupt):
        msg += hint
    sys.stderr.write(f"error: {msg}\n")
    sys.stderr.flush()
    if opts.json:
        sys.stdout.write(json.dumps({"ok": False, "error": {"type": type(err).__name__, "message": msg,
                                                             "exit_code": code}}) + "\n")
        sys.stdout.flush()
    return typer.Exit(code)


def _setup_logging(verbose: bool) -> None:
    from neusym.loading import show_on_stderr

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("neusym").setLevel(logging.INFO if verbose else logging.WARNING)
    if sys.stderr.isatty() and not verbose:  # --verbose shows them with every other INFO line
        show_on_stderr()  # "loading the embedding model ..." when a load makes someone wait (> 0.5 s)


# ---------------------------------------------------------------------------------------------------- decorator
def command(group: typer.Typer, name: str, *, connect: bool = True, scope: bool = True, tenants: bool = False,
            **settings: Any) -> Callable[[F], F]:
    """Register ``fn(opts, **own)`` as ``name`` on ``group`` with the shared options appended."""
    extra = [*(_CONNECTION_PARAMS if connect else []), *(_SCOPE_PARAMS if scope else []),
             *(_TENANT_PARAMS if tenants else []), *_OUTPUT_PARAMS]
    names = [p.name for p in extra]

    def deco(fn: F) -> F:
        sig = inspect.signature(fn, eval_str=True)
        own = [p for i, p in enumerate(sig.parameters.values()) if i > 0]  # drop `opts`

        def wrapper(**kwargs: Any) -> None:
            shared = {n: kwargs.pop(n) for n in names if n in kwargs}
            backend = shared.get("backend")
            opts = Opts(data_dir=shared.get("data_dir"), graph=shared.get("graph"),
                        backend=backend.value if isinstance(backend, Enum) else backend,
                        embedder=shared.get("embedder") or "minilm", user=shared.get("user"),
                        agent=shared.get("agent"), session=shared.get("session"),
                        all_tenants=bool(shared.get("all_tenants")), admin=tenants, json=bool(shared.get("json_out")),
                        verbose=bool(shared.get("verbose")))
            _setup_logging(opts.verbose)
            started = time.perf_counter()
            try:
                fn(opts, **kwargs)
            except (typer.Exit, click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
                raise
            except (Exception, KeyboardInterrupt) as err:  # noqa: BLE001 - the CLI's one error contract
                raise fail(opts, err) from None
            finally:
                logging.getLogger("neusym.cli").info("%s took %.2fs", name, time.perf_counter() - started)

        wrapper.__name__ = fn.__name__
        wrapper.__qualname__ = fn.__qualname__
        wrapper.__doc__ = fn.__doc__
        wrapper.__module__ = fn.__module__
        setattr(wrapper, "__signature__", sig.replace(parameters=[*own, *extra], return_annotation=None))  # noqa: B010
        group.command(name, **settings)(wrapper)
        return fn

    return deco
