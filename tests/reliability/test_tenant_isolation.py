"""Tenant isolation, property-based: random sequences of add / add_batch / search / query / get / update / forget
(by id, by meaning, whole scope; soft and hard) / delete / reflect / build_context over 9 scopes of 6 tenants,
through the engine and through every adapter (LangChain ``NeuSymRetriever``, ``NeuSymStore``, ``NeuSymToolkit``
and ``NeuSymMiddleware`` in a ``create_agent`` run; LlamaIndex ``NeuSymRetriever`` and ``NeuSymMemoryBlock``) and
the CLI (``neusym search/add/export`` in process). The property: an operation in scope R only ever returns memories
whose scope R contains, and only ever alters those (checked against a model of the whole graph after every step);
and an operation whose scope has no user id (every subset of agent/session, with ``None`` or ``""`` for the user
and empty strings for the others) is refused by every surface, writing nothing (issue 14).

The scopes are chosen to be confusable: ``alice`` / ``Alice``, a user and its agent and session sub-scopes, a
user id that is a Cypher fragment, one containing the entity-uid separator ``\\x1f``, and the literal user
``"default"`` (once the silent tenant of a user-less call; now an ordinary tenant that no user-less call reaches). Every text names the same
shared entities (Dana, Acme, Lisbon), so a cross-tenant entity link (neo4j-agent-memory #155) would surface, and
each carries a unique token so text returned by context builders can be traced back to its memory.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from reliability_support import ALL_ROWS, FULL, count

from neusym import InvalidInputError, NeuSymMemory, RecordNotFoundError, Scope, ScopeError

pytestmark = pytest.mark.slow

USERS = ["alice", "Alice", "bob'}) DETACH DELETE n //", "carol\x1fx", "dave", "default"]
DEFAULT_USER = len(USERS) - 1  # the literal "default": not prefixed per sequence, emptied before each one
SCOPES = [  # (user index, agent, session): every subset of (agent, session) under a user
    (0, None, None), (1, None, None), (0, "planner", None), (0, None, "s1"), (2, None, None), (3, None, None),
    (4, "planner", "s1"), (DEFAULT_USER, None, None), (DEFAULT_USER, "planner", None),
]
NO_USER = [(u, a, s) for u in (None, "") for a in (None, "", "planner") for s in (None, "", "s1")]
"""Every user-less scope: the empty scope, agent only, session only, agent + session; ``None`` and ``""`` alike."""
SURFACES = ["add", "search", "query", "get", "update", "forget", "forget_all", "delete", "reflect", "context",
            "history", "export", "stats", "lc_retriever", "li_retriever", "toolkit", "middleware", "lc_chat_memory",
            "li_chat_memory", "li_block", "store", "runnables", "cli"]
"""Everything that takes a tenant scope; each must refuse a user-less one."""
REFUSED = (ScopeError, InvalidInputError, ValidationError)
CLI_COMMANDS = [["search", "Dana"], ["add", "Dana works at Acme."], ["query"], ["export", "-"], ["stats"],
                ["forget", "--everything", "--hard", "--yes"], ["reflect"], ["history", "lives_in"]]
TEXTS = [
    "Dana works at Acme in Lisbon.", "I live in Lisbon.", "I live in Porto.", "Dana likes jazz and Acme coffee.",
    "Meeting with Dana on Friday about the Acme contract.", "I like green tea.", "My sister Dana moved to Porto.",
    "'}) MATCH (n) DETACH DELETE n //", "Remember: the Acme locker code is 4417.", "I prefer window seats.",
]
ENTITIES = ["Dana", "Acme", "Lisbon", "Porto", "jazz"]
SESSIONS = ["s1", "s2", "s3"]
_run = itertools.count()
_cli_turn = itertools.count()
STATS: Counter[str] = Counter()
"""Operations run per kind (printed by the last test of the module, for the README figures)."""


@dataclass
class Item:
    scope: Scope
    content: str
    state: str = "live"  # live | archived | gone


@dataclass
class World:
    """The model: every memory the sequence created, by id, and the LangGraph store items."""

    prefix: str
    items: dict[str, Item] = field(default_factory=dict)
    store_items: dict[tuple[str, str], str] = field(default_factory=dict)
    store_ids: dict[str, tuple[str, str]] = field(default_factory=dict)  # memory id -> (tenant, key)
    tokens: dict[str, str] = field(default_factory=dict)  # unique token -> memory id
    n: int = 0

    def user(self, i: int) -> str:
        return USERS[i] if i == DEFAULT_USER else self.prefix + USERS[i]

    def scope(self, i: int) -> Scope:
        u, a, s = SCOPES[i]
        return Scope(user_id=self.user(u), agent_id=a, session_id=s)

    def text(self, i: int) -> tuple[str, str]:
        self.n += 1
        tok = f"tq{self.prefix[1:-1]}x{self.n}"
        return f"{TEXTS[i]} ({tok})", tok

    def add(self, rec: Any, tok: str | None = None) -> None:
        self.items[rec.id] = Item(rec.scope, rec.content)
        for t in re.findall(r"tq\d+x\d+", rec.content) if tok is None else [tok]:
            self.tokens.setdefault(t, rec.id)

    def retire(self, mid: str, state: str) -> None:
        """A memory forgotten or deleted through the engine; a LangGraph store item it carried is gone too."""
        self.items[mid].state = state
        owner = self.store_ids.get(mid)
        if owner is not None:
            self.store_items.pop(owner, None)

    def visible(self, reader: Scope, mid: str) -> bool:
        item = self.items.get(mid)
        return item is not None and reader.contains(item.scope)


op_scope = st.integers(0, len(SCOPES) - 1)
op_user = st.integers(0, len(USERS) - 1)
op_text = st.integers(0, len(TEXTS) - 1)
op_ref = st.integers(0, 10_000)
WRITES = st.one_of(
    st.tuples(st.just("add"), op_scope, op_text, st.booleans()),
    st.tuples(st.just("add_batch"), st.lists(st.tuples(op_scope, op_text), min_size=1, max_size=4)),
    st.tuples(st.just("lc_put"), op_user, st.integers(0, 3), op_text),
    st.tuples(st.just("li_put"), op_user, st.sampled_from(SESSIONS), op_text),
)
OPS = st.one_of(
    WRITES,
    st.tuples(st.just("add"), op_scope, op_text, st.booleans()),
    st.tuples(st.just("search"), op_scope, op_text, st.sampled_from([1, 5, 50])),
    st.tuples(st.just("query"), op_scope, st.integers(0, len(ENTITIES) - 1)),
    st.tuples(st.just("get"), op_scope, op_ref),
    st.tuples(st.just("update"), op_scope, op_ref, op_text),
    st.tuples(st.just("forget"), op_scope, op_ref, st.booleans()),
    st.tuples(st.just("forget_all"), op_scope),
    st.tuples(st.just("forget_query"), op_scope, st.integers(0, len(ENTITIES) - 1)),
    st.tuples(st.just("delete"), op_scope, op_ref),
    st.tuples(st.just("reflect"), op_scope),
    st.tuples(st.just("context"), op_scope, op_text),
    st.tuples(st.just("lc_retriever"), op_scope, op_text),
    st.tuples(st.just("lc_override"), op_scope, op_user),
    st.tuples(st.just("lc_put"), op_user, st.integers(0, 3), op_text),
    st.tuples(st.just("lc_search"), op_user, op_text),
    st.tuples(st.just("lc_get"), op_user, st.integers(0, 3)),
    st.tuples(st.just("li_retriever"), op_scope, op_text),
    st.tuples(st.just("li_put"), op_user, st.sampled_from(SESSIONS), op_text),
    st.tuples(st.just("li_get"), op_user, st.sampled_from(SESSIONS), st.sampled_from(["user", "session"]), op_text),
    st.tuples(st.just("refuse"), st.sampled_from(SURFACES), st.integers(0, len(NO_USER) - 1), op_ref),
    st.tuples(st.just("tk_remember"), op_scope, op_text),
    st.tuples(st.just("tk_recall"), op_scope, op_text, st.sampled_from(["user", "session"])),
    st.tuples(st.just("tk_update"), op_scope, op_ref, op_text),
    st.tuples(st.just("tk_forget"), op_scope, op_ref),
    st.tuples(st.just("middleware"), op_scope, op_text),
    # one branch for the CLI: each command opens the memory (slow), so it is drawn a third as often
    st.tuples(st.sampled_from(["cli_search", "cli_add", "cli_export"]), op_scope, op_text),
)


class Runner:
    def __init__(self, mem: NeuSymMemory, world: World, cli_env: dict[str, str | None]) -> None:
        from langchain_neusym import NeuSymStore

        self.mem = mem
        self.w = world
        self.store = NeuSymStore(mem)
        self.blocks: dict[tuple[int, str], Any] = {}
        self.cli_env = cli_env

    # ------------------------------------------------------------------ helpers
    def ref(self, n: int) -> str:
        ids = list(self.w.items)
        return ids[n % len(ids)] if ids else "no-such-id"

    def expect_visible(self, reader: Scope, ids: list[str], where: str) -> None:
        STATS["results checked"] += len(ids)
        foreign = [i for i in ids if not self.w.visible(reader, i)]
        assert not foreign, f"{where} in {reader} returned memories outside it: " + \
            str([(i, self.w.items[i].scope if i in self.w.items else "unknown") for i in foreign])

    def expect_tokens(self, reader: Scope, text: str, where: str) -> None:
        for tok in re.findall(r"tq\d+x\d+", text):
            STATS["results checked"] += 1
            mid = self.w.tokens.get(tok)
            src = self.w.items.get(mid) if mid else None
            owner = src.scope if src else None
            # a token may reach the reader through a reflection of the same tenant; never from another tenant
            assert owner is not None and owner.user_id == reader.user_id, f"{where}: {tok} of {owner} leaked to {reader}"

    def sync_store_item(self, user: str, key: str) -> None:
        ns = (user, "notes")
        scope = self.store._item_scope(ns, key)
        current = {r.id: r for r in self.mem.query(scope=scope, statuses=["active", "pending", "superseded",
                                                                          "archived", "quarantined"], limit=50)}
        for mid, item in self.w.items.items():
            if item.scope == scope and mid not in current and item.state != "gone":
                item.state = "gone"
        for rec in current.values():
            self.w.store_ids[rec.id] = (user, key)
            if rec.id not in self.w.items:
                self.w.add(rec)
            self.w.items[rec.id].content = rec.content
            for tok in re.findall(r"tq\d+x\d+", rec.content):
                self.w.tokens.setdefault(tok, rec.id)

    def adopt(self, writer: Scope, where: str) -> None:
        """Memories the graph has and the model does not were just written by ``where``: each must be in exactly
        ``writer`` (a write never lands in another scope); the model takes them over."""
        for r in self._rows():
            if r["id"] in self.w.items:
                continue
            got = Scope(user_id=r["u"], agent_id=r["a"], session_id=r["s"])
            assert got == writer, f"{where} in {writer} wrote {r['id']} into {got}"
            self.w.items[r["id"]] = Item(got, r["c"])
            for tok in re.findall(r"tq\d+x\d+", r["c"]):
                self.w.tokens.setdefault(tok, r["id"])

    def _rows(self) -> list[dict[str, Any]]:
        return self.mem.cypher("MATCH (m:Memory) WHERE m.user_id STARTS WITH $p OR m.user_id = $d RETURN m.id AS id, "
                               "m.user_id AS u, m.agent_id AS a, m.session_id AS s, m.content AS c, "
                               "m.status AS st", {"p": self.w.prefix, "d": USERS[DEFAULT_USER]}, all_tenants=True,
                               limit=ALL_ROWS)

    def fingerprint(self) -> list[Any]:
        """Every memory of the whole graph (all tenants, all sequences): id, scope, content, status, version."""
        return self.mem.cypher("MATCH (m:Memory) RETURN m.id AS id, m.user_id AS u, m.agent_id AS a, "
                               "m.session_id AS s, m.content AS c, m.status AS st, m.version AS v ORDER BY id",
                               all_tenants=True, limit=ALL_ROWS)

    def cli(self, *args: str) -> Any:
        from typer.testing import CliRunner

        from neusym.cli import app

        return CliRunner().invoke(app, list(args), env=self.cli_env, catch_exceptions=False)

    @staticmethod
    def cli_scope(scope: Scope) -> list[str]:
        out = ["--user", scope.user_id or ""]
        if scope.agent_id:
            out += ["--agent", scope.agent_id]
        if scope.session_id:
            out += ["--session", scope.session_id]
        return out

    def agent_turn(self, middleware: Any, text: str, config: dict[str, Any], prompts: list[str]) -> None:
        """One ``create_agent`` turn with ``middleware``; ``prompts`` gets what the (fake) model was sent."""
        from langchain.agents import create_agent
        from langchain_core.callbacks import BaseCallbackHandler
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage

        class Record(BaseCallbackHandler):
            def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
                prompts.extend("\n".join(str(m.content) for m in batch) for batch in messages)

        model = GenericFakeChatModel(messages=iter([AIMessage("Noted.")]))
        agent = create_agent(model, [], middleware=[middleware])
        agent.invoke({"messages": [("user", text)]}, {**config, "callbacks": [Record()]})

    # ------------------------------------------------------------------ user-less scopes
    def refuse(self, surface: str, ids: dict[str, str], ref: str) -> None:  # noqa: C901 - one branch per surface
        """``surface`` called with the user-less ``ids`` must raise a typed refusal."""
        mem = self.mem
        cfg = {"configurable": {**ids, "thread_id": "t-nouser"}}
        if surface == "add":
            mem.add("Dana works at Acme.", infer=False, **ids)
        elif surface == "search":
            mem.search("Dana Acme", **ids)
        elif surface == "query":
            mem.query(**ids)
        elif surface == "get":
            mem.get(ref, **ids)
        elif surface == "update":
            mem.update(ref, "hacked", **ids)
        elif surface == "forget":
            mem.forget(ref, hard=True, **ids)
        elif surface == "forget_all":
            mem.forget(everything=True, hard=True, confirm=True, **ids)
        elif surface == "delete":
            mem.delete(ref, **ids)
        elif surface == "reflect":
            mem.reflect(extractive=True, cool="none", **ids)
        elif surface == "context":
            mem.build_context("Dana Acme", **ids)
        elif surface == "history":
            mem.history(ref, **ids)
        elif surface == "export":
            mem.export(io.StringIO(), **ids)
        elif surface == "stats":
            mem.stats(**ids)
        elif surface == "lc_retriever":
            from langchain_neusym import NeuSymRetriever

            NeuSymRetriever(memory=mem, **ids).invoke("Dana", config=cfg)
        elif surface == "li_retriever":
            from llama_index_neusym import NeuSymRetriever as LIRetriever

            LIRetriever(mem, **ids).retrieve("Dana")
        elif surface == "toolkit":  # ids in config (a thread_id alone is no tenant), and bound on the toolkit
            from langchain_neusym import NeuSymToolkit

            calls = {"remember": {"content": "Dana works at Acme."}, "recall": {"query": "Dana"},
                     "forget": {"memory_id": ref}, "update_memory": {"memory_id": ref, "content": "hacked"}}
            for kit in (NeuSymToolkit(memory=mem), None):
                if kit is None:
                    try:
                        kit = NeuSymToolkit(memory=mem, **ids)
                    except REFUSED:
                        continue
                for tool in kit.get_tools():
                    with pytest.raises(REFUSED):
                        tool.invoke(calls[tool.name], config=cfg)
            raise ScopeError("every toolkit call was refused")
        elif surface == "middleware":
            from langchain_neusym import NeuSymMiddleware

            prompts: list[str] = []
            try:
                self.agent_turn(NeuSymMiddleware(mem), "Where does Dana work? Acme?", cfg, prompts)
            finally:
                assert not prompts, "the model ran without a tenant"
        elif surface == "lc_chat_memory":
            from langchain_neusym import NeuSymChatMemory

            chat = NeuSymChatMemory(memory=mem, **ids)
            with pytest.raises(REFUSED):
                chat.save_context({"input": "Dana works at Acme."}, {"output": "ok"})
            chat.load_memory_variables({"input": "Dana"})
        elif surface == "li_chat_memory":
            from llama_index_neusym import NeuSymChatMemory as LIChatMemory

            LIChatMemory.from_defaults(memory=mem, user_id=ids.get("user_id"),  # type: ignore[arg-type]
                                       **{k: v for k, v in ids.items() if k != "user_id"}).get("Dana")
        elif surface == "li_block":
            from llama_index_neusym import NeuSymMemoryBlock

            NeuSymMemoryBlock(memory=mem, user_id=ids.get("user_id"))  # type: ignore[arg-type]
        elif surface == "store":  # a namespace that names no tenant, read and written
            from langchain_neusym import NeuSymStore

            by_agent = NeuSymStore(mem, user_index=1)
            with pytest.raises(REFUSED):
                by_agent.put(("memories",), "k", {"content": "Dana works at Acme."})
            with pytest.raises(REFUSED):
                self.store.search((), query="Dana")
            with pytest.raises(REFUSED):
                self.store.list_namespaces()
            by_agent.search(("memories",), query="Dana")
        elif surface == "runnables":
            from langchain_neusym import NeuSymRetrievalRunnable, NeuSymSaveRunnable

            with pytest.raises(REFUSED):
                NeuSymSaveRunnable(memory=mem).invoke({"input": "Dana works at Acme.", "output": "ok"}, config=cfg)
            NeuSymRetrievalRunnable(memory=mem).invoke("Dana", config=cfg)
        elif surface == "cli":
            flags = [x for k, flag in (("agent_id", "--agent"), ("session_id", "--session")) if k in ids
                     for x in (flag, ids[k])] + (["--user", ids["user_id"]] if "user_id" in ids else [])
            # each command opens the memory (~0.4 s): CI tries one per call, rotating; the full run all of them
            for cmd in CLI_COMMANDS if FULL else [CLI_COMMANDS[next(_cli_turn) % len(CLI_COMMANDS)]]:
                res = self.cli(*cmd, *flags)
                assert res.exit_code == 2 and res.stderr.startswith("error: "), (cmd, flags, res.stdout, res.stderr)
                if "user_id" not in ids:  # no --user at all: the message names the missing option
                    assert "needs --user" in res.stderr, (cmd, flags, res.stderr)
            raise ScopeError("every CLI command was refused")
        else:  # pragma: no cover
            raise AssertionError(surface)

    # ------------------------------------------------------------------ the operations
    def run(self, op: tuple[Any, ...]) -> None:  # noqa: C901 - one branch per operation keeps the test readable
        mem, w, kind = self.mem, self.w, op[0]
        if kind == "refuse":
            _, surface, i, n = op
            ids = {k: v for k, v in zip(("user_id", "agent_id", "session_id"), NO_USER[i], strict=True)
                   if v is not None}
            before = self.fingerprint()
            with pytest.raises(REFUSED) as refused:
                self.refuse(surface, ids, self.ref(n))
            if "" not in ids.values():  # nothing malformed, only the user missing: the tenant-boundary error
                assert refused.type in (ScopeError, ValidationError), (surface, ids, refused.value)
            assert self.fingerprint() == before, f"a refused {surface} call with {ids} changed the graph"
            STATS["refusals"] += 1
        elif kind == "add":
            _, s, t, infer = op
            text, tok = w.text(t)
            for rec in mem.add(text, scope=w.scope(s), infer=infer):
                assert rec.scope == w.scope(s)
                w.add(rec, tok)
        elif kind == "add_batch":
            items = []
            for s, t in op[1]:
                text, _tok = w.text(t)
                items.append({"content": text, "scope": w.scope(s)})
            for rec in mem.add_batch(items, infer=False):
                w.add(rec)
        elif kind == "search":
            _, s, t, k = op
            reader = w.scope(s)
            hits = mem.search(TEXTS[t], scope=reader, k=k, statuses=["active", "pending", "superseded", "archived"])
            self.expect_visible(reader, [h.id for h in hits], "search")
        elif kind == "query":
            reader = w.scope(op[1])
            recs = mem.query(scope=reader, entity=ENTITIES[op[2]], statuses=["active", "pending", "superseded",
                                                                               "archived", "quarantined"])
            self.expect_visible(reader, [r.id for r in recs], "query")
        elif kind == "get":
            reader, mid = w.scope(op[1]), self.ref(op[2])
            live = mid in w.items and w.items[mid].state != "gone"
            try:
                got = mem.get(mid, scope=reader)
                assert live and w.visible(reader, mid), f"get of {mid} crossed scopes into {reader}"
                assert got.content == w.items[mid].content
            except RecordNotFoundError:
                assert not (live and w.visible(reader, mid)), f"get of visible {mid} in {reader} failed"
        elif kind == "update":
            reader, mid = w.scope(op[1]), self.ref(op[2])
            allowed = mid in w.items and w.items[mid].state != "gone" and w.visible(reader, mid)
            text, tok = w.text(op[3])
            try:
                rec = mem.update(mid, text, scope=reader)
                assert allowed, f"update of {mid} from {reader} altered another scope's memory"
                w.items[mid].content = rec.content
                w.tokens[tok] = mid
            except RecordNotFoundError:
                assert not allowed, f"update of visible {mid} in {reader} failed"
        elif kind == "forget":
            _, s, n, hard = op
            reader, mid = w.scope(s), self.ref(n)
            rep = mem.forget(mid, scope=reader, hard=hard)
            self.expect_visible(reader, rep.ids, "forget")
            for i in rep.ids:
                w.retire(i, "gone" if hard else "archived")
        elif kind == "forget_all":
            reader = w.scope(op[1])
            rep = mem.forget(everything=True, scope=reader)
            self.expect_visible(reader, rep.ids, "forget(everything)")
            for i in rep.ids:
                w.retire(i, "archived")
        elif kind == "forget_query":
            reader = w.scope(op[1])
            rep = mem.forget(query=f"forget everything about {ENTITIES[op[2]]}", scope=reader, confirm=True)
            self.expect_visible(reader, rep.ids, "forget(query)")
            for i in rep.ids:
                w.retire(i, "archived")
        elif kind == "delete":
            reader, mid = w.scope(op[1]), self.ref(op[2])
            allowed = mid in w.items and w.items[mid].state != "gone" and w.visible(reader, mid)
            n = mem.delete(mid, scope=reader)
            assert n == (1 if allowed else 0), f"delete of {mid} from {reader}: {n}, allowed={allowed}"
            if n:
                w.retire(mid, "gone")
        elif kind == "reflect":
            reader = w.scope(op[1])
            try:
                ref = mem.reflect(scope=reader, extractive=True, cool="none")
            except InvalidInputError:
                return  # nothing to reflect in this scope
            self.expect_visible(reader, ref.source_ids, "reflect sources")
            if ref.memory is not None:
                assert reader.contains(ref.memory.scope), f"reflection stored in {ref.memory.scope} from {reader}"
                if ref.memory.id not in w.items:
                    w.add(ref.memory)
                    for t in re.findall(r"tq\d+x\d+", ref.memory.content):
                        w.tokens.setdefault(t, ref.memory.id)
                srcs = mem.cypher("MATCH (r:Memory {id: $id})-[:DERIVED_FROM]->(s:Memory) RETURN s.id AS id",
                                  {"id": ref.memory.id}, all_tenants=True)
                assert {r["id"] for r in srcs} <= {i for i, it in w.items.items()
                                                    if it.scope.user_id == reader.user_id}
        elif kind == "context":
            reader = w.scope(op[1])
            built = mem.build_context(TEXTS[op[2]], scope=reader, budget_tokens=400)
            self.expect_tokens(reader, built.text, "build_context")
        elif kind == "lc_retriever":
            from langchain_neusym import NeuSymRetriever

            reader = w.scope(op[1])
            retriever = NeuSymRetriever(memory=mem, k=20, **reader.model_dump(exclude_none=True))
            docs = retriever.invoke(TEXTS[op[2]])
            self.expect_visible(reader, [d.id for d in docs], "langchain NeuSymRetriever")
        elif kind == "lc_override":
            from langchain_neusym import NeuSymRetriever

            reader, other = w.scope(op[1]), w.user(op[2])
            retriever = NeuSymRetriever(memory=mem, **reader.model_dump(exclude_none=True))
            if other == reader.user_id:
                return
            with pytest.raises(ScopeError):
                retriever.invoke("Dana", config={"configurable": {"user_id": other}})
        elif kind == "lc_put":
            _, u, key_n, t = op
            user, key = w.user(u), f"k{key_n}"
            text, _tok = w.text(t)
            self.store.put((user, "notes"), key, {"content": text})
            w.store_items[(user, key)] = text
            self.sync_store_item(user, key)
        elif kind == "lc_search":
            user = w.user(op[1])
            found = self.store.search((user,), query=TEXTS[op[2]], limit=20)
            STATS["results checked"] += len(found)
            for it in found:
                assert it.namespace[0] == user and w.store_items.get((user, it.key)) == it.value["content"], \
                    f"store search of {user!r} returned {it.namespace}/{it.key}"
        elif kind == "lc_get":
            user, key = w.user(op[1]), f"k{op[2]}"
            got = self.store.get((user, "notes"), key)
            STATS["results checked"] += got is not None
            expected = w.store_items.get((user, key))
            assert (got.value["content"] if got else None) == expected, f"store get {user!r}/{key}"
        elif kind == "li_retriever":
            from llama_index_neusym import NeuSymRetriever as LIRetriever

            reader = w.scope(op[1])
            retriever = LIRetriever(mem, similarity_top_k=20, **reader.model_dump(exclude_none=True))
            nodes = retriever.retrieve(TEXTS[op[2]])
            self.expect_visible(reader, [n.node.metadata["memory_id"] for n in nodes], "llama_index NeuSymRetriever")
        elif kind in ("li_put", "li_get"):
            from llama_index.core.base.llms.types import ChatMessage

            from llama_index_neusym import NeuSymMemoryBlock

            user_i, session = op[1], op[2]
            mode = op[3] if kind == "li_get" else "user"
            block = self.blocks.get((user_i, mode))
            if block is None:  # ONE block per tenant serves every session (llama_index #22701)
                block = self.blocks[(user_i, mode)] = NeuSymMemoryBlock(memory=mem, user_id=w.user(user_i),
                                                                        read_scope=mode, infer=False)
            if kind == "li_put":
                text, tok = w.text(op[3])
                for res in asyncio.run(block._remember([ChatMessage(role="user", content=text)], session_id=session)):
                    for rec in res:
                        assert rec.scope == Scope(user_id=w.user(user_i), session_id=session)
                        w.add(rec, tok)
            else:
                reader = Scope(user_id=w.user(user_i), session_id=session if mode == "session" else None)
                text = asyncio.run(block._aget([ChatMessage(role="user", content=TEXTS[op[4]])], session_id=session))
                for tok in re.findall(r"tq\d+x\d+", text):
                    STATS["results checked"] += 1
                    mid = w.tokens.get(tok)
                    assert mid is not None and w.items[mid].scope.user_id == reader.user_id, \
                        f"memory block of {reader} returned {tok} of {w.items[mid].scope if mid else None}"
                    if mode == "session" and w.items[mid].scope.session_id is not None:
                        assert w.items[mid].scope.session_id == session or w.items[mid].scope == Scope(
                            user_id=reader.user_id), f"session {session} read {tok} of {w.items[mid].scope}"
        elif kind == "tk_remember":
            from langchain_neusym import NeuSymToolkit

            writer = w.scope(op[1])
            text, _tok = w.text(op[2])
            tools = {t.name: t for t in NeuSymToolkit(memory=mem).get_tools()}
            tools["remember"].invoke({"content": text}, config={"configurable": writer.as_params()})
            self.adopt(writer, "toolkit remember")
        elif kind == "tk_recall":
            from langchain_neusym import NeuSymToolkit
            from neusym.adapter_support import read_scope

            scope, mode = w.scope(op[1]), op[3]
            reader = read_scope(scope, mode)
            tools = {t.name: t for t in NeuSymToolkit(memory=mem, read_scope=mode).get_tools()}
            msg = tools["recall"].invoke({"name": "recall", "args": {"query": TEXTS[op[2]], "k": 20}, "id": "r1",
                                          "type": "tool_call"}, config={"configurable": scope.as_params()})
            self.expect_visible(reader, [d.id for d in msg.artifact or []], "toolkit recall")
            self.expect_tokens(reader, str(msg.content), "toolkit recall answer")
        elif kind in ("tk_update", "tk_forget"):
            from langchain_neusym import NeuSymToolkit

            scope, mid = w.scope(op[1]), self.ref(op[2])
            allowed = mid in w.items and w.items[mid].state != "gone" and w.visible(scope, mid)  # as engine update
            tools = {t.name: t for t in NeuSymToolkit(memory=mem, read_scope="session").get_tools()}
            cfg = {"configurable": scope.as_params()}
            if kind == "tk_update":
                text, tok = w.text(op[3])
                answer = tools["update_memory"].invoke({"memory_id": mid, "content": text}, config=cfg)
                if allowed:
                    assert answer.startswith("Updated memory"), answer
                    w.items[mid].content = mem.get(mid, scope=scope).content
                    w.tokens[tok] = mid
                else:
                    assert not answer.startswith("Updated memory"), f"toolkit update of {mid} from {scope}: {answer}"
            else:
                answer = tools["forget"].invoke({"memory_id": mid}, config=cfg)
                if answer.startswith("Forgot memory"):
                    assert allowed, f"toolkit forget of {mid} from {scope} reached another scope: {answer}"
                    w.retire(mid, "archived")
                else:  # an archived memory may count as already forgotten; a live visible one must not
                    assert not (allowed and w.items[mid].state == "live"), f"toolkit forget of {mid}: {answer}"
        elif kind == "middleware":  # a create_agent turn: memories injected before the model, the turn saved after
            from langchain_neusym import NeuSymMiddleware

            scope = w.scope(op[1])
            text, _tok = w.text(op[2])
            prompts: list[str] = []
            self.agent_turn(NeuSymMiddleware(mem, infer=False), text, {"configurable": scope.as_params()}, prompts)
            assert prompts, "the model was not called"
            for prompt in prompts:
                self.expect_tokens(scope, prompt.replace(text, ""), "middleware system prompt")
            self.adopt(scope, "middleware save")
        elif kind == "cli_search":
            scope = w.scope(op[1])
            res = self.cli("search", TEXTS[op[2]], "-k", "50", "--status", "active", "--status", "archived",
                           *self.cli_scope(scope), "--json")
            assert res.exit_code == 0, res.stderr
            self.expect_visible(scope, [r["id"] for r in json.loads(res.stdout)["results"]], "neusym search")
        elif kind == "cli_add":
            scope = w.scope(op[1])
            text, _tok = w.text(op[2])
            res = self.cli("add", text, "--verbatim", *self.cli_scope(scope), "--json")
            assert res.exit_code == 0, res.stderr
            self.adopt(scope, "neusym add")
        elif kind == "cli_export":
            scope = w.scope(op[1])  # op[2] unused
            res = self.cli("export", "-", "--no-embeddings", *self.cli_scope(scope))
            assert res.exit_code == 0, res.stderr
            lines = [json.loads(x) for x in res.stdout.splitlines() if x.strip()]
            self.expect_visible(scope, [x["id"] for x in lines if x["kind"] == "memory"], "neusym export")
            owners = {x["props"]["user_id"] for x in lines if (x.get("props") or {}).get("user_id") is not None}
            assert owners <= {scope.user_id}, f"neusym export of {scope} carried data of {owners - {scope.user_id}}"
            audited = [x.get("memory_id") or x["props"].get("memory_id") for x in lines if x["kind"] == "audit"]
            owner_of = {r["id"]: r["u"] for r in mem.cypher(  # purged memories keep their (content-less) audit
                "MATCH (m:Memory) WHERE m.id IN $ids RETURN m.id AS id, m.user_id AS u", {"ids": audited},
                all_tenants=True, limit=ALL_ROWS)}
            foreign = [m for m in audited if owner_of.get(m, scope.user_id) != scope.user_id
                       or (m in w.items and w.items[m].scope.user_id != scope.user_id)]
            assert not foreign, f"neusym export of {scope} carried another tenant's audit entries: {foreign}"
        else:  # pragma: no cover
            raise AssertionError(kind)

    # ------------------------------------------------------------------ the whole-graph check
    def check_graph(self, step: str) -> None:
        """Nothing outside the operation's scope changed: every memory of the model is in the graph with its scope,
        content and state; no memory of the test's tenants exists that the model does not know."""
        graph = {r["id"]: r for r in self._rows()}
        for mid, item in self.w.items.items():
            r = graph.get(mid)
            if item.state == "gone":
                assert r is None, f"after {step}: deleted {mid} is back"
                continue
            assert r is not None, f"after {step}: {mid} of {item.scope} vanished"
            assert Scope(user_id=r["u"], agent_id=r["a"], session_id=r["s"]) == item.scope, f"{mid} moved scope"
            assert r["c"] == item.content, f"after {step}: {mid} of {item.scope} was altered"
            if item.state == "archived":
                assert r["st"] == "archived", f"after {step}: forgotten {mid} is {r['st']}"
            elif r["st"] == "archived":
                raise AssertionError(f"after {step}: {mid} of {item.scope} was archived by another scope")
        unknown = set(graph) - set(self.w.items)
        assert not unknown, f"after {step}: memories nobody acknowledged: {[graph[i] for i in unknown][:3]}"
        cross = self.mem.cypher(
            "MATCH (m:Memory)-[:MENTIONS]->(e:Entity) WHERE m.user_id STARTS WITH $p AND e.user_id <> m.user_id "
            "RETURN m.id AS id, e.user_id AS ns", {"p": self.w.prefix}, all_tenants=True)
        assert not cross, f"after {step}: a memory links to another tenant's entity: {cross[:3]}"
        edges = self.mem.cypher(
            "MATCH (a:Memory)-[r]->(b:Memory) WHERE a.user_id STARTS WITH $p AND a.user_id <> b.user_id "
            "RETURN a.id AS a, type(r) AS t, b.user_id AS u", {"p": self.w.prefix}, all_tenants=True)
        assert not edges, f"after {step}: an edge crosses tenants: {edges[:3]}"


@pytest.fixture(scope="module")
def shared_memory(tmp_path_factory: pytest.TempPathFactory, falkordb_dir: Any) -> Any:
    from neusym import NeuSymConfig
    from neusym.embeddings import HashingEmbedder

    mem = NeuSymMemory(config=NeuSymConfig(data_dir=falkordb_dir, graph_name="tenant_prop", appendfsync="everysec",
                                           index_path=tmp_path_factory.mktemp("tenant_idx")),
                       embedder=HashingEmbedder(256))
    mem.executor.run("MATCH (n) DETACH DELETE n")
    mem.rebuild_index()
    yield mem
    mem.close()


@pytest.fixture(scope="module")
def cli_env(falkordb_dir: Any) -> dict[str, str | None]:
    """The CLI on the same graph, configured as a user would (its own derived indexes, caught up on each open);
    no default user and no scope variables, so a command without --user has no tenant."""
    env: dict[str, str | None] = {var: None for var in (
        "NEO4J_URI", "NEO4J_URL", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE", "NEUSYM_BACKEND",
        "FALKORDB_HOST", "FALKORDB_PORT", "NEUSYM_USER", "NEUSYM_AGENT", "NEUSYM_SESSION",
        "NEUSYM_DEFAULT_USER_ID")}
    env.update(NEUSYM_DATA_DIR=str(falkordb_dir), NEUSYM_GRAPH="tenant_prop", NEUSYM_EMBEDDER="hashing:256",
               COLUMNS="200")
    return env


SEQUENCES = count(25, 1000)
"""CI runs 25 (it ran 40): with this derandomized budget the 25 still run every operation kind the 40 did (and the
engine ``update``, which the 40 never drew); what the 15 more added was repeats of those kinds on a bigger graph,
at about half the test's time. The full run (``NEUSYM_FULL=1``) is unchanged."""


# no shrink phase: a failing sequence is printed as generated (shrinking a stateful graph run takes minutes)
@settings(max_examples=SEQUENCES, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(ops=st.tuples(st.lists(WRITES, min_size=3, max_size=8), st.lists(OPS, min_size=4, max_size=count(12, 16)))
       .map(lambda t: t[0] + t[1]))
def test_no_operation_crosses_scopes(shared_memory: NeuSymMemory, cli_env: dict[str, str | None],
                                     ops: list[tuple[Any, ...]]) -> None:
    """>= 1,000 sequences in the full run (25 in CI); each starts on fresh tenants of one shared graph, so the
    graph also holds every earlier sequence's memories as foreign data that must never surface (the literal
    "default" tenant, which cannot be prefixed, is emptied first)."""
    seq = next(_run)
    world = World(prefix=f"p{seq}:")
    shared_memory.forget(everything=True, hard=True, confirm=True, user_id=USERS[DEFAULT_USER])
    runner = Runner(shared_memory, world, cli_env)
    n = len(ops)
    sweep: list[tuple[Any, ...]] = [("search", s, (n + s) % len(TEXTS), 50) for s in range(len(SCOPES))]
    sweep += [("query", s, (n + s) % len(ENTITIES)) for s in range(len(SCOPES))]
    sweep += [("lc_retriever", n % len(SCOPES), n % len(TEXTS)), ("li_retriever", (n + 3) % len(SCOPES), 0),
              ("context", (n + 1) % len(SCOPES), 3), ("lc_search", n % len(USERS), 0),
              ("li_get", (n + 2) % len(USERS), SESSIONS[n % 3], "session", 4),
              ("tk_recall", (n + 4) % len(SCOPES), n % len(TEXTS), "session"),
              ("middleware", (n + 5) % len(SCOPES), n % len(TEXTS)),
              ("tk_remember", (n + 7) % len(SCOPES), n % len(TEXTS)), ("tk_update", (n + 8) % len(SCOPES), n, 2),
              ("refuse", SURFACES[n % len(SURFACES)], n % len(NO_USER), n)]
    if seq % 2 == 0:  # and, every other sequence, one CLI command (each opens the memory: slow)
        sweep.append((["cli_search", "cli_add", "cli_export"][seq // 2 % 3], (n + 6) % len(SCOPES), n % len(TEXTS)))
    for i, op in enumerate(ops + sweep):  # every sequence ends with a read sweep over every scope and adapter
        STATS[op[0]] += 1
        runner.run(op)
        runner.check_graph(f"step {i} {op[0]}")



def test_every_surface_refuses_every_user_less_scope(shared_memory: NeuSymMemory,
                                                     cli_env: dict[str, str | None]) -> None:
    """The sampled sequences reach each (surface, user-less scope) pair only by chance; this sweep tries all
    23 x 18 of them once, on a graph holding other tenants' memories, and checks nothing changed."""
    world = World(prefix=f"p{next(_run)}:")
    shared_memory.forget(everything=True, hard=True, confirm=True, user_id=USERS[DEFAULT_USER])
    runner = Runner(shared_memory, world, cli_env)
    for op in [("add", 0, 0, False), ("add", 6, 8, False), ("lc_put", 2, 0, 4)]:
        runner.run(op)
    for surface in SURFACES:
        for i in range(len(NO_USER)):
            if surface == "cli" and not FULL and i % 3:  # CI: 6 of the 18 for the CLI (~0.5 s a command)
                continue
            runner.run(("refuse", surface, i, i))
    runner.check_graph("the refusal sweep")


def test_report_isolation_figures(capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        ops = sum(v for k, v in STATS.items() if k != "results checked")
        print(f"\n[tenant isolation] {SEQUENCES} sequences, {ops} operations over {len(SCOPES)} scopes of "
              f"{len(USERS)} tenants, {STATS['results checked']} returned results checked; by kind "
              f"{dict(sorted((k, v) for k, v in STATS.items() if k != 'results checked'))}")
