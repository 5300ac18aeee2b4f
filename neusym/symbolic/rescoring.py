"""Stage 2 of retrieval and the vector-free symbolic query, as Cypher.

Stage 2 is ONE statement over the stage-1 candidates: it applies scope/status/type/time/entity filters, expands
through the query's entities (direct MENTIONS and one RELATES hop), looks at conversation neighbours (NEXT), and
computes every score component in the database, returning them so each result can explain itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from neusym.symbolic.cypher import RETURN_MEMORY, SCOPE_FILTER
from neusym.symbolic.scoring import COMPONENTS

__all__ = ["SymbolicFilters", "filter_clause", "stage2_columns", "stage2_statement", "symbolic_query_statement"]


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
    # ... and written by then, give or take this many seconds: a statement recorded the evening after the fact it
    # describes (a diary, a late import of the day's chat) still counts as known at that point in time
    valid_at_grace: float = 86400.0
    time_from: float | None = None  # event time (valid_from, else created_at) range
    time_to: float | None = None
    due_from: float | None = None  # plan due date range (plan_due metadata -> valid_to)
    due_to: float | None = None
    include_expired: bool = False
    min_confidence: float | None = None
    exclude_flags: list[str] | None = None  # e.g. ["suspicious"]: awaiting review, withheld from default search

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
            "valid_at_grace": float(self.valid_at_grace),
            "time_from": self.time_from,
            "time_to": self.time_to,
            "due_from": self.due_from,
            "due_to": self.due_to,
            "include_expired": self.include_expired,
            "min_confidence": self.min_confidence,
            "exclude_flags": self.exclude_flags,
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
            f"AND ({v}.valid_to IS NULL OR {v}.valid_to > $valid_at) AND {v}.created_at <= $valid_at + $valid_at_grace))",
            f"($time_from IS NULL OR {event} >= $time_from)",
            f"($time_to IS NULL OR {event} <= $time_to)",
            f"($due_from IS NULL OR {v}.plan_due >= $due_from)",
            f"($due_to IS NULL OR {v}.plan_due <= $due_to)",
            f"($include_expired OR {v}.expires_at IS NULL OR {v}.expires_at > $now)",
            f"($min_confidence IS NULL OR {v}.confidence >= $min_confidence)",
            f"($exclude_flags IS NULL OR NOT any(f IN coalesce({v}.flags, []) WHERE f IN $exclude_flags))",
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
           "AND toFloat(coalesce({e}.mentions, 0)) <= $hub_fraction * $scope_size + $hub_slack")

# An entity's specificity in [0, 1]: log(1 + N / mentions) / log(1 + N) over the N memories of the scope; 1 for an
# entity one memory mentions, near 0 for one every memory mentions (an idf, scaled so weights stay comparable).
_SPECIFICITY = ("log(1.0 + $scope_size / toFloat(CASE WHEN coalesce({e}.mentions, 1) < 1 THEN 1 "
                "ELSE coalesce({e}.mentions, 1) END)) / log(1.0 + $scope_size)")


def stage2_columns() -> tuple[str, ...]:
    """Columns stage 2 returns besides the memory: ``score``, ``matched`` (names of the query entities the memory
    mentions), ``tw`` (type weight) and one ``c_<name>`` per registered score component."""
    return ("score", "matched", "tw", *(c.column for c in COMPONENTS))


def stage2_statement(by: Literal["id", "nid"] = "id") -> str:
    """The stage-2 statement, generated from the score-component registry (:mod:`neusym.symbolic.scoring`).

    Parameters: the candidates as parallel lists ``cand_nids``, ``cand_ids`` (memory ids; only with ``by="id"``),
    ``cand_sim`` (fused stage-1 similarity, best first), ``cand_dense``, ``cand_lexn`` (null where a channel has no score), ``cand_distinct``, ``cand_contrast`` (the candidate-pool geometry, :mod:`neusym.retrieval.geometry`) and ``cand_sim_by_nid`` (``{str(nid): sim}``,
    for conversation neighbours); ``q_keys``/``q_uids`` (keys and uids of query n-grams; those that exist are the
    query entities; a memory whose speaker's lower-cased name is among the keys gets the speaker component),
    ``hub_degree``, ``hub_fraction``, ``hub_slack``, ``scope_size`` (memories visible in the scope),
    ``expand_limit``, ``hop_limit``, ``act_src``, ``act_limit``, ``act_support``, ``act_query``, scope ids,
    filter params, ``now``, ``half_life``, ``strength_max``, ``hop_discount``, ``w`` (weights map, one entry per
    component, for memories with a speaker: conversation turns), ``wf`` (the same for memories without one:
    standalone facts), ``type_weights`` (map), ``t_from``/``t_to`` (query time window or null), ``q_preds`` (predicates
    the query asks about), ``min_score``, ``k``. Returns :data:`neusym.symbolic.cypher.RETURN_MEMORY` and
    :func:`stage2_columns`, best first.

    Spreading activation (the ``activation`` component, on when ``act_src`` is not empty): the memories in
    ``act_src`` (keys of stage 1's seeds: either channel's best hits, whether or not they survived the fused cut)
    and the query's specific entities are the sources; each specific (non-hub) entity a source
    mentions collects activation (1 per candidate, ``act_query`` for a query entity) and keeps it only when at
    least ``act_support`` sources share it, weighted by its specificity; the activation flows back to every memory
    that mentions those entities. A memory's activation is the sum over its entities divided by the most activated
    memory's (in [0, 1]); up to ``act_limit`` memories stage 1 did not propose are brought in by it, strongest
    first, newest first among equals (the multi-hop case: evidence that shares what the best hits name but not the
    query's words). The walk is bounded by
    the seeds' entities times ``hub_degree``, never by the store size.

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
    columns = ",\n     ".join(f"{c.cypher} AS {c.column}" for c in COMPONENTS)
    names = ", ".join(c.column for c in COMPONENTS)
    total = "\n      + ".join(f"wv.{c.name} * {c.column}" for c in COMPONENTS)
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
WITH qes, seeds, direct, collect(DISTINCT y.{by})[..$hop_limit] AS hop
// spreading activation: the specific entities the best hits of either channel (and the query) share
UNWIND CASE WHEN size($act_src) = 0 THEN [null] ELSE $act_src END AS si
OPTIONAL MATCH (s:Memory {{{by}: si}})-[:MENTIONS]->(se:Entity)
  WHERE {_HUB_OK.format(e="se")}
WITH qes, seeds, direct, hop, se, count(DISTINCT si) AS sn
WITH qes, seeds, direct, hop, collect(se) AS ce, collect(CASE WHEN se IS NULL THEN null ELSE toFloat(sn) END) AS ca,
     collect(CASE WHEN se IS NULL THEN null ELSE sn END) AS cn
WITH qes, direct, hop, ce, ca, cn, [e IN seeds | e.uid] AS su,
     ce + [e IN seeds WHERE NOT e.uid IN [c IN ce | c.uid]] AS ae
WITH qes, direct, hop, ae,
     [j IN range(0, size(ae) - 1) | (CASE WHEN j < size(ce) THEN cn[j] ELSE 0 END)
                                    + CASE WHEN ae[j].uid IN su THEN 1 ELSE 0 END] AS sup,
     [j IN range(0, size(ae) - 1) | ((CASE WHEN j < size(ce) THEN ca[j] ELSE 0.0 END)
                                     + CASE WHEN ae[j].uid IN su THEN $act_query ELSE 0.0 END)
                                    * {_SPECIFICITY.format(e="ae[j]")}] AS aw0
WITH qes, direct, hop, [j IN range(0, size(ae) - 1) WHERE sup[j] >= $act_support | ae[j]] AS act_e,
     [j IN range(0, size(ae) - 1) WHERE sup[j] >= $act_support | aw0[j]] AS act_w
UNWIND CASE WHEN size(act_e) = 0 THEN [null] ELSE range(0, size(act_e) - 1) END AS aj
WITH qes, direct, hop, act_e, act_w, aj, act_e[aj] AS ent
OPTIONAL MATCH (ax:Memory)-[:MENTIONS]->(ent)
  WHERE {filter_clause("ax")} AND {_relation_clause("ax")}
WITH qes, direct, hop, act_e, act_w, ax, sum(CASE WHEN ax IS NULL THEN 0.0 ELSE act_w[aj] END) AS axa
ORDER BY axa DESC, ax.seq DESC
// a memory's activation is relative to the most activated memory's; the strongest ones stage 1 did not propose
// join the scored set
WITH qes, direct, hop, [e IN act_e | e.uid] AS act_uids, act_w, max(axa) AS act_max, collect(ax.{by}) AS reached
WITH qes, direct, hop, act_uids, act_w, coalesce(act_max, 0.0) AS act_max,
     [n IN reached WHERE NOT n IN {cand_keys} AND NOT n IN direct AND NOT n IN hop][..$act_limit] AS spread
// the query entities' weights, once: an entity that most of the scope mentions (the user, the speaker) says
// little, so each counts 1 - its share of the scope
WITH direct, hop, spread, act_uids, act_w, act_max,
     [e IN qes | e.uid] AS qe_uids, [e IN qes | e.name] AS qe_names,
     [e IN qes | CASE WHEN toFloat(coalesce(e.mentions, 1)) >= $scope_size THEN 0.0
                      ELSE 1.0 - toFloat(coalesce(e.mentions, 1)) / $scope_size END] AS qe_w
WITH direct, hop, act_uids, act_w, act_max, qe_uids, qe_names, qe_w,
     reduce(s = 0.0, wq IN qe_w | s + wq) AS ent_all,
     {cand_keys} + [n IN direct WHERE NOT n IN {cand_keys}]
     + [n IN hop WHERE NOT n IN {cand_keys} AND NOT n IN direct] + spread AS keys
UNWIND range(0, size(keys) - 1) AS i
WITH direct, hop, act_uids, act_w, act_max, qe_uids, qe_names, qe_w, ent_all, i, keys[i] AS key
MATCH (m:Memory {{{by}: key}})
WHERE {same_nid}{filter_clause("m")} AND {_relation_clause("m")}
// the memory's entity uids are denormalised on the node: list tests instead of a traversal per candidate
WITH m, i, m.{by} IN direct AS is_direct, m.{by} IN hop AS is_hop, qe_names, qe_w, ent_all,
     [j IN range(0, size(qe_uids) - 1) WHERE qe_uids[j] IN coalesce(m.entity_uids, [])] AS hits,
     [(m)-[:NEXT]-(nb:Memory) WHERE nb.nid IN $cand_nids | $cand_sim_by_nid[toString(nb.nid)]] AS nb_sims,
     CASE WHEN act_max <= 0.0 THEN 0.0 ELSE reduce(s = 0.0, j IN range(0, size(act_uids) - 1) |
          s + CASE WHEN act_uids[j] IN coalesce(m.entity_uids, []) THEN act_w[j] ELSE 0.0 END) / act_max END AS act0,
     CASE WHEN i < size($cand_nids) THEN i ELSE -1 END AS ci
WITH m, [j IN hits | qe_names[j]] AS matched, coalesce($type_weights[m.type], 1.0) AS tw,
     {columns}
// a conversation turn (it has a speaker) is scored with $w, a standalone fact with $wf
WITH m, matched, tw, {names}, CASE WHEN m.speaker IS NULL THEN $wf ELSE $w END AS wv
WITH m, matched, tw, {names},
     ({total}) * tw AS score
WHERE score >= $min_score
WITH m, matched, tw, {names}, score
ORDER BY score DESC, m.seq DESC
LIMIT $k
RETURN {RETURN_MEMORY}, {", ".join(stage2_columns())}
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
