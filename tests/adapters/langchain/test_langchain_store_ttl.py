"""NeuSymStore's TTL as LangGraph's SQL stores have it (issue 30 item 4): ``sweep_ttl``, ``start_ttl_sweeper`` /
``stop_ttl_sweeper``, ``refresh_on_read`` missing = no refresh (an explicit per-call ``refresh_ttl`` wins), and a
read refresh that costs ONE unaudited graph statement however many items the read returns. Costs are counted
(statements, audit entries), never timed."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from langgraph.store.base import GetOp

from langchain_neusym import NeuSymStore
from neusym import NeuSymMemory

NS = ("ana", "tmp")


def _expiry(memory: NeuSymMemory, store_key: str) -> float | None:
    for rec in memory.query(user_id="ana", tags=['lgns:["ana","tmp"]'], include_expired=True):
        if rec.metadata["langgraph"]["key"] == store_key:
            return rec.expires_at.timestamp() if rec.expires_at else None
    raise AssertionError(f"no item {store_key}")


@contextmanager
def counted(memory: NeuSymMemory) -> Iterator[list[str]]:
    """Every graph statement run while the block runs (the executor's calls pass through unchanged)."""
    seen: list[str] = []
    executor: Any = memory.engine.executor
    original = executor.run

    def run(cypher: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(cypher)
        return original(cypher, *args, **kwargs)

    executor.run = run
    try:
        yield seen
    finally:
        executor.run = original


def _audits(memory: NeuSymMemory) -> int:
    return len(memory.audit_log(user_id="ana", limit=1000))


def test_refresh_on_read_missing_means_no_refresh(memory: NeuSymMemory) -> None:
    for store in (NeuSymStore(memory, ttl={"default_ttl": 10.0}), NeuSymStore(memory)):
        store.put(NS, "k", {"text": "a note that lives ten minutes"}, ttl=10)
        first = _expiry(memory, "k")
        store.get(NS, "k")
        store.search(NS)
        assert _expiry(memory, "k") == first, "a config without refresh_on_read does not refresh on read"
        store.get(NS, "k", refresh_ttl=True)  # an explicit request wins
        refreshed = _expiry(memory, "k")
        assert refreshed is not None and first is not None and refreshed > first


def test_a_read_refresh_is_one_unaudited_statement(memory: NeuSymMemory) -> None:
    store = NeuSymStore(memory, ttl={"default_ttl": 10.0, "refresh_on_read": True})
    keys = [f"k{i}" for i in range(10)]
    for k in keys:
        store.put(NS, k, {"text": f"note number {k}"})
    before = {k: _expiry(memory, k) for k in keys}
    audits = _audits(memory)
    with counted(memory) as plain:
        assert len(store.search(NS, refresh_ttl=False, limit=20)) == 10
    with counted(memory) as refreshing:
        assert len(store.search(NS, limit=20)) == 10
    assert len(refreshing) == len(plain) + 1, "refreshing ten items adds exactly one statement"
    assert sum("SET m.expires_at" in c for c in refreshing) == 1
    assert _audits(memory) == audits, "a read refresh is not an audited edit"
    after = {k: _expiry(memory, k) for k in keys}
    assert all(after[k] > before[k] for k in keys)  # type: ignore[operator]
    with counted(memory) as gets:  # one batch of gets: still one refresh statement
        store.batch([GetOp(NS, k) for k in keys])
    assert sum("SET m.expires_at" in c for c in gets) == 1


def test_refresh_leaves_items_without_ttl_and_updated_at_alone(memory: NeuSymMemory) -> None:
    store = NeuSymStore(memory, ttl={"refresh_on_read": True})
    store.put(NS, "forever", {"text": "no expiry"})
    stamp = store.get(NS, "forever").updated_at  # type: ignore[union-attr]
    assert _expiry(memory, "forever") is None
    store.put(NS, "ttl", {"text": "with expiry"}, ttl=10)
    ttl_stamp = store.get(NS, "ttl").updated_at  # type: ignore[union-attr]
    store.get(NS, "ttl")
    assert _expiry(memory, "forever") is None
    assert store.get(NS, "forever").updated_at == stamp  # type: ignore[union-attr]
    assert store.get(NS, "ttl").updated_at == ttl_stamp, "a read is not an edit"  # type: ignore[union-attr]


def test_sweep_ttl_deletes_exactly_the_expired_items(memory: NeuSymMemory) -> None:
    store = NeuSymStore(memory, ttl={"default_ttl": 60.0})
    store.put(NS, "gone", {"text": "short lived"}, ttl=0.005)  # 0.3 s
    store.put(NS, "stays", {"text": "long lived"})
    store.put(NS, "forever", {"text": "no expiry"}, ttl=None)
    store.put(("bob", "tmp"), "gone", {"text": "bob's short note"}, ttl=0.005)
    memory.add("Ana's own reminder with a TTL", user_id="ana", ttl=0.3)  # not a store item: never swept
    time.sleep(0.6)
    assert store.get(NS, "gone") is None  # expired: already invisible
    assert store.sweep_ttl() == 2  # ana's and bob's
    assert store.sweep_ttl() == 0
    assert {i.key for i in store.search(NS)} == {"stays", "forever"}
    left = memory.query(user_id="ana", include_expired=True, statuses=["active"])
    assert any(r.content == "Ana's own reminder with a TTL" for r in left)
    assert not any(r.content == "short lived" for r in left)
    bound = NeuSymStore(memory, user_id="carla", ttl={"default_ttl": 60.0})
    bound.put(("x",), "gone", {"text": "carla's short note"}, ttl=0.005)
    store.put(NS, "gone2", {"text": "short lived again"}, ttl=0.005)
    time.sleep(0.6)
    assert bound.sweep_ttl() == 1, "a store bound to a tenant sweeps that tenant only"
    assert store.sweep_ttl() == 1


def test_the_sweeper_thread(memory: NeuSymMemory) -> None:
    idle = NeuSymStore(memory)
    assert idle.start_ttl_sweeper().done(), "no ttl config: nothing to sweep, as LangGraph's SQL stores"
    store = NeuSymStore(memory, ttl={"default_ttl": 60.0, "sweep_interval_minutes": 1})
    store.put(NS, "gone", {"text": "short lived"}, ttl=0.002)
    future = store.start_ttl_sweeper(sweep_interval_minutes=0.002)  # every 0.12 s
    assert not future.done()
    deadline = time.monotonic() + 60
    while memory.query(user_id="ana", include_expired=True) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert memory.query(user_id="ana", include_expired=True) == [], "the sweeper deleted the expired item"
    assert store.stop_ttl_sweeper(timeout=30)
    assert future.done() and future.exception() is None
    assert store.stop_ttl_sweeper()  # idempotent


@pytest.mark.parametrize("cancel", [True])
def test_cancelling_the_future_stops_the_sweeper(memory: NeuSymMemory, cancel: bool) -> None:
    store = NeuSymStore(memory, ttl={"default_ttl": 1.0})
    future = store.start_ttl_sweeper(sweep_interval_minutes=60)
    assert future.cancel() is cancel
    assert store.stop_ttl_sweeper(timeout=30)
