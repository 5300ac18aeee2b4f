"""From a natural-language attribute ("where do I live", "who is my manager", "wo wohne ich") to a predicate name.

``fact_history`` and ``facts_at`` read the extracted facts by predicate. Callers should not have to know the
internal names, so an attribute given in words is mapped to one:

1. a predicate name as such (``lives_in``, ``works_for`` -> ``works_at``, ``favorite color`` -> ``favourite_colour``)
   is taken as it is (canonicalised by the extraction vocabulary);
2. with an embedder, the question is compared with the predicates' descriptions (:data:`DESCRIPTIONS`, in English,
   German, Spanish and French) and the closest one wins when it is close enough (:data:`MIN_SIMILARITY`);
3. without one (or when nothing is close), a lexicon of lemmas (:data:`LEXICON`) decides;
4. otherwise the text is passed on unchanged (a predicate of the open ``<verb>`` family, or nothing matches).

The predicates a caller will meet most (one current value each unless said otherwise): ``lives_in`` (home town,
city, address), ``works_at`` (employer), ``job_title`` (occupation or role), ``reports_to`` (manager or boss),
``married_to`` / ``partner_of`` (spouse / unmarried partner), ``studies_at`` (school or university), ``phone``,
``email``, ``name``, ``age``, ``birthday``, ``born_in``, ``nationality``, ``diet``, ``favourite_<thing>``
(``favourite_colour``, ``favourite_food`` ...), ``prefers``; multi-valued: ``has_pet``, ``likes``, ``dislikes``,
``plays``, ``speaks``, ``allergic_to``, ``avoids``, ``member_of``, ``friend_of``, ``sibling_of``, ``parent_of``,
``child_of``, ``uses``, ``owns``. The full list with meanings is
:data:`neusym.extraction.vocabulary.PREDICATES`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from neusym.extraction.vocabulary import PREDICATES, canonical_predicate
from neusym.governance.update_lexicon import words
from neusym.language import regex as rx

__all__ = ["DESCRIPTIONS", "LEXICON", "MIN_SIMILARITY", "AttributeResolver"]

DESCRIPTIONS: dict[str, tuple[str, ...]] = {
    "lives_in": ("where I live, my home, my address, the city I live in", "wo ich wohne, meine Adresse",
                 "dónde vivo, mi dirección", "où j'habite, mon adresse"),
    "works_at": ("where I work, my employer, the company I work for", "wo ich arbeite, mein Arbeitgeber",
                 "dónde trabajo, mi empresa", "où je travaille, mon employeur"),
    "job_title": ("my job title, my occupation, my role at work", "mein Beruf, meine Stelle", "mi profesión, mi "
                  "puesto", "mon métier, mon poste"),
    "reports_to": ("who my manager or boss is", "wer mein Chef ist", "quién es mi jefe", "qui est mon chef"),
    "married_to": ("who my husband or wife is", "wer mein Mann oder meine Frau ist", "quién es mi marido o mi esposa",
                   "qui est mon mari ou ma femme"),
    "partner_of": ("who my partner, girlfriend or boyfriend is", "wer mein Partner ist", "quién es mi pareja",
                   "qui est mon copain ou ma copine"),
    "studies_at": ("which school or university I go to", "welche Schule oder Uni ich besuche", "a qué colegio o "
                   "universidad voy", "à quelle école ou université je vais"),
    "phone": ("my phone number", "meine Telefonnummer", "mi número de teléfono", "mon numéro de téléphone"),
    "email": ("my email address", "meine E-Mail-Adresse", "mi correo electrónico", "mon adresse e-mail"),
    "name": ("what my name is, what I am called", "wie ich heiße", "cómo me llamo", "comment je m'appelle"),
    "age": ("how old I am", "wie alt ich bin", "cuántos años tengo", "quel âge j'ai"),
    "birthday": ("when my birthday is", "wann ich Geburtstag habe", "cuándo es mi cumpleaños",
                 "quand est mon anniversaire"),
    "diet": ("what diet I follow, vegetarian or vegan", "wie ich mich ernähre", "qué dieta sigo",
             "quel régime je suis"),
    "has_pet": ("what pets I have, my dog or cat", "welche Haustiere ich habe", "qué mascotas tengo",
                "quels animaux j'ai"),
    "likes": ("what I like or enjoy", "was ich mag", "lo que me gusta", "ce que j'aime"),
    "dislikes": ("what I dislike or hate", "was ich nicht mag", "lo que no me gusta", "ce que je n'aime pas"),
    "plays": ("which sport, game or instrument I play", "was ich spiele", "a qué juego, qué instrumento toco",
              "à quoi je joue, de quel instrument je joue"),
    "speaks": ("which languages I speak", "welche Sprachen ich spreche", "qué idiomas hablo",
               "quelles langues je parle"),
    "allergic_to": ("what I am allergic to", "wogegen ich allergisch bin", "a qué soy alérgico",
                    "à quoi je suis allergique"),
}
"""What each predicate answers, as a question would put it (the closest one to a question wins)."""

LEXICON: tuple[tuple[str, str], ...] = (
    ("favourite|favorite|lieblings*|favorit*|préféré*|prefere*", "favourite_"),
    ("manager|boss|supervisor|report*|chef|chefin|vorgesetzt*|jefe|jefa|responsable|patron*", "reports_to"),
    ("live*|living|home|address|wohn*|adresse|viv*|dirección|habit*", "lives_in"),
    ("job|title|occupation|profession|position|role|beruf|stelle|puesto|profesión|métier|poste", "job_title"),
    ("work*|employer|company|arbeit*|firma|trabaj*|empresa|travaill*|employeur|entreprise", "works_at"),
    ("husband|wife|spouse|married|mann|frau|marido|esposa|esposo|mari|femme", "married_to"),
    ("partner|girlfriend|boyfriend|freundin|freund|novia|novio|pareja|copain|copine", "partner_of"),
    ("school|university|college|study*|studies|schule|uni*|colegio|universidad|école|université", "studies_at"),
    ("phone|mobile|number|telefon*|handy*|teléfono|móvil|téléphone|portable", "phone"),
    ("email|e-mail|mail|correo|courriel", "email"),
    ("pet*|dog*|cat*|haustier*|hund*|katze*|mascota*|perro*|gato*|animal*|chien*|chat*", "has_pet"),
    ("diet|vegetarian|vegan|ernähr*|dieta|régime", "diet"),
    ("birthday|geburtstag|cumpleaños|anniversaire", "birthday"),
    ("age|old|alt|años|âge", "age"),
    ("name|called|heiße|heißt|llamo|llama|appelle", "name"),
    ("speak*|language*|sprache*|idioma*|langue*|hablo|parle", "speaks"),
    ("allerg*|alérgic*", "allergic_to"),
    ("play*|spiel*|juego|toco|joue", "plays"),
)
"""Lemma/stem alternatives -> predicate, tried in order (the first that a word of the attribute matches wins)."""

MIN_SIMILARITY = 0.35
"""Cosine a question needs to its closest description for the embedder's answer to be taken."""

_FAV = rx.compile(r"(?:favou?rite|lieblings|favorit[oa]|préférée?)\s*(\w+)", re.IGNORECASE)


def _lexicon(text: str) -> str | None:
    toks = words(text)
    for alts, pred in LEXICON:
        for alt in alts.split("|"):
            hit = next((w for w in toks if (w.startswith(alt[:-1]) if alt.endswith("*") else w == alt)), None)
            if hit is None:
                continue
            if pred == "favourite_":
                m = _FAV.search(text)
                noun = m.group(1).casefold() if m else None
                return canonical_predicate(f"favourite_{noun}") if noun and noun.isascii() else None
            return pred
    return None


class AttributeResolver:
    """Maps an attribute in words to a predicate; the descriptions are embedded once per embedder."""

    def __init__(self, embed_documents: Callable[[list[str]], np.ndarray] | None = None,
                 embed_query: Callable[[str], np.ndarray] | None = None) -> None:
        self.embed_documents = embed_documents
        self.embed_query = embed_query
        self._matrix: np.ndarray | None = None
        self._owner: list[str] = []

    def _descriptions(self) -> np.ndarray | None:
        if self._matrix is None and self.embed_documents is not None:
            texts = [d for ds in DESCRIPTIONS.values() for d in ds]
            self._owner = [p for p, ds in DESCRIPTIONS.items() for _ in ds]
            m = np.asarray(self.embed_documents(texts), dtype=np.float32)
            self._matrix = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)
        return self._matrix

    def resolve(self, attribute: str) -> tuple[str, str]:
        """``(predicate, how)``: how it was found (``predicate``, ``similarity 0.62``, ``lexicon``, ``unchanged``)."""
        text = attribute.strip()
        if rx.fullmatch(r"[A-Za-z_]+", text):
            canon = canonical_predicate(text)
            if canon is not None and (canon in PREDICATES or canon.startswith(("favourite_", "<")) or "_" in text):
                return canon, "predicate"
        fav = _lexicon(text)
        if fav is not None and fav.startswith("favourite_"):
            return fav, "lexicon"  # "favourite X" names its family directly
        m = self._descriptions()
        if m is not None and self.embed_query is not None:
            q = np.asarray(self.embed_query(text), dtype=np.float32).reshape(-1)
            q = q / max(float(np.linalg.norm(q)), 1e-9)
            sims = m @ q
            best = int(np.argmax(sims))
            if float(sims[best]) >= MIN_SIMILARITY:
                return self._owner[best], f"similarity {float(sims[best]):.2f}"
        if fav is not None:
            return fav, "lexicon"
        return text, "unchanged"
