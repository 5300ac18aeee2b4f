"""``refresh_expiry`` and ``query(include_expired=True)`` on both backends (issue 30 item 4: the LangGraph store's
read refresh and TTL sweep stand on them): only memories of the scope that have an expiry move, in one statement,
without a new write sequence number or audit entry; expired memories are listed only when asked for."""

from __future__ import annotations

import time

from neusym import NeuSymMemory


def test_refresh_expiry_moves_only_scoped_memories_with_a_ttl(memory: NeuSymMemory) -> None:
    ttl = memory.add("Ana's parking ticket is valid today", user_id="ana", infer=False, ttl=600)[0]
    plain = memory.add("Ana likes tea", user_id="ana", infer=False)[0]
    other = memory.add("Bob's parking ticket is valid today", user_id="bob", infer=False, ttl=600)[0]
    audits = len(memory.audit_log(user_id="ana", limit=1000))
    seq = memory.get(ttl.id, user_id="ana").seq
    later = time.time() + 7200
    moved = memory.refresh_expiry({ttl.id: later, plain.id: later, other.id: later, "missing": later},
                                  user_id="ana")
    assert moved == 1
    now = memory.get(ttl.id, user_id="ana")
    assert now.expires_at is not None and abs(now.expires_at.timestamp() - later) < 1e-3
    assert now.seq == seq, "the derived indexes hold no expiry: no new write sequence"
    assert memory.get(plain.id, user_id="ana").expires_at is None
    assert memory.get(other.id, user_id="bob").expires_at.timestamp() < later - 3600  # type: ignore[union-attr]
    assert len(memory.audit_log(user_id="ana", limit=1000)) == audits


def test_query_lists_expired_memories_only_when_asked(memory: NeuSymMemory) -> None:
    gone = memory.add("A note that expires at once", user_id="ana", infer=False, ttl=0.2)[0]
    time.sleep(0.5)
    assert gone.id not in {r.id for r in memory.query(user_id="ana")}
    assert gone.id in {r.id for r in memory.query(user_id="ana", include_expired=True)}
