"""LoCoMo as two memory stores, and the recall metric that is fair to both.

Two ways an agent can keep the same conversations:

- ``turns``: every dialog turn is one memory (``"Speaker: text"`` plus ``[image: caption]``), as a chat log keeps it.
- ``observations``: every LoCoMo ``observation`` sentence is one memory ("Caroline attended an LGBTQ support group
  recently ..."), as a fact-extracting agent (mem0-style) keeps it. Each observation cites the dia_id(s) it was
  written from.

Relevance is defined on the question's evidence dia_ids, for both stores:

- A memory *covers* the dia_ids it stands for: a turn covers its own dia_id; an observation covers the dia_ids it
  cites.
- A question's *evidence units* are its evidence dia_ids that some memory of the store covers. Evidence no memory
  covers cannot be retrieved in that store shape (for observations, 864 of the 1,106 evidence ids of categories 1-4
  on the dev half are cited by an observation); it is dropped from the denominator and counted in the report
  (``evidence_covered``), and a question none of whose evidence is covered is left out of that store's figures.
  The strict variant (``*_all`` in the reports) keeps every evidence id in the denominator, so evidence the
  store shape lost counts as a miss; for turns both are the same.
- ``R@k`` = |evidence units covered by the top-k memories| / |evidence units|, averaged over questions. For turns
  this is exactly the usual LoCoMo evidence recall. For observations, one retrieved observation citing a dia_id
  recovers that dia_id; which of several observations citing it is retrieved does not matter.
- ``NDCG@10``: a ranked memory gains 1 when it covers at least one evidence unit no higher-ranked memory covered
  (binary relevance, duplicates gain nothing); the ideal ranking covers one new unit per rank, so the ideal DCG sums
  ``min(|units|, 10)`` ranks (capped at 1.0 in the rare case one observation covers two units).
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "CATEGORIES",
    "KS",
    "STORES",
    "Conversation",
    "Doc",
    "Question",
    "aggregate",
    "load_locomo",
    "parse_when",
    "score",
]

KS = (1, 5, 10, 25, 50)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
STORES = ("turns", "observations")
Store = Literal["turns", "observations"]
_EVIDENCE = re.compile(r"D\d+:\d+")
_SESSION = re.compile(r"session_(\d+)$")
_OBS_SESSION = re.compile(r"session_(\d+)_observation$")


@dataclass
class Doc:
    """One memory of a store. ``key`` is unique within its conversation and is what the systems return."""

    conv: str
    key: str
    text: str  # what is stored (a turn without its speaker prefix; an observation as written)
    refs: tuple[str, ...]  # the dia_ids this memory covers
    session: int
    when: datetime
    speaker: str | None = None  # turns only: NeuSym gets it as ``speaker=``; observations are standalone facts

    @property
    def content(self) -> str:
        """The string every baseline indexes (what NeuSym stores as content: ``"Speaker: text"`` for turns)."""
        return f"{self.speaker}: {self.text}" if self.speaker else self.text


@dataclass
class Question:
    conv: str
    question: str
    answer: str
    category: int
    evidence: list[str]


@dataclass
class Conversation:
    sample_id: str
    turns: list[Doc] = field(default_factory=list)
    observations: list[Doc] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    def docs(self, store: str) -> list[Doc]:
        if store == "turns":
            return self.turns
        if store == "observations":
            return self.observations
        raise ValueError(f"unknown store {store!r} (turns | observations)")

    def covered(self, store: str) -> set[str]:
        return {r for d in self.docs(store) for r in d.refs}


def parse_when(text: str) -> datetime:
    """LoCoMo session stamps look like ``1:56 pm on 8 May, 2023``."""
    return datetime.strptime(text.strip().upper().replace("  ", " "), "%I:%M %p ON %d %B, %Y").replace(tzinfo=UTC)


def load_locomo(path: Path, *, limit_convs: int | None = None, limit_questions: int | None = None) -> list[Conversation]:
    data = json.loads(Path(path).read_text())
    convs: list[Conversation] = []
    for rec in data[:limit_convs]:
        sid = str(rec["sample_id"])
        c = Conversation(sid)
        conv = rec["conversation"]
        sessions = sorted((int(m.group(1)), k) for k in conv if (m := _SESSION.match(k)))
        dates: dict[int, datetime] = {}
        for n, key in sessions:
            if not conv.get(key):
                continue
            when = dates[n] = parse_when(conv[f"{key}_date_time"])
            for i, t in enumerate(conv[key]):
                text = str(t.get("text") or "").strip()
                cap = t.get("blip_caption")
                if cap:
                    text = f"{text} [image: {cap}]".strip()
                if not text:
                    continue
                ref = str(t["dia_id"])
                c.turns.append(Doc(sid, ref, text, (ref,), n, when + timedelta(seconds=i), str(t["speaker"])))
        obs = rec.get("observation") or {}
        for key in sorted(obs, key=lambda k: int(m.group(1)) if (m := _OBS_SESSION.match(k)) else 0):
            m = _OBS_SESSION.match(key)
            if not m or int(m.group(1)) not in dates:
                continue
            n = int(m.group(1))
            i = 0
            for _person, items in (obs[key] or {}).items():
                for item in items or []:
                    if not isinstance(item, list | tuple) or not item:
                        continue
                    text = str(item[0]).strip()
                    cited = item[1] if len(item) > 1 else []
                    refs = tuple(dict.fromkeys(_EVIDENCE.findall(json.dumps(cited))))
                    if not text:
                        continue
                    i += 1
                    c.observations.append(Doc(sid, f"O{n}:{i}", text, refs, n, dates[n] + timedelta(seconds=i)))
        for q in rec.get("qa", []):
            ev = list(dict.fromkeys(e for s in q.get("evidence") or [] for e in _EVIDENCE.findall(str(s))))
            if not ev:
                continue
            c.questions.append(Question(sid, str(q["question"]), str(q.get("answer", q.get("adversarial_answer", ""))),
                                        int(q["category"]), ev))
        if limit_questions is not None:
            c.questions = c.questions[:limit_questions]
        convs.append(c)
    return convs


# ---------------------------------------------------------------------------------------------------------- metrics
def score(ranked: Sequence[str], evidence: Sequence[str],
          refs_of: Mapping[str, Sequence[str]] | None = None, *, total: int | None = None) -> dict[str, float]:
    """R@k for :data:`KS` and NDCG@10 of one ranked list of memory keys against evidence units (see the module
    docstring). ``refs_of`` maps a key to the dia_ids it covers; without it a key covers itself (turns).
    ``total``: divide by this many evidence ids instead (the question's whole evidence, including ids no memory
    of the store covers, which count as misses: the strict variant)."""
    ev = set(evidence)
    denom = total if total is not None else len(ev)
    if denom <= 0:
        raise ValueError("a question needs at least one evidence unit")
    seen = list(dict.fromkeys(ranked))
    found: set[str] = set()
    gains: list[float] = []
    new_at: list[int] = []  # size of ``found`` after each rank
    for key in seen[: max(KS)]:
        refs = refs_of.get(key, ()) if refs_of is not None else (key,)
        hit = ev.intersection(refs) - found
        gains.append(1.0 if hit else 0.0)
        found |= hit
        new_at.append(len(found))
    out = {f"R@{k}": (new_at[min(k, len(new_at)) - 1] if new_at else 0) / denom for k in KS}
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:10]))
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(denom, 10)))
    out["NDCG@10"] = min(dcg / idcg, 1.0)
    return out


def aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means (in %) over categories 1-4, per category, and category 5 apart; latency percentiles when rows carry
    ``ms``. Rows whose ``scores`` is None (no evidence the store covers) count only in the strict ``*_all``
    figures, where every evidence id is in the denominator (``scores_all``)."""
    import numpy as np

    def mean(sel: list[dict[str, Any]], key: str = "scores") -> dict[str, float]:
        sel = [r for r in sel if r.get(key) is not None]
        if not sel:
            return {}
        return {m: round(100.0 * statistics.fmean(r[key][m] for r in sel), 2)
                for m in [*(f"R@{k}" for k in KS), "NDCG@10"]} | {"n": len(sel)}

    main = [r for r in rows if r["category"] in (1, 2, 3, 4)]
    out: dict[str, Any] = {
        "overall": mean(main),
        "per_category": {str(c): mean([r for r in rows if r["category"] == c]) for c in (1, 2, 3, 4)},
        "category_5": mean([r for r in rows if r["category"] == 5]),
    }
    if any("scores_all" in r for r in rows):
        out["overall_all"] = mean(main, "scores_all")
        out["per_category_all"] = {str(c): mean([r for r in rows if r["category"] == c], "scores_all")
                                   for c in (1, 2, 3, 4)}
    lat = [r["ms"] for r in rows if "ms" in r]
    if lat:
        out["latency_ms"] = {"p50": round(float(np.percentile(lat, 50)), 2),
                             "p95": round(float(np.percentile(lat, 95)), 2)}
    return out
