"""MemoryRecord <-> flat graph properties.

Graph properties must be scalars or lists of scalars in both dialects, so nested parts (metadata, source, triples)
travel as JSON strings and times as epoch seconds. The embedding travels as base64 float32: exact, a quarter of the
size of a list literal, and identical in every backend.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

import numpy as np

from neusym.errors import InvalidInputError
from neusym.record import (
    MemoryRecord,
    MemoryStatus,
    MemoryType,
    PlanState,
    Scope,
    Source,
    Triple,
    as_epoch,
    from_epoch,
)

__all__ = [
    "MEMORY_FIELDS",
    "decode_embedding",
    "encode_embedding",
    "entity_namespace",
    "entity_uid",
    "props_to_record",
    "record_to_props",
]

_TIME_FIELDS = (
    "created_at", "updated_at", "valid_from", "valid_to", "last_accessed_at", "expires_at", "plan_due",
)

# Everything a record needs, projected explicitly (never whole nodes: the embedding stays in the graph).
MEMORY_FIELDS = (
    "id", "nid", "seq", "content", "content_hash", "type", "status", "plan_state", "plan_due", "version",
    "user_id", "agent_id", "session_id", "created_at", "updated_at", "valid_from", "valid_to",
    "last_accessed_at", "access_count", "importance", "confidence", "strength", "expires_at",
    "tags", "flags", "intent", "entity_names", "triples_json", "metadata_json", "source_origin", "source_session",
    "source_turn", "speaker", "source_ref",
)


def encode_embedding(vector: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_embedding(data: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(data), dtype="<f4").astype(np.float32)


def entity_namespace(scope: Scope) -> str:
    """Entities are per tenant: a shared 'Alice' node across users would let one user's facts reach another
    user's graph expansion (cross-user poisoning through shared neighbourhoods)."""
    return scope.user_id or ""


def entity_uid(namespace: str, key: str) -> str:
    return f"{namespace}\x1f{key}"


def _json(value: Any, what: str) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as err:  # RecursionError: nested thousands of levels deep
        raise InvalidInputError(f"{what} is not JSON-serialisable: {err}") from err


def record_to_props(record: MemoryRecord) -> dict[str, Any]:
    props: dict[str, Any] = {
        "id": record.id,
        "content": record.content,
        "content_hash": record.content_hash,
        "type": record.type.value,
        "status": record.status.value,
        "plan_state": record.plan_state.value if record.plan_state else None,
        "version": record.version,
        "user_id": record.scope.user_id,
        "agent_id": record.scope.agent_id,
        "session_id": record.scope.session_id,
        "access_count": record.access_count,
        "importance": float(record.importance),
        "confidence": float(record.confidence),
        "strength": float(record.strength),
        "tags": list(record.tags),
        "flags": list(record.flags),
        "intent": list(record.intent),
        "entity_names": list(record.entities),
        "triples_json": _json([t.model_dump() for t in record.triples], "triples"),
        "metadata_json": _json(record.metadata, "metadata"),
        "source_origin": record.source.origin,
        "source_session": record.source.session_id,
        "source_turn": record.source.turn,
        "speaker": record.source.speaker,
        "source_ref": record.source.ref,
    }
    for name in _TIME_FIELDS:
        props[name] = as_epoch(getattr(record, name))
    # Graph backends drop null properties anyway; sending them only bloats the statement.
    return {k: v for k, v in props.items() if v is not None}


_EPOCH = datetime.fromtimestamp(0, tz=UTC)


def _num(value: Any, default: float) -> float:
    return float(value) if value is not None else default


def props_to_record(row: dict[str, Any]) -> MemoryRecord:
    """Build a record from a row projected with :data:`MEMORY_FIELDS` (missing keys take defaults)."""
    triples_raw = json.loads(row.get("triples_json") or "[]")
    return MemoryRecord(
        id=row["id"],
        nid=int(row.get("nid") or 0),
        seq=int(row.get("seq") or 0),
        content=row["content"],
        content_hash=row.get("content_hash") or "",
        type=MemoryType(row.get("type") or "observation"),
        status=MemoryStatus(row.get("status") or "active"),
        plan_state=PlanState(row["plan_state"]) if row.get("plan_state") else None,
        version=int(row.get("version") or 1),
        scope=Scope(user_id=row.get("user_id"), agent_id=row.get("agent_id"), session_id=row.get("session_id")),
        created_at=from_epoch(row.get("created_at") or 0.0) or _EPOCH,
        updated_at=from_epoch(row.get("updated_at")),
        valid_from=from_epoch(row.get("valid_from")),
        valid_to=from_epoch(row.get("valid_to")),
        last_accessed_at=from_epoch(row.get("last_accessed_at")),
        access_count=int(row.get("access_count") or 0),
        importance=_num(row.get("importance"), 0.5),
        confidence=_num(row.get("confidence"), 1.0),
        strength=_num(row.get("strength"), 1.0),
        expires_at=from_epoch(row.get("expires_at")),
        plan_due=from_epoch(row.get("plan_due")),
        tags=list(row.get("tags") or []),
        flags=list(row.get("flags") or []),
        intent=list(row.get("intent") or []),
        entities=list(row.get("entity_names") or []),
        triples=[Triple(**t) for t in triples_raw],
        metadata=json.loads(row.get("metadata_json") or "{}"),
        source=Source(
            origin=row.get("source_origin") or "user",
            session_id=row.get("source_session"),
            turn=row.get("source_turn"),
            speaker=row.get("speaker"),
            ref=row.get("source_ref"),
        ),
    )
