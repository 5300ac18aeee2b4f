"""Background reflection: triggers, debounce/cooldown, never blocking the fast path, retries, drain and persist.

Time is an injected clock the tests move by hand; waits are only safety nets (no timed assertions).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import pytest
from reflection_helpers import GatedModel, derived_from

from neusym import NeuSymMemory, Scope
from neusym.extraction import RuleExtractor
from neusym.reflection import ReflectionPolicy, ReflectionScheduler
from neusym.reflection.triggers import ReflectionJob

WAIT = 120.0  # safety net only


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def reflections(mem: NeuSymMemory, user: str) -> list[str]:
    return [r.id for r in mem.store.scope_memories(Scope(user_id=user), exclude_types=())
            if r.type.value == "reflection"]


def test_burst_of_100_writes_triggers_one_background_reflection(memory: NeuSymMemory) -> None:
    clock = Clock()
    sched = memory.enable_auto_reflection(every_n=10, debounce_s=5, cooldown_s=600, clock=clock)
    ids = []
    for i in range(100):
        ids += [r.id for r in memory.add(f"Burst note {i}: sensor {i % 9} read {i * 11} units", user_id="ana",
                                         infer=False)]
        if i % 25 == 0:  # the fast path keeps answering during the burst
            assert memory.search(f"sensor {i % 9} units", user_id="ana", k=3)
    assert len(sched.pending()) == 1  # ten thresholds crossed, one coalesced job
    assert reflections(memory, "ana") == []
    clock.now += 6
    sched.kick()
    assert sched.wait_idle(WAIT)
    refl = reflections(memory, "ana")
    assert len(refl) == 1 and sched.completed == 1
    # it consolidates every memory of the burst that is still current (a later reading of one sensor may have
    # superseded an earlier one: history is not consolidated again)
    current = {r.id for r in memory.get_many(ids, user_id="ana") if r.status.value == "active"}
    assert len(current) >= 90 and derived_from(memory, refl[0]) == current
    # the reflection's own write does not count towards the next every_n threshold
    assert sched._counts.get(("ana", None, None), 0) == 0


def test_add_and_search_answer_while_a_reflection_runs(make_memory: Callable[..., NeuSymMemory]) -> None:
    model = GatedModel()
    mem = make_memory(llm=model, extractor=RuleExtractor())
    clock = Clock()
    sched = mem.enable_auto_reflection(every_n=5, debounce_s=0, clock=clock)
    for i in range(5):
        mem.add(f"Observation {i}: the tide was {i + 2} metres", user_id="ana", infer=False)
    assert model.entered.wait(WAIT)  # the background reflection is now inside the model call
    assert not model.release.is_set()
    added = mem.add("The harbour opens at 7am", user_id="ana", infer=False)
    hits = mem.search("harbour opens", user_id="ana", k=1)
    assert added and hits and hits[0].id == added[0].id  # answered while the model is still blocked
    model.release.set()
    assert sched.wait_idle(WAIT)
    assert len(reflections(mem, "ana")) == 1


def test_failures_are_logged_retried_then_fall_back(make_memory: Callable[..., NeuSymMemory],
                                                    caplog: pytest.LogCaptureFixture) -> None:
    from reflection_helpers import FailingModel

    model = FailingModel()
    mem = make_memory(llm=model, extractor=RuleExtractor())
    clock = Clock()
    sched = mem.enable_auto_reflection(every_n=3, debounce_s=0, max_attempts=2, retry_backoff_s=10, clock=clock)
    with caplog.at_level(logging.WARNING, logger="neusym.reflection.triggers"):
        for i in range(3):
            mem.add(f"Fact {i}: locker {i} holds {i * 2} boxes", user_id="ana", infer=False)
        assert _wait_for(lambda: sched.retries >= 1)
        assert reflections(mem, "ana") == []  # a failed attempt changed nothing
        clock.now += 11  # past the backoff: second attempt fails too, then one extractive run
        sched.kick()
        assert sched.wait_idle(WAIT)
    assert "failed, attempt 1/2" in caplog.text and "failed, attempt 2/2" in caplog.text
    assert model.calls == 6 and len(reflections(mem, "ana")) == 1
    stored = mem.get(reflections(mem, "ana")[0], user_id="ana")
    assert stored.metadata["reflection"]["method"] == "extractive"


def _wait_for(cond: Callable[[], bool], timeout: float = WAIT) -> bool:
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return False


def test_close_drains_pending_work(make_memory: Callable[..., NeuSymMemory]) -> None:
    mem = make_memory()
    mem.enable_auto_reflection(every_n=2, debounce_s=3600, clock=Clock())
    mem.add("Fact one about gardening", user_id="ana", infer=False)
    mem.add("Fact two about gardening", user_id="ana", infer=False)
    assert len(mem.reflection_scheduler.pending()) == 1  # type: ignore[union-attr]
    mem.close()  # drains: runs the job now despite the hour-long debounce
    again = make_memory()
    assert len(reflections(again, "ana")) == 1
    assert not (again.config.index_dir / "reflection-pending.json").exists()


def test_shutdown_without_drain_persists_and_resumes(make_memory: Callable[..., NeuSymMemory]) -> None:
    mem = make_memory(reflection=ReflectionPolicy(every_n=2, debounce_s=3600, drain_on_close=False))
    mem.add("Fact one about sailing", user_id="ana", infer=False)
    mem.add("Fact two about sailing", user_id="ana", infer=False)
    path = mem.config.index_dir / "reflection-pending.json"
    mem.close()
    saved = json.loads(path.read_text())
    assert [j["kind"] for j in saved["jobs"]] == ["every_n"] and saved["jobs"][0]["scope"]["user_id"] == "ana"
    assert reflections(make_memory(), "ana") == []  # nothing ran
    resumed = make_memory(reflection=ReflectionPolicy(debounce_s=0))
    assert not path.exists()
    assert resumed.reflection_scheduler is not None and resumed.reflection_scheduler.wait_idle(WAIT)
    assert len(reflections(resumed, "ana")) == 1


def test_session_end_queues_a_background_job(memory: NeuSymMemory) -> None:
    clock = Clock()
    sched = memory.enable_auto_reflection(every_n=None, clock=clock)
    for text in ("I live in Porto.", "I work at Farfetch.", "My sister Marta visits in May."):
        memory.add([{"role": "user", "content": text, "name": "Ana"}], user_id="ana", session_id="s9")
    assert memory.session_end(user_id="ana", session_id="s9") is None  # returns at once
    assert [j.kind for j in sched.pending()] == ["session_end"]
    sched.run_pending_now()
    assert sched.wait_idle(WAIT)
    refl = memory.get(reflections(memory, "ana")[0], user_id="ana")
    assert refl.scope == Scope(user_id="ana", session_id="s9")


def test_conflict_in_a_retrieval_triggers_a_scoped_reflection(memory: NeuSymMemory) -> None:
    clock = Clock()
    sched = memory.enable_auto_reflection(every_n=None, clock=clock)
    a = memory.add("The meeting with Rui is on Tuesday", user_id="ana", infer=False)[0]
    b = memory.add("The meeting with Rui is on Thursday", user_id="ana", infer=False)[0]
    memory.add("An unrelated note about bread", user_id="bob", infer=False)
    for rec in (a, b):  # what governance does when it cannot arbitrate a contradiction itself
        memory.update(rec.id, user_id="ana", flags=["conflict_pending"])
    memory.search("when is the meeting with Rui", user_id="ana", k=5)
    (job,) = sched.pending()
    assert job.kind == "conflict" and set(job.ids or []) == {a.id, b.id}
    assert job.scope == Scope(user_id="ana") and job.goal == "when is the meeting with Rui"
    sched.run_pending_now()
    assert sched.wait_idle(WAIT)
    (rid,) = reflections(memory, "ana")
    assert derived_from(memory, rid) == {a.id, b.id}
    assert memory.get(rid, user_id="ana").content.startswith("Conflicts:")  # stated first, survives trimming


def test_conflicts_are_grouped_per_tenant() -> None:
    from neusym import MemoryRecord, SearchResult, Triple
    from neusym.reflection.triggers import conflicts_in_results

    def res(user: str, city: str) -> SearchResult:
        rec = MemoryRecord(content=f"I live in {city}", scope=Scope(user_id=user),
                           triples=[Triple(subject="me", predicate="lives_in", object=city)])
        return SearchResult(memory=rec, score=1.0)

    results = [res("a", "Porto"), res("b", "Lima"), res("a", "Lisbon")]
    found = conflicts_in_results(results)
    assert list(found) == ["a"] and set(found["a"]) == {results[0].id, results[2].id}


def test_decay_scan_reflects_old_unreflected_memories(memory: NeuSymMemory) -> None:
    clock = Clock()
    for i in range(4):
        memory.add(f"Old note {i} about the allotment", user_id="ana", infer=False)
    memory.add("Bob's only note", user_id="bob", infer=False)
    sched = memory.enable_auto_reflection(every_n=None, decay_interval_s=60, decay_min_age_s=0,
                                          decay_min_count=3, debounce_s=0, clock=clock)
    clock.now += 61
    sched.kick()
    assert _wait_for(lambda: sched.completed >= 1)
    assert sched.wait_idle(WAIT)
    assert len(reflections(memory, "ana")) == 1 and reflections(memory, "bob") == []


def test_bursts_in_two_tenants_stay_apart(memory: NeuSymMemory) -> None:
    clock = Clock()
    sched = memory.enable_auto_reflection(every_n=5, clock=clock)
    own: dict[str, set[str]] = {"alice": set(), "bob": set()}
    for i in range(10):
        for user in ("alice", "bob"):
            own[user] |= {r.id for r in memory.add(f"{user} note {i}", user_id=user, infer=False)}
    assert sorted(j.scope.user_id or "" for j in sched.pending()) == ["alice", "bob"]
    sched.run_pending_now()
    assert sched.wait_idle(WAIT)
    for user in ("alice", "bob"):
        (rid,) = reflections(memory, user)
        assert derived_from(memory, rid) == own[user]


def test_scheduler_debounce_cooldown_and_max_delay_unit() -> None:
    clock = Clock()
    ran: list[ReflectionJob] = []
    sched = ReflectionScheduler(ran.append, ReflectionPolicy(debounce_s=5, max_delay_s=12, cooldown_s=100),
                                clock=clock)
    sc = Scope(user_id="u")
    job = sched.submit("manual", sc, ids=["a"])
    clock.now += 4
    assert sched.submit("manual", sc, ids=["b"]) is job and job.due == clock.now + 5 and job.ids == ["a", "b"]
    clock.now += 4
    sched.submit("manual", sc)
    assert job.due == job.first + 12 and job.ids is None  # max_delay caps a steady stream; None = "everything"
    sched._execute(sched._pick() or job) if clock.now >= job.due else None
    clock.now = job.due
    picked = sched._pick()
    assert picked is job
    sched._execute(job)
    assert ran == [job]
    nxt = sched.submit("manual", sc)
    assert nxt.due == clock.now + 100  # cooldown after the last run
    with pytest.raises(ValueError):
        sched.submit("manual", Scope())


def test_a_job_stuck_in_the_model_at_shutdown_is_persisted(make_memory: Callable[..., NeuSymMemory]) -> None:
    model = GatedModel()
    mem = make_memory(llm=model, extractor=RuleExtractor(),
                      reflection=ReflectionPolicy(every_n=2, debounce_s=0, drain_timeout_s=0))
    mem.add("Fact one about kites", user_id="ana", infer=False)
    mem.add("Fact two about kites", user_id="ana", infer=False)
    assert model.entered.wait(WAIT)
    path = mem.config.index_dir / "reflection-pending.json"
    mem.close()  # the drain gives up at once; the job inside the model call is kept, not lost
    saved = json.loads(path.read_text())
    assert [j["kind"] for j in saved["jobs"]] == ["every_n"]
    model.release.set()  # the orphaned call now fails against the closed store (logged, never raised)
    resumed = make_memory(reflection=ReflectionPolicy(debounce_s=0))
    assert resumed.reflection_scheduler is not None and resumed.reflection_scheduler.wait_idle(WAIT)
    assert len(reflections(resumed, "ana")) == 1
