"""Contradiction by meaning: a standing constraint (diet, allergy, abstention, fear, "never") against later events.

"I've been vegetarian for ten years" and "the pulled pork sandwich was amazing" share no word and no extracted
triple, yet one breaks the other. A constraint names a *constrained thing* ("fish", "smoke", "heights", "after
8 pm"), and some name a category of things (a vegetarian does not eat meat or fish). Each constraint memory keeps the
vectors of those phrases; a later event whose own vector is close to one of them (cosine, threshold set on the
governance benchmark's train split) is flagged as contradicting it: the event gets the ``contradiction`` flag, a
``CONFLICTS_WITH`` edge links the two, the constraint is marked too, and the decision says why. Nothing is
superseded: a contradiction is not an update, a reviewer (or the LLM arbiter, when enabled) decides.

Events that say they kept the constraint ("alcohol-free", "without", "instead of", "stayed on the ground") and
events of another person than the constraint's subject are not flagged. The constraint lexicon below is the
*shape* of a constraint in a few languages (negated habitual verb, "allergic to", "afraid of", identity words
like vegan or sober), not a list of sentences.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from neusym.governance.decisions import Action, Decision, Flag
from neusym.governance.updates import past_framed
from neusym.record import MemoryRecord, MemoryStatus, Scope, as_epoch
from neusym.symbolic.store import SymbolicStore

__all__ = ["Constraint", "ContradictionFinder", "constraint_of"]

Embed = Callable[[list[str]], np.ndarray]

CATEGORIES: dict[str, tuple[str, ...]] = {
    "vegetarian": ("meat", "fish", "beef pork chicken bacon"),
    "vegetarier": ("Fleisch", "meat"),
    "vegetariano": ("carne", "meat"),
    "vegetariana": ("carne", "meat"),
    "végétarien": ("viande", "meat"),
    "végétarienne": ("viande", "meat"),
    "vegan": ("meat", "fish", "dairy milk cheese", "eggs"),
    "pescatarian": ("meat", "beef pork chicken"),
    "halal": ("pork", "bacon ham", "alcohol"),
    "kosher": ("pork", "shellfish"),
    "sober": ("alcohol", "beer wine", "drugs"),
    "teetotal": ("alcohol", "beer wine"),
    "celiac": ("gluten", "bread wheat"),
    "coeliac": ("gluten", "bread wheat"),
    "celíaca": ("gluten", "pan trigo"),
    "celíaco": ("gluten", "pan trigo"),
    "claustrophobic": ("elevators lifts", "small enclosed spaces"),
    "lactose": ("milk", "dairy cheese cream"),
}
"""Identity words of a constraint and what they exclude (general knowledge, not any memory's wording)."""

_IDENTITY = re.compile(
    r"\b(?:am|i'm|is|are|was|been|be|become|became|went|keep|keeps|stay|soy|estoy|bin|ist|suis|es)\s+"
    r"(?:(?:a|an|strict|fully|completely|mostly|now|still|totally|severely|very)\s+){0,2}"
    r"(" + "|".join(sorted(map(re.escape, CATEGORIES), key=len, reverse=True)) + r")\b(?!-)", re.IGNORECASE)
"""An identity word said of someone ("I'm vegan", "she is a strict vegetarian"), not "a vegan recipe"."""
_WHO = r"(?:\b(?i:i|he|she|we|they)|\b[A-Z][a-z]+)\s+"
_HABIT = (r"(?:eat|drink|smoke|vape|touch|take|own|have|fl[iy]|drive|ride|run|work|go|use|gamble|swim|wear|buy|order|"
          r"travel|shop|cook|watch|play)")
_CLAUSE_END = r"(?=$|[.,;:!?]|\s+(?:but|and\s+(?:i|he|she)|because|since|so|after\s+the|for\s+\w+\s+years))"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("allergy", re.compile(r"\ballerg(?:ic|isch|ique|ico|ica)\s+(?:to|gegen|à|a|al)\s+(?P<x>.+?)" + _CLAUSE_END, re.I)),
    ("allergy", re.compile(r"\b(?P<x>[\w-]+(?:\s+[\w-]+)?)\s+(?:allergy|allergie|intolerance)\b", re.I)),
    ("allergy", re.compile(r"\b(?:intolerant|intolerante)\s+(?:to|a)\s+(?P<x>.+?)" + _CLAUSE_END, re.I)),
    ("fear", re.compile(r"\b(?:afraid|scared|terrified|frightened)\s+of\s+(?P<x>.+?)" + _CLAUSE_END, re.I)),
    ("fear", re.compile(r"\b(?:fear|phobia)\s+of\s+(?P<x>.+?)" + _CLAUSE_END, re.I)),
    ("fear", re.compile(r"\bangst\s+vor\s+(?P<x>.+?)" + _CLAUSE_END, re.I)),
    ("fear", re.compile(r"\b(?:peur|miedo)\s+(?:de|del|des|du)\s+(?P<x>.+?)" + _CLAUSE_END, re.I)),
    ("abstention", re.compile(r"(?:^|[.!;]\s*)(?:[\w']+\s+){0,2}(?:avoid|avoids|avoiding|boycott\w*)\s+(?P<x>.+?)"
                              + _CLAUSE_END, re.I)),
    ("abstention", re.compile(
        _WHO + r"(?:(?i:don't|do\s+not|doesn't|does\s+not|never|no\s+longer|can't|cannot|won't|mustn't))\s+"
        r"(?:(?i:ever)\s+)?(?P<x>(?i:" + _HABIT + r")\w*\b.*?)" + _CLAUSE_END)),
    ("abstention", re.compile(r"\b(?:trinke|esse|rauche|fliege|fahre)\s+(?:keinen|keine|kein|nie|nicht)\s*"
                              r"(?P<x>[\w\s-]*?)" + _CLAUSE_END, re.I)),
    ("abstention", re.compile(r"\bich\s+(?P<x>rauche|trinke|esse|fliege)\s+nicht\b", re.I)),
    ("abstention", re.compile(r"\b(?:no|nunca)\s+(?P<x>(?:bebo|como|fumo|vuelo|tomo|conduzco)\b[\w\s-]*?)" + _CLAUSE_END,
                              re.I)),
    ("abstention", re.compile(r"\bne\s+(?P<x>(?:bois|mange|fume|prends|conduis)\b)\s+(?:pas|jamais|plus)"
                              r"(?P<y>[\w\s'-]*?)" + _CLAUSE_END, re.I)),
)
_TRANSLATE = {"rauche": "smoke cigarette", "trinke": "drink", "esse": "eat", "fliege": "fly plane", "fume": "smoke",
              "bois": "drink", "mange": "eat", "prends": "take", "fumo": "smoke", "bebo": "drink", "como": "eat"}
_KEPT = re.compile(r"\b(?:[\w]+-free|free\s+of|without|instead\s+of|non-alcoholic|alcohol-free|decaf\w*|sin|ohne|"
                   r"sans|stayed\s+(?:on|away|home)|let\s+the\s+\w+|kept\s+\w+\s+\w*\s*(?:away|in\s+another)|"
                   r"avoided|skipped|refused|declined|said\s+no|"
                   r"sparkling\s+water|instead|vegan|plant-based|(?:oat|almond|soy|coconut|rice)\s+milk)\b",
                   re.IGNORECASE)
"""An event that says the constraint was kept: compatible, never flagged."""
_NOT_NAMES = frozenset(["no", "the", "a", "an", "so", "oh", "well", "ich", "je", "yo", "soy", "nous", "wir", "we", "you", "he", "she", "they", "it", "this", "that", "there", "meine", "mein", "mon", "ma", "mi", "nunca"])
_FIRST_PERSON = re.compile(r"^\s*(?:i|i'm|i've|my|we|our|ich|je|j'|yo|soy|mi)\b", re.IGNORECASE)


@dataclass
class Constraint:
    """What a constraint memory rules out: ``targets`` are phrases embedded and compared with later events."""

    kind: str
    targets: list[str]
    subject: str | None = None  # a third person the constraint is about ("My son Leo is allergic ..." -> "leo")


def _subject(text: str) -> str | None:
    if _FIRST_PERSON.match(text):
        names = re.findall(r"\b([A-Z][a-z]+)\s+(?:is|has|never|doesn't|does|can't|won't)\b", text)
        if names:
            return str(names[0]).casefold()
        kin = re.match(r"\s*(?:my|our)\s+([a-z]+)\s+(?:is|has|never|doesn't|does|can't|won't)\b", text, re.I)
        return str(kin.group(1)).casefold() if kin else None
    m = re.match(r"\s*([A-ZÀ-Ý][\w'-]+)", text)
    name = m.group(1).split("'")[0].casefold() if m else None
    return None if name is None or name in _NOT_NAMES else name


def constraint_of(text: str) -> Constraint | None:
    """The constraint a memory states, if any ("I don't eat fish" -> abstention, targets ["eat fish"])."""
    if len(text) > 200 or "?" in text or past_framed(text):
        return None
    targets: list[str] = []
    kind = None
    for ident in _IDENTITY.findall(text):
        cat = CATEGORIES[ident.casefold()]
        targets.extend(cat)
        kind = kind or "diet"
    for k, pat in _PATTERNS:
        for m in pat.finditer(text):
            x = " ".join(g for g in m.groups() if g).strip(" .,'\"")
            x = " ".join(_TRANSLATE.get(w.casefold(), w) for w in x.split())
            if 2 <= len(x) <= 80:
                targets.append(x)
                words = x.split()
                if len(words) > 1 and len(words[-1]) > 2:
                    targets.append(words[-1])  # "eat fish" -> also "fish", "severe shellfish" -> "shellfish"
                kind = kind or k
    if not targets or kind is None:
        return None
    return Constraint(kind, list(dict.fromkeys(targets))[:8], _subject(text))


@dataclass
class _Known:
    memory_id: str
    constraint: Constraint
    vectors: np.ndarray
    speaker: str | None
    at: float


@dataclass
class _Tenant:
    known: list[_Known] = field(default_factory=list)
    loaded_at: float | None = None  # time.monotonic() of the last read from the graph


class ContradictionFinder:
    """Flags events that break a standing constraint of the same tenant, by embedding closeness.

    The graph is the source of truth for which constraints stand: the tenant's stored memories (newest
    ``scan_limit``) are re-read at most every ``refresh_seconds``, so a constraint written, forgotten or superseded
    by another process sharing the graph counts here within that bound (and at once after a restart). Between
    reads, constraints written by this process are added as they are written. Target vectors are kept per memory
    id, so a re-read embeds only constraints it has not seen.
    """

    threshold = 0.36
    scan_limit = 2000
    refresh_seconds = 60.0

    def __init__(self, store: SymbolicStore, embed: Embed | None, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self.store = store
        self.embed = embed
        self._tenants: dict[str, _Tenant] = {}

    def apply(self, decisions: Sequence[Decision], vectors: np.ndarray, scope: Scope) -> None:
        if self.embed is None or not scope.user_id or not self.enabled:
            return
        live = [i for i, d in enumerate(decisions) if d.action in (Action.STORE, Action.STORE_LOW_CONFIDENCE,
                                                                   Action.REVIEW)
                and d.record.status not in (MemoryStatus.QUARANTINED,)]
        if not live:
            return
        tenant = self._tenant(scope)
        unit = np.asarray(vectors, dtype=np.float32)[live]
        unit = unit / np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
        new_known: list[_Known] = []
        for pos, i in enumerate(live):
            d = decisions[i]
            c = constraint_of(d.record.content)
            if c is not None:
                new_known.append(self._know(d.record, c))
                continue
            if (tenant.known and "?" not in d.record.content and not _KEPT.search(d.record.content)
                    and not past_framed(d.record.content)):
                self._check(d, unit[pos], tenant.known)
        tenant.known.extend(k for k in new_known if k is not None)

    def _tenant(self, scope: Scope) -> _Tenant:
        uid = str(scope.user_id)
        t = self._tenants.setdefault(uid, _Tenant())
        now = time.monotonic()
        if t.loaded_at is None or now - t.loaded_at >= self.refresh_seconds:
            t.loaded_at = now
            seen = {k.memory_id: k for k in t.known}
            known: list[_Known] = []
            for r in self.store.scope_memories(Scope(user_id=uid), limit=self.scan_limit, newest_first=True):
                if r.id in seen:
                    known.append(seen[r.id])
                    continue
                c = constraint_of(r.content)
                if c is not None:
                    known.append(self._know(r, c))
            t.known = known
        return t

    def _know(self, rec: MemoryRecord, c: Constraint) -> _Known:
        assert self.embed is not None
        v = np.asarray(self.embed(c.targets), dtype=np.float32)
        v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
        return _Known(rec.id, c, v, rec.source.speaker, as_epoch(rec.valid_from or rec.created_at) or 0.0)

    def _check(self, d: Decision, v: np.ndarray, known: Sequence[_Known]) -> None:
        rec = d.record
        text = rec.content.casefold()
        best: tuple[float, _Known, str] | None = None
        for k in known:
            if k.memory_id == rec.id or k.memory_id in d.contradicts:
                continue
            if k.speaker and rec.source.speaker and k.speaker != rec.source.speaker:
                continue
            if k.constraint.subject and k.constraint.subject not in text:
                continue
            sims = k.vectors @ v
            j = int(np.argmax(sims))
            s = float(sims[j])
            if s >= self.threshold and (best is None or s > best[0]):
                best = (s, k, k.constraint.targets[j])
        if best is None:
            return
        s, k, target = best
        found = self.store.get([k.memory_id], Scope(user_id=rec.scope.user_id))
        if not found or found[0].status.value not in ("active", "pending"):
            return
        old = found[0]
        entry: dict[str, object] = {
            "id": old.id, "rule": f"constraint:{k.constraint.kind}", "similarity": round(s, 3),
            "previous": {"status": old.status.value, "flags": list(old.flags), "valid_to": as_epoch(old.valid_to)}}
        d.contradicts.append(old.id)
        d.add_detail("contradictions", entry)
        d.record = rec.model_copy(update={"flags": list(dict.fromkeys([*rec.flags, Flag.CONTRADICTION.value]))})
        d.note(f"may break a standing {k.constraint.kind} constraint (close to what it rules out, similarity "
               f"{s:.2f}): flagged as a contradiction")
        del target
