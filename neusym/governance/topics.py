"""What a forget request's topic covers: sensitive categories described in words an English embedder can match.

"Forget everything about my health" must reach "I take metformin twice a day", which shares no word with "health"
and sits at cosine ~0.2 from it under MiniLM. A topic that names a *category* (health, money, religion, politics,
relationships, work, home, body, gambling, legal trouble, ...) is therefore expanded into a few short descriptions of
what memories of that category say; the forget preview scores each memory by its best similarity to the topic or
any description. The keys are category words in English, German, Spanish, French and Italian (MiniLM is
English-centric: "Gesundheit" alone matches little, its English descriptions match the memories, whatever
language they are in, somewhat better).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["topic_descriptions"]

_CATEGORIES: dict[str, tuple[str, list[str]]] = {
    "health": (
        "health healthy illness ill sick sickness disease diseases medical medicine medication medications condition "
        "conditions diagnosis treatment doctor doctors therapy mental gesundheit krankheit krank medizinisch "
        "medikamente arzt salud enfermedad medico medica medicamentos sante maladie medecin medicaments salute "
        "malattia medico farmaci",
        ["a medical diagnosis, disease or chronic condition", "taking medication or pills",
         "a visit to a doctor, specialist or hospital", "test results from a medical check-up",
         "an injury, pain or therapy", "a prescription from a doctor"]),
    "appointments": (
        "appointment appointments termin termine cita citas rendez-vous rdv appuntamento",
        ["an appointment with a doctor or dentist", "a clinic visit or test on a date"]),
    "money": (
        "money finances financial finance salary income savings debt debts loan loans bank banking credit "
        "finanzen finanziell gehalt schulden kredit geld dinero finanzas deuda deudas prestamo sueldo ahorro "
        "argent finances dette dettes pret salaire epargne soldi debiti stipendio",
        ["how much money someone earns", "money saved or in the bank", "owing money, debts and loan repayments",
         "credit cards and bank accounts"]),
    "relationship": (
        "relationship partner boyfriend girlfriend husband wife marriage wedding dating beziehung partnerin freund "
        "freundin ehe hochzeit relacion pareja novio novia boda matrimonio relation couple mariage copain copine "
        "fiance relazione fidanzato fidanzata matrimonio",
        ["being in a couple with a partner", "engagement and wedding plans", "dating, love and break-ups"]),
    "religion": (
        "religion religious faith belief beliefs church god glaube religion kirche religiös religion fe iglesia "
        "religioso foi eglise religieux religione fede chiesa",
        ["belonging to a religion or faith", "religious services, prayer and worship", "religious holidays and "
         "rituals"]),
    "politics": (
        "political politics views vote voting party politik politisch wahl partei politica politico voto partido "
        "politique vote parti",
        ["which political party someone votes for", "opinions about laws, government and politicians",
         "political campaigns and activism"]),
    "weight": (
        "weight body diet gewicht korper abnehmen peso cuerpo dieta poids corps regime",
        ["a person's body weight in kilos or pounds", "losing or gaining body weight", "dieting"]),
    "gambling": (
        "gambling betting bets casino poker glucksspiel wetten apuestas juego jeux paris casino gioco scommesse",
        ["gambling, betting and casino games", "money won or lost gambling", "betting accounts and apps"]),
    "work": (
        "boss manager job work employer colleague chef chefin arbeit job kollege jefe jefa trabajo patron patronne "
        "travail collegue capo lavoro",
        ["a boss or manager at work", "dealings with colleagues at work"]),
    "neighbour": (
        "neighbour neighbours neighbor neighbors nachbar nachbarin nachbarn vecino vecina vecinos voisin voisine "
        "voisins vicino vicini",
        ["the people living next door", "what the neighbours do"]),
    "home": (
        "landlord landlady rent flat apartment tenancy vermieter miete wohnung casero alquiler piso propietario "
        "proprietaire loyer appartement padrone affitto",
        ["the landlord and the rent", "renting a flat: deposit, lease and repairs"]),
    "family_illness": (
        "mother's mum's father's dad's illness mutter vater madre padre mere pere",
        ["a family member's illness or diagnosis", "a relative's doctor, treatment or medication"]),
    "sexuality": (
        "sexuality sexual orientation gay lesbian bisexual sexualitat orientacion sexualite",
        ["being gay, lesbian or bisexual", "coming out"]),
    "legal": (
        "legal lawsuit court police arrest criminal record rechtlich gericht polizei juicio tribunal policia "
        "justice tribunal police avocat",
        ["a court case or lawsuit", "an arrest or criminal record", "a lawyer"]),
}
_KEYWORDS = {w: name for name, (words, _) in _CATEGORIES.items() for w in words.split()}
_WORD = re.compile(r"[\w']+")


def _fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


def topic_descriptions(topic: str) -> list[str]:
    """Short English descriptions of what memories about ``topic`` say, for every category it names."""
    names: list[str] = []
    for word in _WORD.findall(_fold(topic)):
        for key in (word, word.removesuffix("'s"), word.rstrip("s")):
            name = _KEYWORDS.get(key)
            if name is not None and name not in names:
                names.append(name)
                break
    return [d for name in names for d in _CATEGORIES[name][1]]
