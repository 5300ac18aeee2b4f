"""Reflection triggers and the background scheduler.

The fast path (``add``/``search``) only *notes* that reflection may be worth doing: its event hook counts writes
per scope and looks for conflicts in a result list, which costs microseconds and never touches a model. Jobs run on
worker threads. Bursts collapse: jobs are keyed by (kind, scope); a trigger for a key that already has a pending job
merges into it and pushes its start back by ``debounce_s`` (capped at ``max_delay_s`` after the first trigger, so a
steady stream cannot starve it), and a key that just ran waits ``cooldown_s`` before it runs again. A failed job is
retried with exponential backoff; after ``max_attempts`` it runs once more with the LLM-free reflector (or is
parked as failed). On shutdown pending jobs are drained (run now, ignoring debounce) within ``drain_timeout_s``;
whatever is left is written to a JSON file and picked up by the next scheduler on the same data directory.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from neusym.private_files import write_private
from neusym.record import MemoryRecord, MemoryType, Scope, SearchResult

__all__ = ["JobKind", "ReflectionJob", "ReflectionPolicy", "ReflectionScheduler", "conflicts_in_results"]

log = logging.getLogger(__name__)

JobKind = str
"""``session_end`` | ``every_n`` | ``conflict`` | ``decay`` | ``manual``."""


class ReflectionPolicy(BaseModel):
    """When background reflection runs. ``NeuSymMemory(reflection=ReflectionPolicy(...))`` or
    ``mem.enable_auto_reflection(every_n=20)``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    every_n: int | None = Field(default=50, ge=1)  # reflect a scope after this many new memories (None: never)
    on_session_end: bool = True
    on_conflict: bool = True  # a search returned memories that contradict each other
    debounce_s: float = Field(default=2.0, ge=0.0)
    max_delay_s: float = Field(default=60.0, ge=0.0)
    cooldown_s: float = Field(default=60.0, ge=0.0)
    decay_interval_s: float | None = Field(default=None, gt=0.0)  # periodic scan for old unreflected memories
    decay_min_age_s: float = Field(default=7 * 86400.0, ge=0.0)
    decay_min_count: int = Field(default=20, ge=1)
    max_attempts: int = Field(default=3, ge=1)
    retry_backoff_s: float = Field(default=30.0, ge=0.0)
    fallback_extractive: bool = True
    workers: int = Field(default=1, ge=1, le=16)
    drain_on_close: bool = True
    drain_timeout_s: float = Field(default=30.0, ge=0.0)
    pending_path: Path | None = None  # default: <data_dir>/reflection/<graph>.pending.json
    poll_s: float = Field(default=0.05, gt=0.0)


@dataclass
class ReflectionJob:
    kind: JobKind
    scope: Scope
    ids: list[str] | None = None  # None: whatever the kind selects at run time
    goal: str | None = None
    due: float = 0.0
    first: float = 0.0
    attempts: int = 0
    fallback: bool = False
    last_error: str | None = None
    job_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    @property
    def key(self) -> tuple[str, str | None, str | None, str | None]:
        return (self.kind, self.scope.user_id, self.scope.agent_id, self.scope.session_id)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "scope": self.scope.as_params(), "ids": self.ids, "goal": self.goal,
                "attempts": self.attempts, "fallback": self.fallback, "last_error": self.last_error,
                "job_id": self.job_id}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReflectionJob:
        return cls(kind=str(data["kind"]), scope=Scope.coerce(data["scope"]), ids=data.get("ids"),
                   goal=data.get("goal"), attempts=int(data.get("attempts") or 0),
                   fallback=bool(data.get("fallback")), last_error=data.get("last_error"),
                   job_id=str(data.get("job_id") or uuid.uuid4().hex[:12]))


def _is_reflection(r: MemoryRecord) -> bool:
    return r.type is MemoryType.REFLECTION or r.source.origin == "reflection"


def conflicts_in_results(results: Sequence[SearchResult]) -> dict[str | None, list[str]]:
    """Conflicting memory ids in a result list, per tenant (so a job never mixes tenants)."""
    from neusym.reflection.extractive import find_triple_conflicts

    by_tenant: dict[str | None, list[MemoryRecord]] = {}
    for r in results:
        by_tenant.setdefault(r.memory.scope.user_id, []).append(r.memory)
    out: dict[str | None, list[str]] = {}
    for tenant, recs in by_tenant.items():
        ids = list(dict.fromkeys(i for note in find_triple_conflicts(recs) for i in note.ids))
        if ids:
            out[tenant] = ids
    return out


Runner = Callable[[ReflectionJob], Any]
Scanner = Callable[[], list[ReflectionJob]]


class ReflectionScheduler:
    """Background reflection worker(s). ``runner(job)`` does the work (raises on failure); ``scanner()`` returns
    decay-scan jobs. ``clock`` is injectable so tests can freeze and advance time without sleeping."""

    def __init__(self, runner: Runner, policy: ReflectionPolicy | None = None, *, scanner: Scanner | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.policy = policy or ReflectionPolicy()
        self.runner = runner
        self.scanner = scanner
        self.clock = clock
        self._cond = threading.Condition()
        self._pending: dict[tuple[str, str | None, str | None, str | None], ReflectionJob] = {}
        self._running: dict[tuple[str, str | None, str | None, str | None], ReflectionJob] = {}
        self._last_done: dict[tuple[str, str | None, str | None, str | None], float] = {}
        self._counts: dict[tuple[str | None, str | None, str | None], int] = {}
        self._threads: list[threading.Thread] = []
        self._stopping = False
        self._draining = False
        self._next_scan = 0.0
        self.failed: list[ReflectionJob] = []
        self.results: list[Any] = []
        self.completed = 0
        self.retries = 0

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> ReflectionScheduler:
        self._load_persisted()
        if self.policy.decay_interval_s:
            self._next_scan = self.clock() + self.policy.decay_interval_s
        for i in range(self.policy.workers):
            t = threading.Thread(target=self._loop, name=f"neusym-reflect-{i}", daemon=True)
            t.start()
            self._threads.append(t)
        return self

    @property
    def running(self) -> bool:
        return bool(self._threads) and not self._stopping

    def close(self, *, drain: bool | None = None, timeout: float | None = None) -> list[ReflectionJob]:
        """Stop accepting triggers, drain pending work (default per policy), persist what is left. Returns the
        jobs that were persisted (not run)."""
        drain = self.policy.drain_on_close if drain is None else drain
        timeout = self.policy.drain_timeout_s if timeout is None else timeout
        with self._cond:
            if self._stopping and not self._threads:
                return []
            self._draining = drain
            self._cond.notify_all()
        if drain:
            self.wait_idle(timeout)
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        for t in self._threads:
            t.join(timeout=max(timeout, 1.0))
        self._threads = []
        with self._cond:
            # a job still inside a slow model call after the timeout is persisted too: it will fail once the
            # stores close, and must then be redone by the next scheduler rather than lost
            left = list(self._pending.values()) + list(self._running.values()) + list(self.failed)
            self._pending.clear()
        self._persist(left)
        return left

    # ------------------------------------------------------------------ triggers
    def submit(self, kind: JobKind, scope: Scope, *, ids: Sequence[str] | None = None, goal: str | None = None,
               delay: float | None = None) -> ReflectionJob:
        """Queue (or merge into) the job for (kind, scope); it starts after the debounce and any cooldown."""
        if scope.is_empty:
            raise ValueError("a reflection job needs a non-empty scope")
        now = self.clock()
        p = self.policy
        with self._cond:
            job = ReflectionJob(kind=kind, scope=scope, ids=list(ids) if ids is not None else None, goal=goal,
                                first=now)
            existing = self._pending.get(job.key)
            if existing is not None:
                if existing.ids is not None and job.ids is not None:
                    existing.ids = list(dict.fromkeys([*existing.ids, *job.ids]))
                else:
                    existing.ids = None
                existing.goal = goal or existing.goal
                job = existing
            else:
                self._pending[job.key] = job
            due = now + (p.debounce_s if delay is None else delay)
            due = min(due, job.first + max(p.max_delay_s, p.debounce_s))
            last = self._last_done.get(job.key)
            if last is not None:
                due = max(due, last + p.cooldown_s)
            job.due = due
            self._cond.notify_all()
            return job

    def note_writes(self, scope: Scope, n: int) -> None:
        every = self.policy.every_n
        if every is None or n <= 0 or scope.is_empty:
            return
        key = (scope.user_id, scope.agent_id, scope.session_id)
        with self._cond:
            self._counts[key] = self._counts.get(key, 0) + n
            hit = self._counts[key] >= every
            if hit:
                self._counts[key] = 0
        if hit:
            self.submit("every_n", scope)

    def on_event(self, event: str, payload: dict[str, Any]) -> None:
        """The memory's event hook: cheap bookkeeping only (runs inside ``add``/``search``)."""
        if self._stopping:
            return
        scope = payload.get("scope")
        if not isinstance(scope, Scope):
            return
        if event == "add":
            records = [r for r in payload.get("records") or [] if not _is_reflection(r)]
            self.note_writes(scope, len(records))
        elif event == "search" and self.policy.on_conflict:
            for tenant, ids in conflicts_in_results(payload.get("results") or []).items():
                sc = scope if tenant == scope.user_id else Scope(user_id=tenant) if tenant else None
                if sc is not None and not sc.is_empty:
                    self.submit("conflict", sc, ids=ids, goal=payload.get("query"))

    # ------------------------------------------------------------------ introspection
    def pending(self) -> list[ReflectionJob]:
        with self._cond:
            return sorted(self._pending.values(), key=lambda j: j.due)

    def kick(self) -> None:
        """Wake the workers (after advancing an injected clock)."""
        with self._cond:
            self._cond.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no job is pending or running (jobs waiting out a debounce count as pending).

        Returns False on timeout.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._pending or self._running:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(timeout=min(remaining, 0.1) if remaining is not None else 0.1)
            return True

    def run_pending_now(self) -> None:
        """Make every pending job due now (debounce and cooldown ignored)."""
        with self._cond:
            for job in self._pending.values():
                job.due = 0.0
            self._cond.notify_all()

    # ------------------------------------------------------------------ worker
    def _pick(self) -> ReflectionJob | None:
        now = self.clock()
        ready = [j for k, j in self._pending.items() if k not in self._running and (self._draining or j.due <= now)]
        if not ready:
            return None
        job = min(ready, key=lambda j: j.due)
        del self._pending[job.key]
        self._running[job.key] = job
        return job

    def _loop(self) -> None:
        while True:
            with self._cond:
                job = None
                while job is None:
                    if self._stopping:
                        return
                    self._maybe_scan()
                    job = self._pick()
                    if job is None:
                        self._cond.wait(timeout=self.policy.poll_s)
            self._execute(job)

    def _maybe_scan(self) -> None:
        interval = self.policy.decay_interval_s
        if not interval or self.scanner is None or self._draining or self.clock() < self._next_scan:
            return
        self._next_scan = self.clock() + interval
        scanner = self.scanner
        self._cond.release()  # the scan reads the graph: never hold the lock over I/O
        try:
            jobs = scanner()
        except Exception:  # noqa: BLE001 - a failed scan is retried at the next interval
            log.exception("reflection decay scan failed")
            jobs = []
        finally:
            self._cond.acquire()
        for j in jobs:
            if j.key not in self._pending and j.key not in self._running:
                j.due = self.clock() + self.policy.debounce_s
                j.first = self.clock()
                self._pending[j.key] = j

    def _execute(self, job: ReflectionJob) -> None:
        job.attempts += 1
        try:
            result = self.runner(job)
            error: BaseException | None = None
        except Exception as err:  # noqa: BLE001 - logged, retried, never propagated to the fast path
            result, error = None, err
        with self._cond:
            self._running.pop(job.key, None)
            self._last_done[job.key] = self.clock()
            if error is None:
                self.completed += 1
                if result is not None:
                    self.results.append(result)
                    del self.results[:-100]
            else:
                self._failed(job, error)
            self._cond.notify_all()

    def _failed(self, job: ReflectionJob, error: BaseException) -> None:
        job.last_error = f"{type(error).__name__}: {error}"[:500]
        p = self.policy
        log.warning("reflection job %s (%s %s) failed, attempt %d/%d: %s", job.job_id, job.kind,
                    job.scope.as_params(), job.attempts, p.max_attempts, job.last_error)
        if job.attempts < p.max_attempts or (p.fallback_extractive and not job.fallback):
            if job.attempts >= p.max_attempts:
                job.fallback = True  # one last run without the model
            self.retries += 1
            job.due = self.clock() + (0.0 if job.fallback else p.retry_backoff_s * 2 ** (job.attempts - 1))
            if job.key in self._pending:  # a newer trigger arrived meanwhile: merge into it
                newer = self._pending[job.key]
                newer.ids = None if newer.ids is None or job.ids is None else list(
                    dict.fromkeys([*job.ids, *newer.ids]))
                newer.attempts = max(newer.attempts, job.attempts)
                newer.fallback = newer.fallback or job.fallback
            else:
                self._pending[job.key] = job
        else:
            self.failed.append(job)

    # ------------------------------------------------------------------ persistence
    def _persist(self, jobs: Sequence[ReflectionJob]) -> None:
        path = self.policy.pending_path
        if path is None:
            if jobs:
                log.warning("%d reflection job(s) left on close and no pending_path to persist them", len(jobs))
            return
        path = Path(path).expanduser()
        if not jobs:
            if path.exists():
                path.unlink()
            return
        # the jobs name memories of every tenant: owner-only, atomic, never through a link (neusym.private_files)
        write_private(path, json.dumps({"version": 1, "jobs": [j.to_json() for j in jobs]}, ensure_ascii=False))
        log.info("persisted %d pending reflection job(s) to %s", len(jobs), path)

    def _load_persisted(self) -> None:
        path = self.policy.pending_path
        if path is None or not Path(path).expanduser().exists():
            return
        path = Path(path).expanduser()
        try:
            data = json.loads(path.read_text())
            jobs = [ReflectionJob.from_json(j) for j in data.get("jobs", [])]
        except (OSError, ValueError, KeyError, TypeError) as err:
            log.warning("cannot read pending reflection jobs from %s (%s); ignoring them", path, err)
            return
        now = self.clock()
        with self._cond:
            for j in jobs:
                j.due, j.first = now + self.policy.debounce_s, now
                self._pending.setdefault(j.key, j)
        path.unlink()
        log.info("resumed %d pending reflection job(s) from %s", len(jobs), path)
