"""An assistant turn that restates the user's own message of the same call carries the user's trust.

A chat application stores whole exchanges: "Signed the contract with Bosch today." / "Congrats on the new role at
Bosch! I'll remember you've left Siemens." The assistant turn arrives as origin ``agent`` (trust 0.7), so on its own
it is stored at reduced confidence and may not replace a current value: an agent's *inference* should not overwrite
what the user said. But this turn is not an inference from nowhere: it restates what the user just said, in the
same call, and it is often the clearest statement of the update. So an agent turn of a call that also holds a user
turn is admitted with the user's trust when it restates that turn:

* it names the same value-like span (a proper noun, a number, an e-mail: "Bosch", "Lea", "0160 ...") as a user turn
  of the call, or
* its vector is close to a user turn's (cosine >= :data:`RESTATES`).

The record keeps ``origin="agent"`` (provenance is not rewritten); the decision says ``restates_user`` with the
user turn's id and both confidences, and the reason says why. Screening is unchanged: the turn is screened as an
agent turn either way. An agent turn that restates nothing the user said keeps the agent's trust.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from neusym.governance.admission import Admission
from neusym.governance.decisions import Action, Decision
from neusym.governance.policy import GovernancePolicy
from neusym.governance.update_model import value_spans
from neusym.record import MemoryRecord, Scope

__all__ = ["RESTATES", "lift_restatements"]

RESTATES = 0.5
"""Cosine at which an agent turn counts as restating a user turn of the same call without a shared value."""

_STORED = (Action.STORE, Action.STORE_LOW_CONFIDENCE)


def lift_restatements(decisions: list[Decision], candidates: Sequence[MemoryRecord], vectors: np.ndarray,
                      policy: GovernancePolicy, admission: Admission, scope: Scope) -> None:
    """Re-admit, with the user's trust, every agent turn of this call that restates one of its user turns."""
    users = [i for i, c in enumerate(candidates) if c.source.origin in ("user", "system")
             and decisions[i].action in _STORED]
    agents = [i for i, c in enumerate(candidates) if c.source.origin == "agent" and decisions[i].action in _STORED]
    if not users or not agents:
        return
    unit = np.asarray(vectors, dtype=np.float32)
    unit = unit / np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-9)
    lifted: Admission | None = None
    for i in agents:
        spans = value_spans(candidates[i].content)
        best = max(users, key=lambda j: float(unit[i] @ unit[j]))
        shared = [j for j in users if spans & value_spans(candidates[j].content)]
        sim = float(unit[i] @ unit[best])
        if not shared and sim < RESTATES:
            continue
        user = candidates[shared[0] if shared else best]
        if lifted is None:
            trust = dict(policy.source_trust)
            trust["agent"] = policy.trust(user.source.origin)
            lifted = Admission(policy.model_copy(update={"source_trust": trust}), admission.screener)
        before = decisions[i]
        d = lifted.evaluate(candidates[i], scope)
        if d.action not in _STORED:
            continue
        d.details.update(restates_user=user.id, agent_confidence=before.record.confidence,
                         restated_by="shared value" if shared else f"similarity {sim:.2f}")
        d.note("restates the user's message of the same call: admitted with the user's trust")
        decisions[i] = d
