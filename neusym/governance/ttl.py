"""How long a memory says it holds: TTLs stated in words, in any position, in several languages.

"I'm at the dentist for 45 minutes", "Next 6 hours: I'm flying", "For 20 min I'll be in a call", "the code is valid
for fifteen minutes", "until Friday I'm covering for Sara", "just for tonight, call me Captain", "bis Freitag bin ich
im Homeoffice", "solo por hoy", "jusqu'à dimanche". The phrase is a *frame* (a span of time from now, or a bound on
the calendar) plus a quantity; where it sits in the sentence does not matter.

What is not a TTL matters as much: a duration that describes a habit ("I run for 30 minutes every morning"), a
property ("the flight takes 11 hours", "my commute is 45 minutes"), or the past ("I lived in Japan for a year") says
nothing about how long the memory stays true. Reminders ("remind me in 3 days") are plans with a due date, not
expiring facts, and are left to the extractor.

Calendar bounds resolve on the server's clock (UTC unless the caller passes an aware ``now``): "until Friday" holds
through the end of Friday, "tomorrow morning" until noon tomorrow, "tonight"/"today" until midnight.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime, timedelta

from neusym.language import regex as rx
from neusym.language.detect import language_of

__all__ = ["stated_ttl", "ttl_of_memory"]

_F = re.IGNORECASE


def _fold(text: str) -> str:
    if text.isascii():
        return text.lower()
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


_NUMBERS = {
    # en
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40,
    "forty-five": 45, "fifty": 50, "sixty": 60, "ninety": 90, "a couple of": 2, "a few": 3, "couple of": 2,
    "half an": 0.5, "half a": 0.5, "a half": 0.5, "half": 0.5,
    # de
    "ein": 1, "eine": 1, "einen": 1, "einer": 1, "zwei": 2, "drei": 3, "vier": 4, "funf": 5, "sechs": 6,
    "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "zwolf": 12, "funfzehn": 15, "zwanzig": 20, "dreissig": 30,
    "vierzig": 40, "funfundvierzig": 45, "eine halbe": 0.5, "einer halben": 0.5, "ein paar": 2,
    # es
    "un": 1, "una": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8,
    "nueve": 9, "diez": 10, "doce": 12, "quince": 15, "veinte": 20, "treinta": 30, "cuarenta": 40,
    "media": 0.5, "un par de": 2,
    # fr
    "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "sept": 7, "huit": 8, "neuf": 9, "dix": 10,
    "douze": 12, "quinze": 15, "vingt": 20, "trente": 30, "quarante": 40, "quarante-cinq": 45, "une demi": 0.5,
    "demi": 0.5,
}
_UNITS = {
    60.0: "minutes minute mins min m minuten minuto minutos",
    1.0: "seconds second secs sec sekunden sekunde segundos segundo secondes seconde",
    3600.0: "hours hour hrs hr h stunden stunde std horas hora heures heure",
    86400.0: "days day tage tagen tag dias dia jours jour journees journee",
    604800.0: "weeks week wks wk wochen woche semanas semana semaines semaine",
    1209600.0: "fortnight fortnights quinzaine",
    2592000.0: "months month monate monaten monat meses mes mois",
    31536000.0: "years year jahre jahren jahr anos ano ans annees annee",
}
_UNIT_OF = {w: secs for secs, words in _UNITS.items() for w in words.split()}
_NUM = (r"(?P<n>\d+(?:[.,]\d+)?|" + "|".join(sorted((re.escape(k).replace(r"\ ", r"\s+") for k in _NUMBERS),
                                                     key=len, reverse=True)) + r")")
_UNIT = r"(?P<u>" + "|".join(sorted(_UNIT_OF, key=len, reverse=True)) + r")"
_QTY = rf"{_NUM}[\s-]*(?:-?\s*)?{_UNIT}\b(?:\s+and\s+a\s+half)?"
_BARE_UNIT = (r"(?P<bu>hour|day|week|fortnight|month|year|minute|stunde|tag|woche|monat|jahr|hora|dia|semana|mes|ano|"
              r"heure|jour|semaine|mois|annee)")

# a span from now: "for (the next) 2 hours", "next 6 hours", "3 days from now", "valid for 15 minutes",
# "für die nächsten 2 Stunden", "durante las próximas 3 horas", "pendant les deux prochaines heures"
_SPAN_LEAD = (r"\b(?:for|over|during|within|in\s+the\s+next|valid\s+for|good\s+for|active\s+for|expires?\s+in|"
              r"fur|noch|wahrend|gultig\s+fur|durante|por|valido\s+por|valida\s+por|pendant|pour|durant|valable|"
              r"valide)\s+(?:the\s+|die\s+|las\s+|los\s+|les\s+)?(?:next\s+|coming\s+|following\s+|nachsten\s+|"
              r"naechsten\s+|kommenden\s+|proximas\s+|proximos\s+|prochaines\s+|prochains\s+)?")
_SPAN = [
    rx.compile(_SPAN_LEAD + _QTY + r"(?:\s+(?:prochaines|prochains|siguientes))?", _F),
    rx.compile(r"(?:^|[\s,;:(])(?:the\s+|die\s+|las\s+|los\s+|les\s+)?(?:next|coming|nachsten|naechsten|"
               r"kommenden|proximas|proximos|prochaines|prochains)\s+" + _QTY, _F),
    rx.compile(r"\b(?:for|during|pendant|pour|durant|les|durante|las|los|die|fur|the)\s+(?:les\s+|las\s+|los\s+|"
               r"die\s+)?" + _NUM + r"\s+(?:prochaines|prochains|proximas|proximos|nachsten|naechsten|kommenden|"
               r"next|siguientes)\s+" + _UNIT + r"\b", _F),
    rx.compile(_QTY + r"\s+(?:from\s+now|lang|ab\s+jetzt|a\s+partir\s+de\s+ahora|a\s+partir\s+de\s+maintenant|"
               r"desde\s+ahora)\b", _F),
    rx.compile(r"\b(?:for|fur|durante|por|pendant|pour)\s+(?:the\s+(?:next|coming|following)\s+|this\s+coming\s+|"
               r"die\s+nachste\s+|la\s+proxima\s+|"
               r"la\s+prochaine\s+|le\s+prochain\s+|an?\s+|eine\s+|einen\s+|un\s+|una\s+|une\s+)" + _BARE_UNIT
               + r"\b", _F),
]

_WEEKDAYS = {
    0: "monday mon montag lunes lundi", 1: "tuesday tue tues dienstag martes mardi",
    2: "wednesday wed mittwoch miercoles mercredi", 3: "thursday thu thurs donnerstag jueves jeudi",
    4: "friday fri freitag viernes vendredi", 5: "saturday sat samstag sonnabend sabado samedi",
    6: "sunday sun sonntag domingo dimanche",
}
_WEEKDAY_OF = {w: d for d, words in _WEEKDAYS.items() for w in words.split()}
_DAY = r"(?P<wd>" + "|".join(sorted(_WEEKDAY_OF, key=len, reverse=True)) + r")"
_UNTIL = (r"(?:until|till|til|untill|through|thru|up\s+to|expires?(?:\s+(?:at|on|by))?|expiring(?:\s+(?:at|on))?|"
          r"caduca|vence|bis(?:\s+(?:zum|zur|am|kommenden|nachsten))?|"
          r"hasta(?:\s+(?:el|la|el\s+proximo|este))?|jusqu'(?:a|au|a\s+la)|jusqu'\s*(?:a|au)|jusque)")
_END = (r"(?:(?:the\s+)?end\s+of\s+next\s+(?P<end_next>week|month)|(?:dem\s+)?ende\s+(?:nachster|nachsten)\s+"
        r"(?P<end_next_de>woche|monats)|(?:el\s+)?fin(?:al)?\s+de\s+(?P<end_es2>mes)|"
        r"(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?(?P<end>day|week|month)|(?:dem\s+)?ende\s+(?:der|des|dieser|"
        r"diesen)\s+(?P<end_de>woche|tages|monats)|(?P<end_de2>wochenende|monatsende)|(?:el\s+)?final\s+de\s+"
        r"(?:la\s+|el\s+|este\s+|esta\s+)?(?P<end_es>semana|dia|mes)|(?:la\s+)?fin\s+(?:de\s+la\s+|du\s+|de\s+)"
        r"(?P<end_fr>semaine|journee|mois|jour))")
_TOMORROW = (r"(?P<dat>the\s+day\s+after\s+tomorrow|ubermorgen|pasado\s+manana|apres-demain|apres\s+demain)|"
             r"(?P<tm>tomorrow|morgen|manana|demain)")
# the weekend: "until the weekend" ends as it starts (Friday night), "through/over the weekend" with it (Sunday)
_WEEKEND = r"(?P<we>weekend|week-end|wochenende|fin\s+de\s+semana)"
_TONIGHT = (r"(?P<tn>tonight|today|this\s+evening|end\s+of\s+(?:the\s+)?day|heute(?:\s+abend)?|heute\s+nacht|"
            r"hoy|esta\s+noche|ce\s+soir|aujourd'hui|cette\s+nuit)")
_BOUND = rx.compile(rf"\b{_UNTIL}\s+(?:the\s+|next\s+|this\s+|coming\s+|ce\s+|le\s+|el\s+|zum\s+)?(?:{_DAY}|"
                    rf"{_TOMORROW}|{_END}|{_TONIGHT}|{_WEEKEND})\b", _F)
# "just for tonight", "only today", "for today only", "this week only", "for the rest of the day/week", "solo por hoy"
_ONLY = rx.compile(
    r"\b(?:(?:just|only)\s+(?:for\s+)?(?P<o1>today|tonight|this\s+evening|this\s+week|this\s+weekend|this\s+month)|"
    r"(?:for\s+)?(?P<o2>today|tonight|this\s+week|this\s+weekend|this\s+month)\s+only|"
    r"for\s+the\s+rest\s+of\s+(?:the\s+|this\s+|today)?(?P<o3>day|week|month|evening|night)?|"
    r"nur\s+(?:fur\s+)?(?P<o4>heute(?:\s+abend)?|diese\s+woche|dieses\s+wochenende|diesen\s+monat)|"
    r"(?:solo|solamente|unicamente|solo\s+por)\s+(?:por\s+|para\s+)?(?P<o5>hoy|esta\s+noche|esta\s+semana|este\s+mes|"
    r"este\s+fin\s+de\s+semana)|(?:(?:por|para)\s+)?(?P<o5b>hoy|esta\s+noche|esta\s+semana|este\s+fin\s+de\s+semana)"
    r"\s+(?:solo|solamente|unicamente|nada\s+mas)|"
    r"(?:over|for|during)\s+(?:the|this)\s+(?P<o7>weekend)|"
    r"for\s+(?P<o8>tonight|today|this\s+evening)|(?:pour|para|fur)\s+(?P<o9>ce\s+soir|aujourd'hui|esta\s+noche|"
    r"heute(?:\s+abend)?)|"
    r"(?:seulement|uniquement|juste)\s+(?:pour\s+)?(?P<o6>aujourd'hui|ce\s+soir|cette\s+semaine|ce\s+mois-ci|"
    r"ce\s+week-end)|(?:pour\s+)?(?P<o6b>aujourd'hui|ce\s+soir|cette\s+semaine)\s+(?:seulement|uniquement))\b", _F)

# what makes a duration not a TTL
_HABIT = rx.compile(
    r"\b(?:every|each|daily|weekly|nightly|usually|normally|typically|often|always|per\s+(?:day|week)|"
    r"(?:once|twice|times|\d+\s*(?:x|h|hours?|minutes?|mins?))\s+a\s+(?:day|week)|each\s+way|jeden|jede|jeder|taglich|immer|normalerweise|meistens|cada|todos\s+los|todas\s+las|"
    r"siempre|normalmente|chaque|tous\s+les|toutes\s+les|toujours|habituellement|d'habitude|most\s+(?:days|"
    r"mornings|evenings|nights|weeks)|(?:on|at)\s+weekends|on\s+weekdays|weekdays|mondays|tuesdays|wednesdays|"
    r"thursdays|fridays|saturdays|sundays|montags|dienstags|mittwochs|donnerstags|freitags|samstags|sonntags|"
    r"a\s+night|a\s+day|por\s+las\s+(?:mananas|noches|tardes)|le\s+(?:lundi|mardi|mercredi|jeudi|vendredi|"
    r"samedi|dimanche)\s+(?:matin|soir))\b", _F)
_PROPERTY = rx.compile(
    r"\b(?:takes?|took|lasts?|lasted|long|duration|is\s+\d+\s*(?:min|minutes|hours)|dauert|dauerte|dura|duro|"
    r"dure|a\s+dure|tarda|tardo|braucht|prend)\b", _F)
_PAST = rx.compile(
    r"\b(?:was|were|had|did|spent|lived|worked|stayed|studied|travel(?:l)?ed|used\s+to|ago|last\s+(?:year|month|"
    r"week|summer|winter)|after\s+(?:university|college|school)|back\s+then|in\s+(?:19|20)\d\d|war|waren|hatte|"
    r"gewohnt|gearbeitet|verbracht|vor\s+\w+\s+(?:jahren|monaten)|letztes\s+jahr|vivi|vivio|estuve|estuvo|trabaje|"
    r"pase|hace\s+\w+\s+anos|el\s+ano\s+pasado|j'ai\s+vecu|j'ai\s+travaille|j'etais|il\s+y\s+a|l'an\s+dernier|"
    r"l'annee\s+derniere)\b", _F)
_PAST_WORDS = rx.compile(
    r"\b(?:yesterday|last\s+night|earlier\s+today|the\s+other\s+day|gestern|vorgestern|ayer|anoche|hier|"
    r"slept|went|ran|sat|stood|drove|flew|swam|spoke|spent|took|left|met|felt|waited|schlief|fuhr|dormi|hablamos|"
    r"j'ai\s+dormi|nous\s+avons)\b", _F)
_PAST_PARTICIPLE = rx.compile(r"\b(\w+\s+)?(\w{3,}ed)\b")
_NOT_PAST = frozenset({"need", "speed", "feed", "seed", "bed", "red", "shed", "proceed", "exceed", "succeed", "breed",
                       "embed", "indeed", "weed", "greed", "deed", "heed", "based", "used", "supposed", "scheduled",
                       "booked", "blocked", "closed", "reserved", "required", "allowed", "expected", "planned",
                       "needed", "parked", "stationed", "assigned", "located", "placed", "signed", "subscribed",
                       "locked", "enabled", "disabled", "muted", "valid"})
_COPULA = frozenset({"am", "is", "are", "be", "been", "being", "i'm", "you're", "we're", "they're", "it's", "get",
                     "got", "'m", "'re", "stay", "remain", "keep"})
_IS_FOR = rx.compile(r"\b(?:is|are|was|were|ist|es|est)\s+(?:only\s+)?(?:for|fur|por|pour)\s+" + _NUM + r"\b", _F)
_LATER = rx.compile(
    r"\b(?:in|im|en|au|de|from|ab|desde|des|starting|next)\s+(?:january|february|march|april|may|june|july|august|"
    r"september|october|november|december|januar|februar|marz|juni|juli|oktober|dezember|enero|febrero|marzo|"
    r"abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|janvier|fevrier|mars|avril|mai|juin|"
    r"juillet|aout|septembre|octobre|novembre|decembre)\b|\bnext\s+(?:week|month|year|summer|winter)\b|"
    r"\b(?:nachste|nachsten|nachstes)\s+(?:woche|monat|jahr)\b|\b(?:la\s+)?(?:semana|mes)\s+que\s+viene\b|"
    r"\b(?:le\s+mois|la\s+semaine|l'annee)\s+prochaine?\b|\bgoing\s+to\s+\w+\s+for\b|\bin\s+\d+\s+(?:days|weeks|months)\b", _F)


def _past_before(folded: str, start: int) -> bool:
    """A regular past tense before the duration in its clause ("we talked for an hour", "Caroline joined a program
    for LGBTQ youth over the weekend"), not a state ("I'm booked for")."""
    window = rx.split(r"[.!?;:]", folded[max(0, start - 80):start])[-1]
    for m in _PAST_PARTICIPLE.finditer(window):
        word = m.group(2)
        before = (m.group(1) or "").strip()
        if word not in _NOT_PAST and before not in _COPULA:
            return True
    return False


_REMINDER = rx.compile(r"\b(?:remind|reminder|erinnere|erinnerung|recuerdame|recordatorio|rappelle-moi|rappel)\b",
                       _F)


def _number(word: str) -> float:
    w = rx.sub(r"\s+", " ", word.strip().lower())
    if w in _NUMBERS:
        return float(_NUMBERS[w])
    return float(w.replace(",", "."))


def _end_of_day(day: datetime) -> datetime:
    return day.replace(hour=23, minute=59, second=0, microsecond=0)


def _calendar(now: datetime, *, weekday: int | None = None, tomorrow: bool = False, end: str | None = None
              ) -> datetime:
    if weekday is not None:
        return _end_of_day(now + timedelta(days=(weekday - now.weekday()) % 7))
    if tomorrow:
        return (now + timedelta(days=1)).replace(hour=12, minute=0, second=0, microsecond=0)
    if end in ("week", "woche", "wochenende", "semana", "semaine"):
        return _end_of_day(now + timedelta(days=6 - now.weekday()))
    if end in ("month", "monats", "monatsende", "mes", "mois"):
        first_next = (now.replace(day=28) + timedelta(days=4)).replace(day=1)
        return _end_of_day(first_next - timedelta(days=1))
    return _end_of_day(now)


def _period(word: str) -> str | None:
    w = word.lower()
    for key, names in (("week", ("week", "woche", "semana", "semaine", "weekend", "wochenende", "fin de semana",
                                 "week-end")),
                       ("month", ("month", "monat", "mes", "mois"))):
        if any(n in w for n in names):
            return key
    return None


_UNTIL_ANY = rx.compile(rf"\b{_UNTIL}\s+(?P<rest>[^,;.!?]{{1,40}})", _F)
_CLOCK_WORDS = {"midnight": (23, 59), "mitternacht": (23, 59), "medianoche": (23, 59), "minuit": (23, 59),
                "noon": (12, 0), "midday": (12, 0), "mittag": (12, 0), "mediodia": (12, 0), "midi": (12, 0),
                "lunchtime": (13, 0), "lunch": (13, 0), "this morning": (12, 0), "this afternoon": (18, 0),
                "close of business": (18, 0), "end of business": (18, 0), "cob": (18, 0), "eod": (18, 0),
                "feierabend": (18, 0), "heute mittag": (13, 0), "heute nachmittag": (18, 0),
                "cet apres-midi": (18, 0), "esta tarde": (20, 0)}
_MONTHS = {1: "january jan januar enero janvier", 2: "february feb februar febrero fevrier",
           3: "march mar marz marzo mars", 4: "april apr abril avril", 5: "may mai mayo",
           6: "june jun juni junio juin", 7: "july jul juli julio juillet", 8: "august aug agosto aout",
           9: "september sep sept septiembre septembre", 10: "october oct oktober octubre octobre",
           11: "november nov noviembre novembre", 12: "december dec dezember diciembre decembre"}
_MONTH_OF = {w: m for m, words in _MONTHS.items() for w in words.split()}
# the day before a holiday is the last one "until" it: (month, day)
_HOLIDAYS = {"christmas": (12, 24), "xmas": (12, 24), "weihnachten": (12, 24), "navidad": (12, 24),
             "noel": (12, 24), "new year": (12, 31), "silvester": (12, 31), "neujahr": (12, 31),
             "ano nuevo": (12, 31), "nochevieja": (12, 31), "nouvel an": (12, 31), "jour de l'an": (12, 31)}
_DAY_MONTH = rx.compile(r"^(?:the\s+|el\s+|le\s+|zum\s+|dem\s+|den\s+|au\s+)?(?P<d>\d{1,2})(?P<ord>st|nd|rd|th|\.|er|o)?"
                        r"(?:\s+(?:of\s+|de\s+)?(?P<m>[a-z]+))?(?![\w:])")
_MONTH_DAY = rx.compile(r"^(?:the\s+)?(?P<m>[a-z]+)\s+(?:the\s+)?(?P<d>\d{1,2})(?:st|nd|rd|th)?(?![\w:])")


def _calendar_day(rest: str, lead: str, now: datetime) -> datetime | None:
    """ "the 15th", "jusqu'au 20", "20 de diciembre", "December 20th", "Christmas": the end of that day (the next one
    to come), for what the date reader leaves out (ordinals without a month, other languages' months, holidays)."""
    for name, (hmonth, hday) in _HOLIDAYS.items():
        if rest.startswith(name) or rest.startswith("the " + name):
            when = now.replace(month=hmonth, day=hday)
            return _end_of_day(when if _end_of_day(when) > now else when.replace(year=now.year + 1))
    m = _MONTH_DAY.match(rest)
    if m is None or m.group("m") not in _MONTH_OF:
        m = _DAY_MONTH.match(rest)
    if m is None:
        return None
    day = int(m.group("d"))
    month = _MONTH_OF.get(m.group("m") or "")
    dated = bool(month or m.groupdict().get("ord") or rx.match(r"(?:the|el|le|zum|dem|den|au)\s", rest)
                 or lead.endswith(("au", "zum", "el")))
    if not dated or not 1 <= day <= 31:
        return None  # "until 5": a time of day, not a date
    for ahead in range(0, 13):
        year, mon = divmod(now.month - 1 + ahead, 12)
        try:
            when = now.replace(year=now.year + year, month=month or mon + 1, day=day)
        except ValueError:
            continue
        if _end_of_day(when) > now:
            return _end_of_day(when)
        if month:
            return _end_of_day(when.replace(year=when.year + 1))
    return None


def _until_date(folded: str, now: datetime) -> datetime | None:
    """ "until 5pm", "until noon", "until March 20", "bis 20. März": a bound the date reader resolves (a day holds
    through its end, a time of day until then, later today or tomorrow)."""
    from neusym.extraction.dates import find_dates

    m = _UNTIL_ANY.search(folded)
    if m is None or _past_before(folded, m.start()):
        return None
    rest = m.group("rest").strip()
    said = rest.removeprefix("the ")
    clock = next((k for k in sorted(_CLOCK_WORDS, key=len, reverse=True)
                  if said == k or said.startswith(k + " ")), None)
    if clock is not None:
        hour, minute = _CLOCK_WORDS[clock]
        at = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
        return at if at > now else at + timedelta(days=1)
    day = _calendar_day(rest, m.group(0)[: m.start("rest") - m.start()].strip(), now)
    if day is not None:
        return day
    dates = find_dates(rest, now, prefer_future=True)
    if not dates:
        return None
    when = dates[0].when
    if dates[0].precision == "day":
        when = _end_of_day(when)
    return when if when > now else None


_ONLY_GROUPS = ("o1", "o2", "o3", "o4", "o5", "o5b", "o6", "o6b", "o7", "o8", "o9")
_EXPLICIT = rx.compile(r"\b(?:next|coming|following|nachsten|naechsten|kommenden|proxim\w*|prochaine?s?|"
                       r"siguientes|rest)\b", _F)


def _bound(m: re.Match[str], now: datetime) -> datetime:
    """The end of a calendar bound matched by ``_BOUND``."""
    if m.group("wd"):
        return _calendar(now, weekday=_WEEKDAY_OF[m.group("wd").lower()])
    if m.group("dat"):
        return (now + timedelta(days=2)).replace(hour=12, minute=0, second=0, microsecond=0)
    if m.group("tm"):
        return _calendar(now, tomorrow=True)
    if m.group("tn"):
        return _calendar(now)
    if m.group("we"):
        # "until the weekend": up to Friday night; "through/over the weekend": to its end
        through = rx.match(r"(?:through|thru)", m.group(0), _F) is not None
        return _calendar(now, weekday=6 if through else 4)
    nxt = m.group("end_next") or m.group("end_next_de")
    if nxt:
        period = _period(nxt) or "week"
        later = now + (timedelta(days=7) if period == "week" else timedelta(days=32 - now.day))
        return _calendar(later, end=period)
    end = next((m.group(g) for g in ("end", "end_de", "end_de2", "end_es", "end_es2", "end_fr") if m.group(g)),
               "day")
    return _calendar(now, end=(_period(end) or "day"))


# a past form in Spanish, French or German ("estudié", "j'ai habité", "nous sommes restés", "ich habe ... gewohnt"):
# read on the text with its accents, which carry the tense
_PAST_FORMS = {
    "es": rx.compile(r"\b(?:\w{2,}[^\Wr]é|\w{2,}(?:ió|aron|ieron|aste|iste)|fui|fue|fueron|estuve|estuvo|tuve|tuvo|"
                     r"hice|hizo)\b(?<!café)(?<!bebé)(?<!josé)(?<!puré)"),
    "fr": rx.compile(r"\b(?:j'ai|tu\s+as|il\s+a|elle\s+a|on\s+a|nous\s+avons|vous\s+avez|ils\s+ont|elles\s+ont)\s+"
                     r"(?:\w+\s+)?\w{2,}(?:é|ée|és|ées|i|is|u|us|it)\b|"
                     r"\b(?:je\s+suis|tu\s+es|il\s+est|elle\s+est|on\s+est|nous\s+sommes|vous\s+êtes|ils\s+sont|"
                     r"elles\s+sont)\s+(?:\w+\s+)?(?:allé|venu|resté|parti|né|arrivé|rentré|sorti|tombé|mort|passé)e?s?\b|"
                     r"\b(?:j'étais|j'habitais|je\s+travaillais|il\s+y\s+a)\b"),
    "de": rx.compile(r"\b(?:habe|hast|hat|haben|habt)\b[^.!?;]*\bge\w{3,}(?:t|en)\b|\b(?:bin|bist|ist|sind|seid)\b"
                     r"[^.!?;]*\b(?:gewesen|geblieben|gegangen|gefahren|geflogen|gekommen|gereist|gezogen)\b|"
                     r"\b(?:wohnte|arbeitete|lebte|studierte|verbrachte|blieb|lernte)\b"),
}


def _past_form(text: str) -> bool:
    """A past tense in the text's own language (a French "occupé" is no Spanish preterite)."""
    pattern = _PAST_FORMS.get(language_of(text))
    return pattern is not None and pattern.search(text.lower()) is not None


# "I've been vegetarian for ten years", "I've known her for 20 years": a duration up to now, not from now
_ONGOING = rx.compile(r"\b(?:'ve|have|has|'s)\s+(?:\w+ly\s+)?(?:been|known|had|\w+ed|\w+en)\b|\b(?:seit|depuis|"
                      r"desde\s+hace|llevo|llevamos)\b", _F)
# "I meditate for 20 minutes before bed": a simple present action of the speaker is a habit; a state ("I'm at the
# dentist for 45 minutes"), a plan ("I'll be offline") or a stay ("I stay at my parents' for a week") is not
_SIMPLE_PRESENT = rx.compile(r"\b(?:i|we|they)\s+(?:\w+ly\s+)?(?P<verb>[a-z]{3,})\b", _F)
_NOT_ACTION = frozenset({"am", "was", "were", "will", "shall", "would", "could", "should", "can", "cannot", "must",
                         "might", "may", "need", "want", "have", "had", "has", "are", "get", "got", "stay", "remain",
                         "keep", "work", "live", "use", "don't", "won't", "can't", "just", "also", "still", "only",
                         "really", "now", "currently", "temporarily", "and", "the", "for", "leave", "hold", "own",
                         "rent", "borrow", "share", "cover", "sit", "sleep", "park", "wait"})


def _ongoing_before(folded: str, start: int) -> bool:
    return _ONGOING.search(folded[max(0, start - 60):start]) is not None


def _habitual_before(folded: str, start: int) -> bool:
    found = list(_SIMPLE_PRESENT.finditer(folded[max(0, start - 40):start]))
    if not found:
        return False
    verb = found[-1].group("verb")  # the verb closest to the duration
    return verb not in _NOT_ACTION and not verb.endswith(("ing", "ed"))


def stated_ttl(text: str, now: datetime) -> float | None:
    """Seconds from ``now`` until the memory stated in ``text`` stops holding, or None if it states no TTL."""
    if "?" in text:  # a question states nothing: "Any plans for the weekend?"
        text = " ".join(s for s in _SENTENCE.split(text) if not s.rstrip().endswith("?"))
    folded = _fold(text)
    if _REMINDER.search(folded):
        return None
    m = _BOUND.search(folded)
    o = _ONLY.search(folded)
    if o is not None and _past_before(folded, o.start()):
        o = None
    span = next((found for pattern in _SPAN if (found := pattern.search(folded)) is not None), None)
    if m is None and o is None and span is None and _UNTIL_ANY.search(folded) is None:
        return None  # no frame at all (most memories): skip the tense checks
    at: datetime | None = None
    past = bool(_PAST.search(folded) or _PAST_WORDS.search(folded) or _past_form(text))
    # "I was there until Friday", "I waited until Friday": the bound of a past event; "I fast until noon most
    # days": the bound of a habit
    habit = bool(past or _HABIT.search(folded) or (m is not None and _past_before(folded, m.start())))
    if m is not None and not habit:
        at = _bound(m, now)
    if at is None and o is not None and not habit:
        said = next((o.group(g) for g in _ONLY_GROUPS if g in o.groupdict() and o.group(g)), "day")
        at = _calendar(now, end=_period(said) or "day")
    if at is None and not habit:
        at = _until_date(folded, now)
    if at is not None:
        seconds = (at - now).total_seconds()
        return seconds if seconds > 0 else None
    s = span
    if s is None:
        return None
    # a duration that is a habit, a property or the past says nothing about how long the memory holds
    if (_HABIT.search(folded) or _PROPERTY.search(folded) or _PAST.search(folded) or _PAST_WORDS.search(folded)
            or _IS_FOR.search(folded) or _LATER.search(folded) or _past_before(folded, s.start())
            or _past_form(text) or _ongoing_before(folded, s.start())
            or (not _EXPLICIT.search(s.group(0)) and _habitual_before(folded, s.start()))):
        return None
    if "bu" in s.groupdict() and s.group("bu"):
        return _UNIT_OF[s.group("bu").lower()]
    try:
        n = _number(s.group("n"))
    except ValueError:
        return None
    seconds = n * _UNIT_OF[s.group("u").lower()]
    if "and a half" in s.group(0):
        seconds += 0.5 * _UNIT_OF[s.group("u").lower()]
    return seconds if seconds > 0 else None


_SENTENCE = rx.compile(r"(?<=[.!?;])\s+|\n+")
_TOKEN = rx.compile(r"\w+")


def ttl_of_memory(content: str, source: str, now: datetime) -> float | None:
    """The TTL of one memory extracted from ``source``: stated in the memory itself, or in the sentence of the
    source it came from (extraction may drop the phrase: "Until Friday I'm covering for Sara" -> "covering for
    Sara"). Only the sentence the memory shares most of its words with counts, so "I live in Berlin. I'm at the
    dentist for an hour." does not make the address expire."""
    own = stated_ttl(content, now)
    if own is not None or source == content:
        return own
    words = set(_TOKEN.findall(_fold(content)))
    if not words:
        return None
    for sentence in _SENTENCE.split(source):
        said = set(_TOKEN.findall(_fold(sentence)))
        if len(words & said) >= 0.5 * len(words):
            found = stated_ttl(sentence, now)
            if found is not None:
                return found
    return None
