"""One mutation path: every write takes the engine's lock, collects its audit entries and events, and leaves the
derived indexes caught up with the graph.

``with engine.mutation(scope) as m:`` is the only way NeuSym writes. Entering takes the write lock (re-entrant: a
write made while another is open on the same thread joins it); leaving writes the collected audit entries, runs ONE
catch-up of FAISS/BM25 from the graph's write sequence (when anything may have changed behind them), saves the
derived indexes when enough changed (or when asked), then, with the lock released, fires the collected events.

One write stays outside on purpose: a search's access bookkeeping (``last_accessed_at``/``access_count``, one
statement per result list). It changes nothing the derived indexes hold and bumps no sequence, and taking the
write lock there would make every search wait for every writer.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from neusym.record import Scope
from neusym.retrieval.derived import DerivedIndexes
from neusym.symbolic.store import SymbolicStore

__all__ = ["Events", "Mutation", "MutationPath"]

log = logging.getLogger(__name__)

Hook = Callable[[str, dict[str, Any]], None]


class Events:
    """Write and search events for hooks (reflection triggers, metrics); a failing hook never breaks a call."""

    def __init__(self) -> None:
        self._hooks: list[Hook] = []

    def on(self, hook: Hook) -> None:
        self._hooks.append(hook)

    def off(self, hook: Hook) -> None:
        if hook in self._hooks:
            self._hooks.remove(hook)

    def emit(self, event: str, payload: dict[str, Any]) -> None:
        for hook in list(self._hooks):
            try:
                hook(event, payload)
            except Exception:  # noqa: BLE001 - a hook must never break the fast path
                log.exception("event hook failed for %s", event)


class Mutation:
    """The open write: its scope, the audit entries and events it collected, and whether the derived indexes
    must catch up with the graph when it ends."""

    def __init__(self, path: MutationPath, scope: Scope | None) -> None:
        self._path = path
        self.scope = scope
        self.audits: list[dict[str, Any]] = []
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.stale = False
        self.persist_requested = False

    @property
    def store(self) -> SymbolicStore:
        return self._path.store

    def audit(self, entries: Iterable[Mapping[str, Any]]) -> None:
        """Collect audit entries (written when the mutation ends); an entry without ``user_id`` gets the scope's."""
        for e in entries:
            entry = dict(e)
            if entry.get("user_id") is None and self.scope is not None:
                entry["user_id"] = self.scope.user_id
            self.audits.append(entry)

    def take_audits(self) -> list[dict[str, Any]]:
        """The collected entries, handed to a statement that writes them together with its change."""
        out, self.audits = self.audits, []
        return out

    def emit(self, event: str, payload: dict[str, Any]) -> None:
        """Fire ``event`` once the mutation ended (outside the lock)."""
        self.events.append((event, payload))

    def changed(self) -> None:
        """The graph changed behind the derived indexes: catch up when the mutation ends."""
        self.stale = True

    def applied(self, rows: list[dict[str, Any]], seqs: list[int]) -> None:
        """This process's own new rows, applied to the derived indexes directly (no read back from the graph)."""
        self._path.derived.apply(rows)
        self._path.derived.advance(seqs)

    def sync(self) -> int:
        """Catch up now, inside the mutation (a step that needs current indexes, e.g. compaction after a purge)."""
        return self._path.sync()

    def persist(self) -> None:
        """Save the derived indexes when the mutation ends (e.g. after a purge: no forgotten text left on disk)."""
        self.persist_requested = True


class MutationPath:
    """The lock, the catch-up and the save: the engine's ``mutation()`` and ``sync()``."""

    def __init__(self, store: SymbolicStore, derived: DerivedIndexes, events: Events, *, save_every: int) -> None:
        self.store = store
        self.derived = derived
        self.events = events
        self.save_every = save_every
        self._lock = threading.RLock()
        self._active: Mutation | None = None  # only read or written while holding _lock

    def sync(self) -> int:
        """Bring the derived indexes up to the graph's write sequence (the ONE catch-up call)."""
        return self.derived.catch_up(self.store)

    @contextmanager
    def mutation(self, scope: Scope | None, *, in_process: bool = False, persist: bool = False) -> Iterator[Mutation]:
        """See the module docstring. ``in_process``: the caller applies its own changes to the derived indexes
        (:meth:`Mutation.applied`) and calls :meth:`Mutation.changed` for anything else; every other writer
        leaves the catch-up to the exit."""
        with self._lock:
            outer = self._active
            if outer is not None:  # the same thread (the lock is re-entrant): join the open mutation
                if not in_process:
                    outer.changed()
                if persist:
                    outer.persist()
                yield outer
                return
            m = Mutation(self, scope)
            if not in_process:
                m.changed()
            if persist:
                m.persist()
            self._active = m
            ok = False
            try:
                yield m
                ok = True
            finally:
                try:
                    self._finish(m, ok)
                finally:
                    self._active = None
        for event, payload in m.events:
            self.events.emit(event, payload)

    def _finish(self, m: Mutation, ok: bool) -> None:
        if not ok:  # the change failed part way: what did reach the graph must still reach the indexes
            try:
                if m.stale:
                    self.sync()
            except Exception:  # noqa: BLE001 - the original error is the one to report; the next catch-up repairs
                log.exception("catch-up after a failed write failed")
            return
        if m.audits:
            self.store.audit(m.take_audits())
        if m.stale:
            self.sync()
        if m.persist_requested or self.derived.dirty >= self.save_every:
            self.derived.save()
