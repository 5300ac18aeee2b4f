"""Stage 2 of retrieval and the vector-free symbolic query, as Cypher.

Stage 2 is ONE statement over the stage-1 candidates: it applies scope/status/type/time/entity filters, expands
through the query's entities (direct MENTIONS and one RELATES hop), looks at conversation neighbours (NEXT), and
computes every score component in the database, returning them so each result can explain itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from neusym.symbolic.cypher import RETURN_MEMORY, SCOPE_FILTER

__all__ = ["STAGE2_COMPONENTS", "SymbolicFilters", "filter_clause", "stage2_statement", "symbolic_query_statement"]


def _scope_on(var: str) -> str:
    return SCOPE_FILTER.replace("m.", f"{var}.")


@dataclass
class SymbolicFilters:
    """Filters shared by stage 2 and the symbolic query API. ``None`` means "no constraint"."""

    statuses: list[str] = field(default_factory=lambda: ["active"])
    types: list[str] | None = None
    plan_states: list[str] | None = None
    tags: list[str] | None = None
    entity_uids: list[str] | None = None  # memory must mention one of these
    predicate: str | None = None  # memory must carry a triple with this predicate
    object_uids: list[str] | None = None  # ... whose object is one of these
    valid_at: float | None = None  # point in time: valid_from <= t < valid_to
    time_from: float | None = None  # event time (valid_from, else created_at) range
    time_to: float | None = None
    due_from: float | None = None  # plan due date range (plan_due metadata -> valid_to)
    due_to: float | None = None
    include_expired: bool = False
    min_confidence: float | None = None

    def params(self) -> dict[str, Any]:
        return {
            "statuses": self.statuses,
            "types": self.types,
            "plan_states": self.plan_states,
            "tags": self.tags,
            "f_entity_uids": self.entity_uids,
            "f_predicate": self.predicate,
            "f_object_uids": self.object_uids,
            "f_po_keys": [f"{self.predicate}\x1f{o}" for o in self.object_uids] if self.predicate and self.object_uids
            else None,
            "valid_at": self.valid_at,
            "time_from": self.time_from,
            "time_to": self.time_to,
            "due_from": self.due_from,
            "due_to": self.due_to,
            "include_expired": self.include_expired,
            "min_confidence": self.min_confidence,
        }


def filter_clause(var: str = "m") -> str:
    """Boolean Cypher expression over ``var`` using the parameters of :meth:`SymbolicFilters.params`."""
    v = var
    event = f"coalesce({v}.valid_from, {v}.created_at)"
    return " AND ".join(
        [
            _scope_on(v),
            f"{v}.status IN $statuses",
            f"($types IS NULL OR {v}.type IN $types)",
            f"($plan_states IS NULL OR {v}.plan_state IN $plan_states)",
            f"($tags IS NULL OR any(t IN coalesce({v}.tags, []) WHERE t IN $tags))",
            f"($valid_at IS NULL OR (({v}.valid_from IS NULL OR {v}.valid_from <= $valid_at) "
            f"AND ({v}.valid_to IS NULL OR {v}.valid_to > $valid_at) AND {v}.created_at <= $valid_at + 86400.0))",
            f"($time_from IS NULL OR {event} >= $time_from)",
            f"($time_to IS NULL OR {event} <= $time_to)",
            f"($due_from IS NULL OR {v}.plan_due >= $due_from)",
            f"($due_to IS NULL OR {v}.plan_due <= $due_to)",
            f"($include_expired OR {v}.expires_at IS NULL OR {v}.expires_at > $now)",
            f"($min_confidence IS NULL OR {v}.confidence >= $min_confidence)",
            f"($f_entity_uids IS NULL OR any(u IN coalesce({v}.entity_uids, []) WHERE u IN $f_entity_uids))",
        ]
    )


def _relation_clause(var: str = "m") -> str:
    # Predicate/object constraints read the memory's denormalised fact keys (written with its RELATES edges), so
    # the filter is a list lookup on the node in every dialect rather than a pattern inside WHERE.
    v = var
    return (
        f"($f_predicate IS NULL OR ($f_object_uids IS NULL AND $f_predicate IN coalesce({v}.predicates, [])) "
        f"OR ($f_object_uids IS NOT NULL AND any(x IN coalesce({v}.po_keys, []) WHERE x IN $f_po_keys))) "
        f"AND ($f_object_uids IS NULL OR $f_predicate IS NOT NULL "
        f"OR any(x IN coalesce({v}.object_uids, []) WHERE x IN $f_object_uids))"
    )


_HUB_OK = ("coalesce({e}.mentions, 0) <= $hub_degree "
           "AND toFloat(coalesce({e}.mentions, 0)) <= $hub_fraction * $scope_size + 2.0")

# Columns stage 2 returns besides the memory: the components computed in the database. What stage 1 already knows
# (the fused similarity, raw cosine, BM25 and the ranks) is not sent back; the caller fills it in by nid.
STAGE2_COMPONENTS = ("score", "rec", "ent", "graph", "str", "tw", "nbr", "tmp", "spk", "prd", "matched")


def stage2_statement(by: Literal["id", "nid"] = "id") -> str:
    """The stage-2 statement.

    Parameters: the candidates as parallel lists ``cand_nids``, ``cand_ids`` (memory ids; only with ``by="id"``),
    ``cand_sim`` (fused stage-1 similarity),
    ``cand_dense``, ``cand_lexn`` (null where a channel has no score) and ``cand_sim_by_nid`` (``{str(nid): sim}``,
    for conversation neighbours); ``q_keys``/``q_uids`` (keys and uids of query n-grams; those that exist are the
    query entities; a memory whose speaker's lower-cased name is among the keys gets the speaker component),
    ``hub_degree``, ``hub_fraction``, ``scope_size`` (memories visible in the scope), ``expand_limit``,
    ``hop_limit``, scope ids, filter params, ``now``, ``half_life``, ``w`` (weights map), ``type_weights`` (map),
    ``t_from``/``t_to`` (query time window or null), ``q_preds`` (predicates the query asks about), ``min_score``,
    ``k``. Returns :data:`neusym.symbolic.cypher.RETURN_MEMORY` and :data:`STAGE2_COMPONENTS`, best first.

    Why parallel lists: a candidate's stage-1 scores are read by its position (``$cand_sim[i]``) instead of
    scanning a list of maps per row (``[c IN $cands WHERE c.nid = m.nid]``), and the parameter header is a
    fraction of the size. Why the hub test on the hop's middle entity: a seed related to a hub (the user, a
    city most memories mention) otherwise walks every memory of that hub before the ``hop_limit`` cut, which
    made the hop the most expensive part of the statement at 100k memories; a hub links everything to
    everything and says as little in the middle of a path as it does as a seed. Why ``ORDER BY ... LIMIT`` before
    the memory projection: only the ``k`` returned rows pay for reading ~35 properties. Why ``by="id"`` (the
    default when the caller knows its candidates' ids): FalkorDB's exact lookup on the string index of
    ``Memory.id`` is several times faster than on the numeric ``nid`` (a row whose nid disagrees with its
    candidate's, a stale id, is dropped rather than scored with another memory's numbers).
    """
    if by not in ("id", "nid"):
        raise ValueError(f"by must be 'id' or 'nid', got {by!r}")
    cand_keys = "$cand_ids" if by == "id" else "$cand_nids"
    same_nid = "(i >= size($cand_nids) OR m.nid = $cand_nids[i]) AND " if by == "id" else ""
    scope_x = _scope_on("x")
    scope_y = _scope_on("y")
    return f"""
// Every lookup starts from indexed keys or from the seeds, never from the scope: the cost is bounded by the
// candidate count and the seeds' degree, not by the store size.
OPTIONAL MATCH (qe:Entity) WHERE qe.key IN $q_keys AND qe.uid IN $q_uids
WITH collect(DISTINCT qe) AS qes
WITH qes, [e IN qes WHERE {_HUB_OK.format(e="e")}] AS seeds
UNWIND CASE WHEN size(seeds) = 0 OR $expand_limit = 0 THEN [null] ELSE seeds END AS sx
OPTIONAL MATCH (x:Memory)-[:MENTIONS]->(sx)
  WHERE x.status IN $statuses AND {scope_x}
WITH qes, seeds, collect(DISTINCT x.{by})[..$expand_limit] AS direct
UNWIND CASE WHEN size(seeds) = 0 OR $hop_limit = 0 THEN [null] ELSE seeds END AS sy
OPTIONAL MATCH (y:Memory)-[:MENTIONS]->(mid:Entity)-[:RELATES]-(sy)
  WHERE {_HUB_OK.format(e="mid")} AND y.status IN $statuses AND {scope_y}
WITH qes, direct, collect(DISTINCT y.{by})[..$hop_limit] AS hop
// the query entities' weights, once: an entity that most of the scope mentions (the user, the speaker) says
// little, so each counts 1 - its share of the scope
WITH direct, hop, [e IN qes | e.uid] AS qe_uids, [e IN qes | e.name] AS qe_names,
     [e IN qes | CASE WHEN toFloat(coalesce(e.mentions, 1)) >= $scope_size THEN 0.0
                      ELSE 1.0 - toFloat(coalesce(e.mentions, 1)) / $scope_size END] AS qe_w
WITH direct, hop, qe_uids, qe_names, qe_w, reduce(s = 0.0, wq IN qe_w | s + wq) AS ent_all,
     {cand_keys} + [n IN direct WHERE NOT n IN {cand_keys}]
     + [n IN hop WHERE NOT n IN {cand_keys} AND NOT n IN direct] AS keys
UNWIND range(0, size(keys) - 1) AS i
WITH direct, hop, qe_uids, qe_names, qe_w, ent_all, i, keys[i] AS key
MATCH (m:Memory {{{by}: key}})
WHERE {same_nid}{filter_clause("m")} AND {_relation_clause("m")}
// the memory's entity uids are denormalised on the node: a list test instead of a traversal per candidate
WITH m, i, m.{by} IN direct AS is_direct, m.{by} IN hop AS is_hop, qe_names, qe_w, ent_all,
     [j IN range(0, size(qe_uids) - 1) WHERE qe_uids[j] IN coalesce(m.entity_uids, [])] AS hits,
     [(m)-[:NEXT]-(nb:Memory) WHERE nb.nid IN $cand_nids | $cand_sim_by_nid[toString(nb.nid)]] AS nb_sims,
     CASE WHEN i < size($cand_nids) THEN i ELSE -1 END AS ci
WITH m, [j IN hits | qe_names[j]] AS matched,
     reduce(mx = 0.0, s IN nb_sims | CASE WHEN s > mx THEN s ELSE mx END) AS nbr,
     // speaker: the query names who said it ("what did Caroline paint?") -> that speaker's memories
     CASE WHEN m.speaker IS NOT NULL AND toLower(m.speaker) IN $q_keys THEN 1.0 ELSE 0.0 END AS spk,
     // the query asks about an attribute ("where does she live?") and the memory states that fact (lives_in)
     CASE WHEN size($q_preds) > 0 AND any(p IN coalesce(m.predicates, []) WHERE p IN $q_preds)
          THEN 1.0 ELSE 0.0 END AS prd,
     CASE WHEN ci >= 0 THEN $cand_sim[ci] ELSE 0.0 END AS sim,
     CASE WHEN ci >= 0 THEN coalesce($cand_dense[ci], 0.0) ELSE 0.0 END AS dense,
     CASE WHEN ci >= 0 THEN coalesce($cand_lexn[ci], 0.0) ELSE 0.0 END AS lexn,
     exp(-0.6931471805599453 * CASE WHEN $now > m.created_at THEN $now - m.created_at ELSE 0.0 END
         / $half_life) AS rec,
     CASE WHEN ent_all <= 0.0 THEN 0.0 ELSE reduce(s = 0.0, j IN hits | s + qe_w[j]) / ent_all END AS ent,
     CASE WHEN is_direct THEN 1.0 WHEN is_hop THEN 0.5 ELSE 0.0 END AS graph,
     CASE WHEN coalesce(m.strength, 1.0) > 2.0 THEN 1.0 ELSE coalesce(m.strength, 1.0) / 2.0 END AS str,
     coalesce($type_weights[m.type], 1.0) AS tw,
     CASE WHEN $t_from IS NOT NULL AND coalesce(m.valid_from, m.created_at) >= $t_from
          AND coalesce(m.valid_from, m.created_at) <= $t_to THEN 1.0 ELSE 0.0 END AS tmp
WITH m, matched, nbr, spk, prd, rec, ent, graph, str, tw, tmp,
     ($w.similarity * sim + $w.recency * rec + $w.importance * coalesce(m.importance, 0.5)
      + $w.confidence * coalesce(m.confidence, 1.0) + $w.strength * str + $w.entity * ent
      + $w.graph * graph + $w.neighbour * nbr + $w.temporal * tmp + $w.speaker * spk + $w.predicate * prd
      + $w.dense * dense + $w.lexical * lexn) * tw AS score
WHERE score >= $min_score
WITH m, matched, nbr, spk, prd, rec, ent, graph, str, tw, tmp, score
ORDER BY score DESC, m.seq DESC
LIMIT $k
RETURN {RETURN_MEMORY}, {", ".join(STAGE2_COMPONENTS)}
"""


def symbolic_query_statement(order: str = "recent") -> str:
    """Vector-free query: all filters plus entity/predicate/object constraints, newest (or due-soonest) first."""
    order_by = {
        "recent": "coalesce(m.valid_from, m.created_at) DESC, m.seq DESC",
        "oldest": "coalesce(m.valid_from, m.created_at) ASC, m.seq ASC",
        "due": "m.plan_due ASC, m.seq ASC",
        "importance": "m.importance DESC, m.seq DESC",
    }[order]
    return (
        f"MATCH (m:Memory) WHERE {filter_clause('m')} AND {_relation_clause('m')} "
        f"RETURN {RETURN_MEMORY} ORDER BY {order_by} SKIP $offset LIMIT $limit"
    )
