"""The stage-2 score components, in one registry.

Stage 2 scores a memory as ``type_weight * sum(weight[c] * value[c])`` over the components below. Each entry says
how its value is computed in the database (a Cypher expression over the variables the stage-2 statement binds,
see :func:`neusym.symbolic.rescoring.stage2_statement`), its default weight, and which
:class:`~neusym.record.ScoreExplanation` field reports it. The statement's sum, its returned columns, the weights
parameter, :class:`~neusym.retrieval.config.ScoreWeights` and the explanation are all generated from this list, so
adding a component is one entry here plus, if it is new information, the explanation field it reports in.

Variables the expressions may use (bound by the statement for each scored memory ``m``): ``ci`` (the memory's
position among the stage-1 candidates, -1 for a memory only graph expansion brought in), ``is_direct`` /
``is_hop`` (expansion reached it through a query entity / through one RELATES hop), ``hits`` (indexes of the
query entities it mentions), ``qe_w`` / ``ent_all`` (the query entities' specificity weights and their sum),
``nb_sims`` (fused scores of its conversation neighbours among the candidates), ``act0`` (the entity activation
it collects, relative to the most activated memory's; see the statement), and every statement parameter.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["COMPONENTS", "ScoreComponent", "component", "default_fact_weights", "default_weights"]


@dataclass(frozen=True)
class ScoreComponent:
    """One term of the stage-2 score."""

    name: str  # the weight's key (ScoreWeights field, ``$w`` entry) and the returned column ``c_<name>``
    default: float  # default weight of the full recipe (``hybrid_graph``)
    cypher: str  # the value, a Cypher expression (values are in [0, 1] unless said otherwise)
    field: str  # the ScoreExplanation field that repeats the value (``components`` has them all)
    doc: str  # what it rewards, and why
    fact: float | None = None  # default weight for a standalone fact (a memory without a speaker); None: ``default``

    @property
    def column(self) -> str:
        return f"c_{self.name}"


_CAND = "CASE WHEN ci >= 0 THEN {x} ELSE 0.0 END"

COMPONENTS: tuple[ScoreComponent, ...] = (
    ScoreComponent(
        "similarity", 1.0, _CAND.format(x="$cand_sim[ci]"), "similarity",
        "stage 1's fused score (dense cosine and BM25, see pipeline.stage1); 0 for an expansion-only memory"),
    ScoreComponent(
        "recency", 0.05,
        "exp(-0.6931471805599453 * CASE WHEN $now > m.created_at THEN $now - m.created_at ELSE 0.0 END "
        "/ $half_life)", "recency",
        "halves every half_life_days since the memory was written: newer wins a tie"),
    ScoreComponent(
        "importance", 0.0, "coalesce(m.importance, 0.5)", "importance",
        "what extraction/governance judged worth keeping (preferences, instructions > small talk). Off for "
        "conversation turns: with the pool geometry on it no longer helped there (in-sample or cross-validated)",
        fact=0.05),
    ScoreComponent(
        "confidence", 0.0, "coalesce(m.confidence, 1.0)", "confidence",
        "how sure admission was of the statement (hedged, second-hand, low-trust origin score lower). Off for "
        "conversation turns, as importance", fact=0.05),
    ScoreComponent(
        "strength", 0.05,
        "CASE WHEN coalesce(m.strength, 1.0) >= $strength_max THEN 1.0 "
        "ELSE coalesce(m.strength, 1.0) / $strength_max END", "strength",
        "reinforcement (repeated, cited by reflections), saturating at the policy's maximum strength"),
    ScoreComponent(
        "entity", 0.05,
        "CASE WHEN ent_all <= 0.0 THEN 0.0 ELSE reduce(s = 0.0, j IN hits | s + qe_w[j]) / ent_all END",
        "entity_match",
        "share of the query's entities the memory mentions, each weighted by its specificity (1 - the share "
        "of the scope that mentions it: the user, present everywhere, counts for little)", fact=0.0),
    ScoreComponent(
        "graph", 0.0, "CASE WHEN is_direct THEN 1.0 WHEN is_hop THEN $hop_discount ELSE 0.0 END", "graph",
        "reached from a (non-hub) query entity: directly (1), or through one RELATES hop (hop_discount). Off: on "
        "conversation turns it lost R@10 in leave-one-conversation-out cross-validation, and on facts it no "
        "longer helps once the pool geometry is on (benchmarks/RESULTS.md); a component that does not help "
        "stays off"),
    ScoreComponent(
        "activation", 0.0, "act0", "activation",
        "entity-centric spreading activation: the memory shares specific (non-hub) entities with the "
        "query and the best candidates; multi-hop evidence that names what the top hits name"),
    ScoreComponent(
        "neighbour", 0.25,
        "reduce(mx = 0.0, s IN nb_sims | CASE WHEN s > mx THEN s ELSE mx END)", "neighbour",
        "best fused score among the memory's conversation neighbours (NEXT): the reply to a matching question"),
    ScoreComponent(
        "temporal", 0.1,
        "CASE WHEN $t_from IS NOT NULL AND coalesce(m.valid_from, m.created_at) >= $t_from "
        "AND coalesce(m.valid_from, m.created_at) <= $t_to THEN 1.0 ELSE 0.0 END", "temporal",
        "the memory's event time falls in the window a time expression of the query names", fact=0.3),
    ScoreComponent(
        "speaker", 0.2,
        "CASE WHEN m.speaker IS NOT NULL AND toLower(m.speaker) IN $q_keys THEN 1.0 ELSE 0.0 END", "speaker",
        "the query names who said it (\"what did Caroline paint?\")"),
    ScoreComponent(
        "predicate", 0.3,
        "CASE WHEN size($q_preds) > 0 AND any(p IN coalesce(m.predicates, []) WHERE p IN $q_preds) "
        "THEN 1.0 ELSE 0.0 END", "predicate",
        "the query asks for an attribute (\"where does she live?\") and the memory states that fact (lives_in)", fact=0.1),
    ScoreComponent(
        "dense", 0.0, _CAND.format(x="coalesce($cand_dense[ci], 0.0)"), "dense",
        "extra weight on the raw cosine (linear fusion already has it in the similarity)", fact=0.1),
    ScoreComponent(
        "lexical", 0.0, _CAND.format(x="coalesce($cand_lexn[ci], 0.0)"), "lexical_norm",
        "extra weight on BM25 / the query's best BM25 in scope"),
    ScoreComponent(
        "distinct", 0.5, _CAND.format(x="coalesce($cand_distinct[ci], 0.0)"), "distinct",
        "1 - the mean cosine of the candidate to its distinct_k most similar other candidates (hubness "
        "reduction): a generic statement close to many candidates matches many queries and answers few "
        "(neusym.retrieval.geometry)", fact=0.3),
    ScoreComponent(
        "contrast", 0.0, _CAND.format(x="coalesce($cand_contrast[ci], 0.0)"), "contrast",
        "the query-candidate cosine after removing the candidates' centroid from both: what the memory matches "
        "beyond what every candidate shares (the people a whole scope is about; neusym.retrieval.geometry). "
        "Facts only: on conversation turns it did not pay", fact=0.3),
)

_BY_NAME = {c.name: c for c in COMPONENTS}
if len(_BY_NAME) != len(COMPONENTS):
    raise RuntimeError("duplicate score component names")


def component(name: str) -> ScoreComponent:
    return _BY_NAME[name]


def default_weights() -> dict[str, float]:
    return {c.name: c.default for c in COMPONENTS}


def default_fact_weights() -> dict[str, float]:
    """The full recipe's weights for standalone facts (memories without a speaker). Chosen on the LoCoMo dev
    observations (all five conversations, stage-1 settings held at the shipped ones); the cross-validated effect
    of each is in benchmarks/RESULTS.md. Why they differ from the turn weights: query-entity match and graph
    expansion hurt on facts in cross-validation (the query's names are the two people every fact is about), a
    named time window says more about a dated fact than about a turn, and the raw cosine deserves more weight
    when there is no session context to lean on."""
    return {c.name: c.default if c.fact is None else c.fact for c in COMPONENTS}
