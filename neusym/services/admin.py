"""The operator's door, ``mem.admin``: counts, raw Cypher, the derived indexes, backups and imports, the graph
picture, and what the memory runs with (embedder, extractor, retrieval recipe, the last search's timings).

Everyday code needs none of it: the memory verbs are on :class:`~neusym.NeuSymMemory`, forgetting and review on
``mem.governance``, reflection and context on ``mem.reflection``. Operator paths that may span tenants take
``all_tenants=True`` as an explicit acknowledgement (never together with a scope); every other call resolves its
scope through :meth:`Engine.scope <neusym.engine.Engine.scope>` like the rest of the library.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, Unpack, overload

from neusym.embeddings import Embedder
from neusym.engine import Engine
from neusym.errors import ScopeError
from neusym.extraction import Extractor
from neusym.record import Scope, ScopeIds
from neusym.reembed import ReembedReport
from neusym.retrieval.config import RetrievalConfig
from neusym.retrieval.pipeline import Reranker, StageTimings
from neusym.retrieval.recipes import get_recipe

if TYPE_CHECKING:
    from neusym.backup import ExportReport, RestoreReport
    from neusym.embeddings.identity import EmbedderIdentity
    from neusym.importing import ImportReport
    from neusym.symbolic.transfer import GraphDump

__all__ = ["Admin"]

T = TypeVar("T")
ScopeArg = Scope | Mapping[str, Any] | None
Progress = Callable[[int, int], None]


class _Shown(Generic[T]):
    """One engine attribute shown on ``mem.admin`` (read-only unless ``settable``): a line per attribute instead
    of a property family that only forwards."""

    def __init__(self, *, settable: bool = False) -> None:
        self._settable = settable
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, obj: None, owner: type) -> _Shown[T]: ...
    @overload
    def __get__(self, obj: Admin, owner: type) -> T: ...
    def __get__(self, obj: Admin | None, owner: type) -> _Shown[T] | T:
        if obj is None:
            return self
        value: T = getattr(obj._engine, self._name)
        return value

    def __set__(self, obj: Admin, value: T) -> None:
        if not self._settable:
            raise AttributeError(f"mem.admin.{self._name} is read-only")
        setattr(obj._engine, self._name, value)


class Admin:
    """See the module docstring."""

    embedder: _Shown[Embedder] = _Shown(settable=True)
    """The embedder (a NeuSym ``Embedder``); setting one does not re-embed: see :meth:`reembed`."""
    extractor: _Shown[Extractor] = _Shown(settable=True)
    """What reads a text into entities, facts, type, dates and TTL phrases on ``add``."""
    llm: _Shown[Any] = _Shown()
    """The chat model the LLM-backed steps use (``None``: every step runs its LLM-free fallback)."""
    reranker: _Shown[Reranker | None] = _Shown()
    """The reranker applied after stage 2 (``None``: none)."""
    default_user_id: _Shown[str | None] = _Shown()
    """The tenant of calls that name none (``None``: every call must name its ``user_id``)."""
    last_timings: _Shown[StageTimings] = _Shown()
    """The stage timings of this memory's last search (milliseconds per stage)."""
    embedder_identity: _Shown[EmbedderIdentity] = _Shown()
    """The model the store's vectors were made by (checked on every open)."""
    last_reembed: _Shown[ReembedReport | None] = _Shown()
    """The report of the last re-embed (on open with ``reembed=...`` or by :meth:`reembed`)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @property
    def retrieval(self) -> RetrievalConfig:
        """The default retrieval recipe of ``search`` (set a :class:`RetrievalConfig` or a recipe name)."""
        return self._engine.retrieval

    @retrieval.setter
    def retrieval(self, value: RetrievalConfig | str) -> None:
        self._engine.retrieval = get_recipe(value) if isinstance(value, str) else value

    @property
    def default_scope(self) -> Scope:
        """``Scope(user_id=default_user_id)``, or an empty scope (which no tenant-scoped call accepts)."""
        return Scope(user_id=self._engine.default_user_id)

    def on_event(self, hook: Callable[[str, dict[str, Any]], None]) -> None:
        """Register a callback for write/search events (reflection triggers, metrics)."""
        self._engine.events.on(hook)

    def _operator_scope(self, scope: ScopeArg, all_tenants: bool, what: str, ids: ScopeIds) -> Scope | None:
        """A tenant's scope, or ``None`` for every tenant (``all_tenants=True``, never together with a scope)."""
        self._engine.check_open()
        given = Scope.coerce(dict(scope) if isinstance(scope, Mapping) else scope, **ids)
        if all_tenants is True:
            if not given.is_empty:
                raise ScopeError("pass either a scope or all_tenants=True, not both")
            return None
        return self._engine.scope(given, all_tenants=all_tenants, what=what, admin=True)

    # ------------------------------------------------------------------ looking
    def stats(self, *, scope: ScopeArg = None, all_tenants: bool = False,
              **scope_ids: Unpack[ScopeIds]) -> dict[str, Any]:
        """Counts by status and type, entities, and the indexes' state (``indexed_vectors``, ``watermark``), for a
        tenant's scope or every tenant."""
        sc = self._operator_scope(scope, all_tenants, "stats", scope_ids)
        return self._engine.stats(scope=sc, all_tenants=sc is None)

    def cypher(self, statement: str, params: dict[str, Any] | None = None, *, all_tenants: bool = False,
               limit: int = 1000) -> list[dict[str, Any]]:
        """Guarded read-only raw Cypher for operators.

        Raw Cypher can read any tenant's data, so it requires ``all_tenants=True`` as an explicit acknowledgement.
        Write clauses and procedures are refused (:class:`UnsafeQueryError`) and the statement runs read-only.
        """
        return self._engine.cypher(statement, params, all_tenants=all_tenants, limit=limit)

    def graph(self, *, scope: ScopeArg = None, all_tenants: bool = False, statuses: Sequence[str] | None = None,
              limit: int | None = 500, **scope_ids: Unpack[ScopeIds]) -> GraphDump:
        """The scope's graph (the newest ``limit`` memories, their entities and links) for a picture:
        :mod:`neusym.visual` draws it as HTML, GraphML or Mermaid."""
        from neusym.symbolic.transfer import collect

        sc = self._operator_scope(scope, all_tenants, "graph", scope_ids)
        return collect(self._engine.store, sc or Scope(), all_tenants=sc is None, statuses=statuses, limit=limit)

    # ------------------------------------------------------------------ the derived indexes
    def reindex(self) -> int:
        """Drop the derived indexes (FAISS, BM25) and rebuild them from the graph, the source of truth; returns
        how many memories were indexed."""
        return self._engine.rebuild_index()

    def reembed(self, *, batch_size: int = 256, progress: Progress | None = None) -> ReembedReport:
        """Re-embed every memory from its stored content with this memory's embedder (see :mod:`neusym.reembed`):
        e.g. to make a store uniform after moving between runtimes of one model. Resumable; nothing is lost.
        Writes wait until it is done; searches go on (on the old vectors until the catch-up)."""
        return self._engine.reembed(batch_size=batch_size, progress=progress)

    # ------------------------------------------------------------------ backup and import
    def export(self, target: Any, *, scope: ScopeArg = None, all_tenants: bool = False, embeddings: bool = True,
               progress: Progress | None = None, **scope_ids: Unpack[ScopeIds]) -> ExportReport:
        """Back up a scope (or, with ``all_tenants``, everything) to ``target``: a path (written atomically, mode
        0600, ``.gz`` compresses) or a text stream. See :mod:`neusym.backup` for the format and guarantees."""
        from neusym import backup

        sc = self._operator_scope(scope, all_tenants, "a backup", scope_ids)
        return backup.export(self._engine, target, scope=sc, embeddings=embeddings, progress=progress)

    def restore(self, source: Any, *, scope: ScopeArg = None, all_tenants: bool = False,
                skip_existing: bool = False, reembed: bool = False, dry_run: bool = False,
                progress: Progress | None = None, **scope_ids: Unpack[ScopeIds]) -> RestoreReport:
        """Write an export back exactly, into this scope only, all or nothing: every line is validated (and checked
        against the scope) before the first write, and a failure leaves the store as it was. See
        :mod:`neusym.backup`."""
        from neusym import backup

        sc = self._operator_scope(scope, all_tenants, "a backup", scope_ids)
        return backup.restore(self._engine, source, scope=sc, skip_existing=skip_existing, reembed=reembed,
                              dry_run=dry_run, progress=progress)

    def import_file(self, source: Any, *, format: str = "auto",  # noqa: A002 - the CLI's word
                    scope: ScopeArg = None, all_tenants: bool = False, infer: bool = True, batch: int = 256,
                    assistant: str | None = None, trust_file_origin: bool = False, dry_run: bool = False,
                    max_items: int | None = None, progress: Progress | None = None,
                    **scope_ids: Unpack[ScopeIds]) -> ImportReport:
        """Import JSON Lines, a plain chat log or LoCoMo JSON through the normal write path (governance included).
        The ids given here win over the file's; a line's ``origin``/``confidence`` are ignored unless
        ``trust_file_origin``. See :mod:`neusym.importing`."""
        from neusym import importing

        self._engine.check_open()
        given = Scope.coerce(dict(scope) if isinstance(scope, Mapping) else scope, **scope_ids)
        if all_tenants and given.user_id is not None:
            raise ScopeError("pass either user_id or all_tenants=True, not both")
        return importing.import_file(self._engine, source, scope=given, all_tenants=all_tenants, fmt=format,
                                     infer=infer, batch=batch, assistant=assistant,
                                     trust_file_origin=trust_file_origin, dry_run=dry_run, max_items=max_items,
                                     progress=progress)
