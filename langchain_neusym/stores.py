"""``NeuSymStore``: NeuSym as LangGraph's long-term memory store (``langgraph.store.base.BaseStore``).

How namespaces map to NeuSym (one memory per item)::

    item (namespace, key, value)          NeuSym memory
    --------------------------------      ------------------------------------------------------------------
    tenant                                scope.user_id  = the store's ``user_id``, else namespace[user_index]
    namespace                             scope.agent_id = 'lg:["memories","ana"]' (the tuple as JSON; a digest
                                          if that is over 500 characters), and tags 'lgns:<prefix JSON>' for
                                          every prefix plus 'lgsub:<prefix JSON>' for every strict prefix
    key                                   scope.session_id = 'lgk:<digest of namespace and key>'
    index=False                           scope.agent_id 'lgx:...' and tags 'lgnx:<prefix JSON>' instead of
                                          'lgsub:': out of the store's search, still read and listed
    value                                 metadata["langgraph"] = {namespace, key, value, index, ttl}
    indexed text (``index`` fields)       content, which NeuSym embeds, indexes for BM25 and links in the graph
    ttl (minutes)                         expires_at

Why the key is a session: each item then has its own scope, so ``get``/``put`` find an item with one scoped
lookup, and governance's duplicate merge (which works inside a scope) never folds two keys into one memory.
Admission (screening, conflicts) runs on every put, a new item or an existing key's new value; a refused put raises
:class:`neusym.PolicyViolationError`, a quarantined one is stored but never served. An item that governance marks
superseded by a newer contradicting fact keeps its value for the store's reads (get, listing, search) while the
engine's own recall prefers the newer fact; an item forgotten through governance (archived) is gone from the store.
Because items are ordinary memories of their tenant, ``NeuSymRetriever(user_id=...)`` and the other adapters
see what an agent saved through the store; the store itself only ever returns its own items.

Semantics follow ``InMemoryStore``: in one ``batch`` every read sees the state before the batch's puts, the last
put of a (namespace, key) wins, ``put(..., None)`` deletes, filters support ``$eq $ne $gt $gte $lt $lte`` and
nested dicts, ``list_namespaces`` supports prefix/suffix (with ``*``), ``max_depth``, ``limit``, ``offset``.
``search(prefix, query=...)`` is NeuSym's two-stage search over the indexed items; items put with
``index=False`` are not ranked (LangGraph: "disables indexing") and, as in ``InMemoryStore``, only fill a page the
ranked items leave short, with score ``None``; without ``query`` it lists every item oldest first. A put or delete
of one key is atomic (one engine mutation: lookup and write cannot interleave with another put of that key).
Differences: an ``index=False`` item is still an ordinary memory of its tenant, so the engine's own recall may
find its JSON text; every read needs a tenant (a prefix that names the user, or the store's ``user_id``), except
``list_namespaces`` on a store opened with ``all_tenants=True``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import logging
import threading
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)

from langchain_neusym._common import check_memory
from neusym import (
    InvalidInputError,
    MemoryRecord,
    MemoryStatus,
    NeuSymMemory,
    PolicyViolationError,
    Scope,
    ScopeError,
    SearchResult,
)
from neusym.record import validate_label

__all__ = ["NeuSymStore"]

log = logging.getLogger("langchain_neusym")

_META = "langgraph"
_NS_TAG = "lgns:"
_SUB_TAG = "lgsub:"
_NOINDEX_TAG = "lgnx:"
_TTL_TAG = "lgttl"  # items put with a TTL: what a sweep looks through, not the whole store
_LIVE = [MemoryStatus.ACTIVE.value, MemoryStatus.PENDING.value]  # what a put updates in place
_READ = [*_LIVE, MemoryStatus.SUPERSEDED.value]  # reads: a newer contradicting fact does not erase an item's value
_ANY = [*_READ, MemoryStatus.QUARANTINED.value, MemoryStatus.ARCHIVED.value]
_PAGE = 1000
_ACTOR = "langgraph-store"


def _js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _ns_tag(prefix: Sequence[str]) -> str:
    return _NS_TAG + _js(list(prefix))


def _sub_tag(prefix: Sequence[str]) -> str:
    return _SUB_TAG + _js(list(prefix))


def _digest(value: Any) -> str:
    return hashlib.sha256(_js(value).encode("utf-8")).hexdigest()


def _check_unicode(op: Op) -> None:
    """Namespaces and keys become scope ids and digests: a lone surrogate (not encodable as UTF-8) is refused with
    a typed error instead of a UnicodeEncodeError from deep inside."""
    parts = [*(getattr(op, "namespace", None) or ()), *(getattr(op, "namespace_prefix", None) or ())]
    key = getattr(op, "key", None)
    for part in [*parts, *([key] if isinstance(key, str) else [])]:
        if isinstance(part, str) and not part.isascii():
            try:
                part.encode("utf-8")
            except UnicodeEncodeError as err:
                raise InvalidInputError(f"namespace labels and keys must be valid Unicode: {err}") from err


def _ns_agent(namespace: Sequence[str], indexed: bool = True) -> str:
    """The agent id of a namespace's items; unindexed items live beside them, out of the namespace's search."""
    text = ("lg:" if indexed else "lgx:") + _js(list(namespace))
    return text if len(text) <= 500 else ("lg#" if indexed else "lgx#") + _digest(list(namespace))


class NeuSymStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items are NeuSym memories (see the module docstring for the mapping).

    Args:
        memory: an open :class:`neusym.NeuSymMemory`.
        user_id: put every namespace inside this tenant. Without it the tenant is ``namespace[user_index]``.
        user_index: which namespace element names the tenant (``0`` for ``(user_id, "memories")``, ``1`` for
            LangMem's ``("memories", "{user_id}")``).
        index: ``IndexConfig``; only ``fields`` is used (default: a ``"content"`` or ``"text"`` string field, else
            the whole value as JSON). Embeddings are always the memory's own embedder.
        ttl: ``TTLConfig``, read as LangGraph's SQL stores read it: ``default_ttl`` minutes for puts without a
            ``ttl``; ``refresh_on_read`` (missing = ``False``, as ``SqliteStore`` reads it) makes get/search push
            the expiry of what they return forward; a per-call ``refresh_ttl=True``/``False`` wins (the base
            class's documented override, as ``PostgresStore`` does); ``sweep_interval_minutes`` paces
            :meth:`start_ttl_sweeper`. Expired items disappear from every read at once; :meth:`sweep_ttl` deletes
            them (NeuSym's janitor would archive them otherwise).
        all_tenants: allow ``list_namespaces`` without a tenant (an operator view across users).
        origin: the provenance recorded on stored items (governance trusts ``user`` more than ``agent``).

    Example::

        store = NeuSymStore(mem, user_index=1)
        agent = create_agent(model, tools, store=store)
        store.put(("memories", "ana"), "food", {"content": "Ana is vegetarian"})
        store.search(("memories", "ana"), query="what does Ana eat?")
    """

    supports_ttl = True

    def __init__(
        self,
        memory: NeuSymMemory,
        *,
        user_id: str | None = None,
        user_index: int = 0,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        all_tenants: bool = False,
        origin: str = "agent",
    ) -> None:
        self.memory = check_memory(memory)
        if user_id is not None:
            Scope.coerce(None, user_id=user_id)
        if isinstance(user_index, bool) or not isinstance(user_index, int) or user_index < 0:
            raise InvalidInputError(f"user_index must be a non-negative int, got {user_index!r}")
        self.user_id = user_id
        self.user_index = user_index
        self.all_tenants = all_tenants
        self.origin = origin
        self.index_config = dict(index) if index else None
        if index and (index.get("embed") is not None or index.get("dims") is not None):
            warnings.warn("NeuSymStore embeds with the memory's own embedder; index['embed'] and index['dims'] "
                          "are ignored", UserWarning, stacklevel=2)
        self.index_fields: list[str] | None = list(index["fields"]) if index and index.get("fields") else None
        # BaseStore.get/search turn a missing refresh_on_read (and a missing config) into refresh_ttl=True; the SQL
        # stores do not refresh then, so the config is made explicit here and only a per-call request refreshes
        self.ttl_config = TTLConfig(**{**(ttl or {}), "refresh_on_read": bool((ttl or {}).get("refresh_on_read"))})
        self._ttl_given = ttl is not None
        self._sweeper: threading.Thread | None = None
        self._sweep_stop = threading.Event()

    # ------------------------------------------------------------------ BaseStore
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        refresh: dict[str, dict[str, float]] = {}  # tenant -> memory id -> new expiry, for the batch's reads
        for op in ops:  # reads see the state before this batch's writes, as in InMemoryStore
            validate_op_namespace(op)
            _check_unicode(op)
            if isinstance(op, GetOp):
                results.append(self._get(op, refresh))
            elif isinstance(op, SearchOp):
                results.append(self._search(op, refresh))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            elif isinstance(op, PutOp):
                if not op.namespace:
                    raise InvalidNamespaceError("Namespace cannot be empty.")
                puts[(tuple(op.namespace), str(op.key))] = op
                results.append(None)
            else:
                raise InvalidInputError(f"unknown store operation {type(op).__name__}")
        for user, expiry in refresh.items():  # ONE statement per tenant for every read of the batch, unaudited
            self.memory.refresh_expiry(expiry, user_id=user)
        for op in puts.values():
            self._put(op)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    # ------------------------------------------------------------------ scope mapping
    def _tenant(self, path: Sequence[str]) -> str:
        if self.user_id is not None:
            return self.user_id
        if len(path) > self.user_index and path[self.user_index] != "*":
            return path[self.user_index]
        raise ScopeError(f"namespace {tuple(path)} does not name a tenant (element {self.user_index}); pass a "
                         "longer prefix or open the store with user_id=...")

    def _key_scope(self, namespace: Sequence[str], key: str) -> Scope:
        """The one item's scope for lookups: its tenant and its key (the session id digests namespace and key)."""
        return Scope(user_id=self._tenant(namespace), session_id="lgk:" + _digest([list(namespace), key])[:40])

    def _item_scope(self, namespace: Sequence[str], key: str, indexed: bool = True) -> Scope:
        return self._key_scope(namespace, key).model_copy(update={"agent_id": _ns_agent(namespace, indexed)})

    @staticmethod
    def _tags(namespace: Sequence[str], indexed: bool = True) -> list[str]:
        prefixes = [tuple(namespace[:i]) for i in range(len(namespace) + 1)]
        if not indexed:  # listed under every prefix, found by the unranked fill only
            return [_ns_tag(p) for p in prefixes] + [_NOINDEX_TAG + _js(list(p)) for p in prefixes]
        return [_ns_tag(p) for p in prefixes] + [_sub_tag(p) for p in prefixes[:-1]]

    # ------------------------------------------------------------------ conversions
    @staticmethod
    def _info(rec: MemoryRecord) -> dict[str, Any] | None:
        info = rec.metadata.get(_META)
        return info if isinstance(info, dict) and "key" in info and "namespace" in info else None

    def _item_fields(self, rec: MemoryRecord) -> dict[str, Any]:
        info = self._info(rec) or {}
        return {"value": dict(info.get("value") or {}), "key": str(info.get("key")),
                "namespace": tuple(info.get("namespace") or ()), "created_at": rec.created_at,
                "updated_at": rec.updated_at or rec.created_at}

    def _index_text(self, value: dict[str, Any], index: Literal[False] | list[str] | None) -> str:
        fields = self.index_fields if index is None else (["$"] if index is False else list(index))
        if fields is None:
            for name in ("content", "text"):
                if isinstance(value.get(name), str) and value[name].strip():
                    return str(value[name])
            fields = ["$"]
        texts = [t for f in fields for t in get_text_at_path(value, "$" if f == "$" else tokenize_path(f))
                 if t and t.strip()]
        return "\n".join(texts) if texts else get_text_at_path(value, "$")[0]

    # ------------------------------------------------------------------ ops
    def _lookup(self, namespace: Sequence[str], key: str, statuses: list[str]) -> list[MemoryRecord]:
        scope = self._key_scope(namespace, key)
        recs = self.memory.query(scope=scope, statuses=statuses, order="recent", limit=20)
        return [r for r in recs if (i := self._info(r)) and i["key"] == key and list(i["namespace"]) == list(namespace)]

    def _refresh(self, recs: Iterable[MemoryRecord], wanted: bool, refresh: dict[str, dict[str, float]]) -> None:
        """Note the new expiry of every returned item that has a TTL; :meth:`batch` writes them all at once."""
        if not wanted:
            return
        now = time.time()
        for rec in recs:
            ttl = (self._info(rec) or {}).get("ttl")
            if ttl and rec.scope.user_id:
                refresh.setdefault(rec.scope.user_id, {})[rec.id] = now + float(ttl) * 60

    def _get(self, op: GetOp, refresh: dict[str, dict[str, float]]) -> Item | None:
        recs = self._lookup(op.namespace, op.key, _READ)
        if not recs:
            return None
        self._refresh(recs[:1], op.refresh_ttl, refresh)  # BaseStore.get already applied ttl_config
        return Item(**self._item_fields(recs[0]))

    def _put(self, op: PutOp) -> None:
        namespace, key = tuple(op.namespace), str(op.key)
        # keys and labels come back to the agent in items and sit in the memory's metadata: one printable line
        for what, label in (("store key", key), *(("namespace label", x) for x in namespace)):
            if label:
                validate_label(label, what, 1024)
        if op.value is not None:
            if not isinstance(op.value, Mapping):
                raise InvalidInputError(f"a store value must be a dict, got {type(op.value).__name__}")
            try:
                json.dumps(dict(op.value), allow_nan=False)
            except (TypeError, ValueError) as err:
                raise InvalidInputError(f"store values must be JSON-serialisable: {err}") from err
        # one mutation per key: the lookup and the write below cannot interleave with another put or delete of it
        with self.memory.atomic(self._key_scope(namespace, key)):
            self._put_locked(op, namespace, key)

    def _put_locked(self, op: PutOp, namespace: tuple[str, ...], key: str) -> None:
        key_scope = self._key_scope(namespace, key)
        existing = self._lookup(namespace, key, _ANY)
        if op.value is None:
            if existing:
                self.memory.delete([r.id for r in existing], scope=key_scope, actor=_ACTOR, reason="store delete")
            return
        value = dict(op.value)
        indexed = op.index is not False
        scope = self._item_scope(namespace, key, indexed)
        text = self._index_text(value, op.index)
        info = {"namespace": list(namespace), "key": key, "value": value, "index": op.index, "ttl": op.ttl}
        fields: dict[str, Any] = {"metadata": {_META: info},
                                  "tags": self._tags(namespace, indexed) + ([_TTL_TAG] if op.ttl else []),
                                  "expires_at": datetime.fromtimestamp(time.time() + float(op.ttl) * 60, tz=UTC)
                                  if op.ttl else None}
        live = [r for r in existing if r.status.value in _LIVE and r.scope == scope]
        stale = [r.id for r in existing if r.id not in {x.id for x in live[:1]}]
        if stale:  # earlier versions governance set aside, or kept under the other index setting: replaced
            self.memory.delete(stale, scope=key_scope, actor=_ACTOR, reason="replaced by store put")
        if live:
            self._overwrite(live[0], text, scope, fields)
            return
        added = self.memory.add(text, scope=scope, infer=False, origin=self.origin, tags=fields["tags"],
                                metadata=fields["metadata"], ttl=float(op.ttl) * 60 if op.ttl else None)
        if added:
            return
        decision = added.decisions[0] if added.decisions else None
        if decision is not None and decision.action.value == "merge" and decision.target_id:
            # the same text already exists under this key's scope (an expired earlier version): revive it
            target = self.memory.get(decision.target_id, scope=scope)
            self._overwrite(target, text, scope, fields)
            return
        reason = decision.reason if decision is not None else "nothing stored"
        raise PolicyViolationError(f"governance did not store {namespace}/{key}: {reason}")

    def _overwrite(self, rec: MemoryRecord, text: str, scope: Scope, fields: dict[str, Any]) -> None:
        """A put on an existing key edits its memory: the engine's update runs add's governance on new text, as
        written by the store's ``origin`` (a text a new put would quarantine is quarantined, never served)."""
        self.memory.update(rec.id, text if text != rec.content else None, scope=scope, actor=_ACTOR,
                           reason="store put", origin=self.origin, **fields)

    def _search(self, op: SearchOp, refresh: dict[str, dict[str, float]]) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        user = self._tenant(prefix)
        limit, offset = max(int(op.limit), 0), max(int(op.offset), 0)
        need = offset + limit
        if need == 0:
            return []
        items: list[tuple[MemoryRecord, float | None]]
        if op.query:
            hits = self._ranked(op.query, prefix, user, need, bool(op.filter))
            items = [(r.memory, float(r.score)) for r in hits]
        else:
            items = [(rec, None) for rec in self._listing(prefix, user, need, bool(op.filter))]
        items = [(rec, s) for rec, s in items if self._info(rec) and _matches(self._info(rec), prefix, op.filter)]
        page = items[offset:need]
        if op.query and len(page) < limit:  # InMemoryStore: unindexed items fill a short page, unscored
            fill = self._listing(prefix, user, limit, bool(op.filter), tag=_NOINDEX_TAG + _js(list(prefix)))
            page += [(rec, None) for rec in fill
                     if (i := self._info(rec)) and _matches(i, prefix, op.filter)][: limit - len(page)]
        self._refresh([rec for rec, _ in page], op.refresh_ttl, refresh)
        return [SearchItem(**self._item_fields(rec), score=s) for rec, s in page]

    def _ranked(self, query: str, prefix: tuple[str, ...], user: str, need: int,
                filtered: bool) -> list[SearchResult]:
        k = min(_PAGE, max(need * 4, 50) if filtered else need)
        hits: dict[str, SearchResult] = {}
        if prefix:  # items directly in the namespace: a precise stage 1 (their own agent scope)
            for r in self.memory.search(query, scope=Scope(user_id=user, agent_id=_ns_agent(prefix)), k=k,
                                        statuses=_READ):
                hits[r.id] = r
        sub = _sub_tag(prefix)
        if self.memory.query(scope=Scope(user_id=user), tags=[sub], statuses=_READ, limit=1):
            # deeper namespaces exist: search the tenant, keep items under the prefix, recall deeper in stage 1
            recipe = self.memory.retrieval.with_(candidates=max(self.memory.retrieval.candidates, 4 * k, 200))
            for r in self.memory.search(query, scope=Scope(user_id=user), tags=[sub], k=k, recipe=recipe,
                                        statuses=_READ):
                if r.id not in hits or r.score > hits[r.id].score:
                    hits[r.id] = r
        return sorted(hits.values(), key=lambda r: -r.score)

    def _listing(self, prefix: tuple[str, ...], user: str, need: int, filtered: bool,
                 tag: str | None = None) -> list[MemoryRecord]:
        out: list[MemoryRecord] = []
        offset = 0
        while True:
            page = self.memory.query(scope=Scope(user_id=user), tags=[tag or _ns_tag(prefix)], order="oldest",
                                     statuses=_READ, limit=_PAGE, offset=offset)
            out.extend(page)
            offset += len(page)
            if len(page) < _PAGE or (not filtered and len(out) >= need):
                return out

    # ------------------------------------------------------------------ TTL sweeping (LangGraph's SQL store API)
    def sweep_ttl(self) -> int:
        """Delete the store's expired items (hard, through NeuSym's one purge path); returns how many. Covers
        the store's tenant, or every tenant's store items when the store is not bound to one: a sweep deletes only
        what already vanished from every read."""
        now = time.time()
        scope = Scope(user_id=self.user_id) if self.user_id is not None else None
        expired: dict[str, list[str]] = {}
        offset = 0
        while True:
            page = self.memory.query(scope=scope, all_tenants=scope is None, tags=[_TTL_TAG], statuses=_ANY,
                                     include_expired=True, order="oldest", limit=_PAGE, offset=offset)
            for rec in page:
                if rec.expires_at is not None and rec.expires_at.timestamp() <= now and rec.scope.user_id \
                        and self._info(rec) is not None:
                    expired.setdefault(rec.scope.user_id, []).append(rec.id)
            offset += len(page)
            if len(page) < _PAGE:
                break
        return sum(self.memory.delete(ids, user_id=user, actor=_ACTOR, reason="ttl expired (store sweep)")
                   for user, ids in expired.items())

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> concurrent.futures.Future[None]:
        """Run :meth:`sweep_ttl` every ``sweep_interval_minutes`` (else the config's, else 5) in a daemon thread
        until :meth:`stop_ttl_sweeper`; a store opened without a ``ttl`` config has nothing to sweep and returns a
        finished future, as LangGraph's SQL stores do. Cancelling the future stops the thread."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        if not self._ttl_given:
            future.set_result(None)
            return future
        future.add_done_callback(lambda f: self._sweep_stop.set() if f.cancelled() else None)
        if self._sweeper is not None and self._sweeper.is_alive():
            return future
        self._sweep_stop.clear()
        interval = float(sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes") or 5) * 60

        def loop() -> None:
            try:
                while not self._sweep_stop.wait(interval):
                    try:
                        swept = self.sweep_ttl()
                        if swept:
                            log.info("store swept %d expired items", swept)
                    except Exception:  # noqa: BLE001 - one failed pass must not end the sweeper
                        log.exception("store TTL sweep failed")
                if not future.done():
                    future.set_result(None)
            except BaseException as err:  # noqa: BLE001 - handed to whoever waits on the future
                if not future.done():
                    future.set_exception(err)

        self._sweeper = threading.Thread(target=loop, name="neusym-store-ttl-sweeper", daemon=True)
        self._sweeper.start()
        return future

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; ``True`` once it has stopped (or was not running), ``False`` on timeout."""
        thread = self._sweeper
        if thread is None or not thread.is_alive():
            return True
        self._sweep_stop.set()
        thread.join(timeout)
        if thread.is_alive():
            return False
        self._sweeper = None
        return True

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = tuple(op.match_conditions or ())
        user = self.user_id
        if user is None:
            for cond in conditions:
                if cond.match_type == "prefix" and len(cond.path) > self.user_index \
                        and cond.path[self.user_index] != "*":
                    user = cond.path[self.user_index]
                    break
        if user is None and not self.all_tenants:
            raise ScopeError("list_namespaces needs a prefix that names the tenant (or a store opened with "
                             "user_id=... or all_tenants=True)")
        scope = Scope(user_id=user)  # user None: every tenant (all_tenants=True was checked above)
        seen: set[tuple[str, ...]] = set()
        offset = 0
        while True:
            page = self.memory.query(scope=scope, all_tenants=user is None, tags=[_ns_tag(())], statuses=_READ,
                                     limit=_PAGE, offset=offset)
            seen.update(tuple(info["namespace"]) for rec in page if (info := self._info(rec)))
            offset += len(page)
            if len(page) < _PAGE:
                break
        names = [ns for ns in seen if all(_does_match(c, ns) for c in conditions)]
        if op.max_depth is not None:
            names = list({ns[: op.max_depth] for ns in names})
        return sorted(names)[op.offset : op.offset + op.limit]


def _does_match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path, strict=False) if condition.match_type == "prefix" else \
        zip(reversed(namespace), reversed(path), strict=False)
    if condition.match_type not in ("prefix", "suffix"):
        raise InvalidInputError(f"unsupported match type {condition.match_type!r}")
    return all(p == "*" or n == p for n, p in pairs)


def _matches(info: dict[str, Any], prefix: tuple[str, ...], flt: dict[str, Any] | None) -> bool:
    if tuple(info["namespace"][: len(prefix)]) != prefix:
        return False
    value = info.get("value") or {}
    return all(_compare(value.get(k), v) for k, v in (flt or {}).items())


def _compare(item_value: Any, filter_value: Any) -> bool:
    """InMemoryStore's JSONB-like comparison: operator dicts, nested dicts, element-wise lists, equality."""
    if isinstance(filter_value, dict):
        if any(k.startswith("$") for k in filter_value):
            return all(_apply(item_value, op, arg) for op, arg in filter_value.items())
        if not isinstance(item_value, dict):
            return False
        return all(_compare(item_value.get(k), v) for k, v in filter_value.items())
    if isinstance(filter_value, list | tuple):
        return (isinstance(item_value, list | tuple) and len(item_value) == len(filter_value)
                and all(_compare(i, f) for i, f in zip(item_value, filter_value, strict=False)))
    return bool(item_value == filter_value)


def _apply(value: Any, operator: str, arg: Any) -> bool:
    if operator == "$eq":
        return bool(value == arg)
    if operator == "$ne":
        return bool(value != arg)
    if operator in ("$gt", "$gte", "$lt", "$lte"):
        try:
            a, b = float(value), float(arg)
        except (TypeError, ValueError):
            return False
        return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[operator]
    raise InvalidInputError(f"unsupported filter operator {operator!r}; use $eq $ne $gt $gte $lt $lte")
