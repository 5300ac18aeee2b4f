"""The conversation chain lives in the graph (issue 15 section 3), on BOTH backends.

Consecutive turns of one session are linked ``NEXT`` (stage 2's neighbour signal). The previous turn is found in
the graph by the create statement itself (the session's tail turn carries ``chain_tail``), so the chain is the
same whether the session goes on in this process, after a restart, or in another process sharing the graph.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import test_multiprocess
from test_multiprocess import Worker

from neusym import NeuSymConfig, NeuSymMemory
from neusym.symbolic.executors.base import Executor

U = "tenant-chain"
start_worker = test_multiprocess.start_worker  # the other-process fixture, shared


def _next_edges(ex: Executor) -> list[tuple[str, str]]:
    rows = ex.run("MATCH (a:Memory)-[:NEXT]->(b:Memory) RETURN a.id AS a, b.id AS b", write=False)
    return sorted((str(r["a"]), str(r["b"])) for r in rows)


def _assert_one_chain(ex: Executor, ids: Sequence[str]) -> None:
    """``ids`` are linked a0 -> a1 -> ... in this order by NEXT, with no other NEXT edge touching them."""
    wanted = set(ids)
    edges = [(a, b) for a, b in _next_edges(ex) if a in wanted or b in wanted]
    assert sorted(edges) == sorted(zip(ids, ids[1:], strict=False)), "the session's turns are not one chain"


def _tails(ex: Executor) -> list[str]:
    rows = ex.run("MATCH (m:Memory) WHERE m.chain_tail IS NOT NULL RETURN m.id AS id", write=False)
    return sorted(str(r["id"]) for r in rows)


def _turn(mem: NeuSymMemory, text: str, session: str = "s1", speaker: str = "Ana", user: str = U) -> str:
    return mem.add(text, user_id=user, session_id=session, speaker=speaker, infer=False)[0].id


def test_restart_mid_session_keeps_one_chain(make_memory: Callable[..., NeuSymMemory], executor: Executor) -> None:
    first = make_memory()
    ids = [_turn(first, f"Turn {i}: the parcel number {i} went to the depot.") for i in range(3)]
    ids += [r.id for r in first.add([{"role": "user", "content": "Turn 3: where is the parcel now?"},
                                     {"role": "assistant", "content": "Turn 4: it is at the depot."}],
                                    user_id=U, session_id="s1", infer=False)]
    first.close()
    second = make_memory()  # a new process: nothing in memory about the session
    ids.append(_turn(second, "Turn 5: thanks, I will pick the parcel up tomorrow.", speaker="Bo"))
    ids.append(_turn(second, "Turn 6: the depot closes at six.", speaker="Ana"))
    assert len(set(ids)) == 7
    _assert_one_chain(executor, ids)
    assert _tails(executor) == [ids[-1]]  # one tail per session, the newest turn


def test_two_processes_alternating_turns_form_one_chain(
    make_memory: Callable[..., NeuSymMemory], backend_config: Callable[..., NeuSymConfig],
    start_worker: Callable[[NeuSymConfig], Worker], tmp_path: Path, executor: Executor,
) -> None:
    here = make_memory()
    there = start_worker(backend_config(index_path=tmp_path / "worker_index"))
    ids: list[str] = []
    for i in range(6):
        text = f"Turn {i}: step {i} of the garden plan is about the roses."
        if i % 2 == 0:
            ids.append(_turn(here, text, speaker="Ana"))
        else:
            ids.append(there("turn", text=text, user_id=U, session_id="s1", speaker="Bo")["id"])
    _assert_one_chain(executor, ids)
    assert _tails(executor) == [ids[-1]]


def test_sessions_and_tenants_keep_their_own_chains(make_memory: Callable[..., NeuSymMemory],
                                                     executor: Executor) -> None:
    mem = make_memory()
    a, b, c = [], [], []
    for i in range(3):  # interleaved writes to three conversations
        a.append(_turn(mem, f"A{i}: the red team meets on floor {i}.", session="s1"))
        b.append(_turn(mem, f"B{i}: the blue team meets on floor {i}.", session="s2"))
        c.append(_turn(mem, f"C{i}: the other tenant's team meets on floor {i}.", session="s1", user="tenant-2"))
    for ids in (a, b, c):
        _assert_one_chain(executor, ids)
    assert len(_next_edges(executor)) == 6
    # statements (no speaker, one text) are not conversation turns: never chained
    mem.add("The office wifi password is on the fridge.", user_id=U, session_id="s1", infer=False)
    assert len(_next_edges(executor)) == 6


def test_batch_add_within_one_session_chains_in_order(make_memory: Callable[..., NeuSymMemory],
                                                      executor: Executor) -> None:
    mem = make_memory(config_overrides={"max_batch": 3})  # 8 turns: three create statements, chained across
    before = _turn(mem, "Turn 0: we are planning the trip to Lisbon.")
    items = [{"content": f"Turn {i}: day {i} of the Lisbon trip is for museum number {i}.",
              "speaker": "Ana" if i % 2 else "Bo"} for i in range(1, 9)]
    got = mem.add_batch(items, user_id=U, session_id="s1", infer=False)
    assert len(got) == 8 and all(f"Turn {i}:" in r.content for i, r in enumerate(got, start=1))
    _assert_one_chain(executor, [before, *[r.id for r in got]])
    # plain statements in a batch stay unchained
    mem.add_batch(["The museum pass costs 20 euros.", "The tram is line 28."], user_id=U, session_id="s1",
                  infer=False)
    assert len(_next_edges(executor)) == 8


def test_deleted_tail_starts_a_new_chain(make_memory: Callable[..., NeuSymMemory], executor: Executor) -> None:
    mem = make_memory()
    first = [_turn(mem, f"Turn {i}: the boiler makes noise number {i}.") for i in range(2)]
    assert mem.delete(first[-1], user_id=U) == 1
    after = [_turn(mem, f"Turn {i}: the plumber comes on day {i}.") for i in range(2, 4)]
    _assert_one_chain(executor, after)
    assert _tails(executor) == [after[-1]]
    assert (first[0], after[0]) not in _next_edges(executor)


def test_concurrent_writers_never_fork_the_chain(make_memory: Callable[..., NeuSymMemory],
                                                  executor: Executor) -> None:
    """Two engines (two write locks, as in two processes) adding turns to one session at the same time: the
    create statements serialise on the graph, so the turns form one path, never a fork."""
    mems = [make_memory(), make_memory()]
    ids: list[list[str]] = [[], []]

    def writer(k: int) -> None:
        for i in range(8):
            ids[k].append(_turn(mems[k], f"Writer {k} turn {i}: the shelf {i} holds box {k}.", speaker=f"W{k}"))

    threads = [threading.Thread(target=writer, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = set(ids[0]) | set(ids[1])
    edges = _next_edges(executor)
    succ = dict(edges)
    assert len(succ) == len(edges) == len(every) - 1  # one out-edge per turn but the last: no fork
    assert len({b for _, b in edges}) == len(edges)  # one in-edge per turn but the first: no merge
    heads = every - {b for _, b in edges}
    assert len(heads) == 1
    walk = [heads.pop()]
    while walk[-1] in succ:
        walk.append(succ[walk[-1]])
    assert set(walk) == every and _tails(executor) == [walk[-1]]
    for k in (0, 1):  # each writer's own turns keep their order along the chain
        assert [x for x in walk if x in set(ids[k])] == ids[k]


def test_two_tails_of_one_session_are_merged(make_memory: Callable[..., NeuSymMemory], executor: Executor) -> None:
    """A session with two tail marks (a restore merged into a live session): the next turn continues the newest
    and clears every mark."""
    mem = make_memory()
    a = _turn(mem, "Turn A: the plan for the kitchen.", session="s1")
    b = _turn(mem, "Turn B: the plan for the hall.", session="s9")  # another session's tail, moved onto s1's key
    executor.run("MATCH (m:Memory {id: $b}), (t:Memory {id: $a}) SET m.chain_tail = t.chain_tail", {"a": a, "b": b})
    c = _turn(mem, "Turn C: the plan for the garden.", session="s1")
    assert _next_edges(executor) == [(b, c)]
    assert _tails(executor) == [c]


def test_a_store_chained_by_an_older_version_goes_on_chaining(make_memory: Callable[..., NeuSymMemory],
                                                              executor: Executor) -> None:
    """A graph written when the tail lived in process memory (no ``chain_tail``, no migration marker): the next
    open marks each session's last turn, so the session continues where it was."""
    old = make_memory()
    s1 = [_turn(old, f"Turn {i}: the bike needs part {i}.", session="s1") for i in range(3)]
    s2 = [_turn(old, f"Turn {i}: the car needs part {i}.", session="s2") for i in range(2)]
    old.close()
    executor.run("MATCH (m:Memory) SET m.chain_tail = null")
    executor.run("MATCH (x:NeuSymMeta {key: 'chain_tails'}) DELETE x")
    new = make_memory()
    assert sorted(_tails(executor)) == sorted([s1[-1], s2[-1]])
    s1.append(_turn(new, "Turn 3: the bike is fixed.", session="s1"))
    _assert_one_chain(executor, s1)
    _assert_one_chain(executor, s2)
    assert new.store.mark_chain_tails() == 0  # once per graph
