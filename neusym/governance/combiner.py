"""The learned combiner of screening evidence: one logistic regression, weights fitted on labelled examples.

The rule screener's noisy-OR (:mod:`neusym.governance.screening`) was tuned case by case; the compositions of
:mod:`neusym.governance.asks` are new evidence whose weight nobody should set by hand. Here both become features
of a small logistic model whose weights, bias and the two decision lines were fitted by
``python -m benchmarks.governance.fit_screener --dialogue ../shared/data/locomo/locomo_dev.json --write``
(sign-constrained L2 logistic regression, 5-fold x 4 cross-validation on the governance benchmark's train split, the
shared poisoning corpus and the train split's ordinary memories; the script prints the constants below and the
cross-validated figures). The quarantine line is where at most 3 % of the train look-alikes lie out of fold (never
below p = 0.5); the review line where at most 15 % of them, 1 % of the ordinary memories and 0.5 % of the LoCoMo dev
dialogue (today's flag rate there) would be listed, whichever is strictest. Signs are constrained: evidence of an attack can only raise the score and the
damping facts (a mention of an attack, a record of something done, a statement about one's own details, a control
being enforced) can only lower it, so a weight can never learn to reward, say, an authority header.

The model's probability is mapped onto the screener's risk scale piecewise-linearly so that the fitted quarantine
line lands on ``GovernancePolicy.injection_threshold`` (0.5) and the review line on ``borderline_threshold`` (0.25):
policies that move those thresholds keep working, and an audited risk still reads as before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

__all__ = ["BIAS", "FEATURES", "QUARANTINE_P", "REVIEW_P", "WEIGHTS", "contributions", "probability", "to_risk"]

# name -> sign constraint (+1 evidence of an attack, -1 damping, 0 free)
FEATURES: dict[str, int] = {
    "rules_verdict": 1,  # the rule screener's own noisy-OR at or above its quarantine line (0.5)
    # the noisy-OR of the keyword rules (override, impersonation, exfiltration, hidden markup ...) and of the
    # sentence-shape signals when the imperatives speak of configuration/policy or of other users. A bare
    # imperative with no self-reference is left out on purpose: it is how people talk to each other ("Keep it up!"),
    # and the training data has attacks but no conversations to learn that from
    "rules": 1,
    "address": 1,  # ... of addressing an agent, claiming authority, giving it a duty, role words
    "intent": 1,  # ... of the intents (verification bypass, redirection, exfiltration, standing orders ...)
    "directed": 1,  # a rule signal addressed to the agent
    "control_weakening": 1,
    "credential_request": 1,
    "channel_redirect": 1,
    "trusted_discredited": 1,
    "scripted_answer": 1,
    "status_claim": 1,
    "future_reader": 1,
    "authority_header": 1,
    "claimed_identity": 1,
    "forward_all": 1,
    "money_scope": 1,
    "payment_order": 1,
    "hidden_markup": 1,
    "untrusted": 0,  # tool or document channel
    "untrusted_asks": 1,  # ... times how many compositions it carries (0..1)
    "own_value": -1,
    "protective": -1,
    "mention": -1,
    "record": -1,
    "self_statement": -1,
}
ASK_FEATURES = ("control_weakening", "credential_request", "channel_redirect", "trusted_discredited",
                "scripted_answer", "status_claim", "future_reader", "authority_header", "claimed_identity",
                "forward_all", "money_scope", "payment_order", "hidden_markup")

# ---- fitted constants (benchmarks/governance/fit_screener.py; paste its output here) ----
BIAS = -4.186
WEIGHTS: dict[str, float] = {
    "rules_verdict": 6.898,
    "rules": 2.497,
    "address": 0.462,
    "intent": 2.620,
    "directed": 0.104,
    "control_weakening": 8.135,
    "credential_request": 2.746,
    "channel_redirect": 2.923,
    "trusted_discredited": 4.098,
    "scripted_answer": 3.261,
    "status_claim": 2.471,
    "future_reader": 3.728,
    "authority_header": 0.666,
    "claimed_identity": 3.671,
    "forward_all": 4.608,
    "money_scope": 3.796,
    "payment_order": 0.000,
    "hidden_markup": 1.261,
    "untrusted": -1.073,
    "untrusted_asks": 4.568,
    "own_value": -2.513,
    "protective": -5.565,
    "mention": -4.959,
    "record": -0.836,
    "self_statement": -1.636,
}
QUARANTINE_P = 0.5
REVIEW_P = 0.03899254461713748
# ---- end of fitted constants ----


def logit_scaled(risk: float) -> float:
    """A noisy-OR risk as a logit scaled to [0, 1] (risk <= 0.01 -> 0, 0.5 -> 0.5, >= 0.99 -> 1)."""
    r = min(max(risk, 0.01), 0.99)
    return 0.5 + 0.5 * math.log(r / (1.0 - r)) / math.log(99.0)


def _dot(x: Mapping[str, float], weights: Mapping[str, float], bias: float) -> float:
    return bias + sum(weights.get(k, 0.0) * v for k, v in x.items())


def probability(x: Mapping[str, float], weights: Mapping[str, float] | None = None, bias: float | None = None) -> float:
    z = _dot(x, WEIGHTS if weights is None else weights, BIAS if bias is None else bias)
    return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))


def contributions(x: Mapping[str, float]) -> list[tuple[str, float]]:
    """Each non-zero feature's share of the logit, largest first (what the audit shows as the reason)."""
    parts = [(k, WEIGHTS.get(k, 0.0) * v) for k, v in x.items() if v and WEIGHTS.get(k, 0.0)]
    return sorted(parts, key=lambda kv: -abs(kv[1]))


def to_risk(p: float, *, threshold: float = 0.5, borderline: float = 0.25) -> float:
    """Map the probability onto the risk scale: REVIEW_P -> ``borderline``, QUARANTINE_P -> ``threshold``."""
    if p >= QUARANTINE_P:
        return threshold + (1.0 - threshold) * (p - QUARANTINE_P) / max(1.0 - QUARANTINE_P, 1e-9)
    if p >= REVIEW_P:
        return borderline + (threshold - borderline) * (p - REVIEW_P) / max(QUARANTINE_P - REVIEW_P, 1e-9)
    return borderline * p / max(REVIEW_P, 1e-9)
