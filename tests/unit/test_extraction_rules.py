"""RuleExtractor, entity_key and the predicate vocabulary.

Each case pins exact triples: downstream governance matches on (subject, predicate, object, polarity), so a change
here is a behaviour change, not a refactor.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from neusym.errors import InvalidInputError
from neusym.extraction import (
    PREDICATES,
    Extraction,
    Extractor,
    RuleExtractor,
    canonical_predicate,
)
from neusym.record import MemoryType

NOW = datetime(2024, 5, 1, 15, 30, tzinfo=UTC)  # a Wednesday
MIDNIGHT = datetime(2024, 5, 1, tzinfo=UTC)
RX = RuleExtractor()

Spo = tuple[str, str, str, bool]


def run(text: str, speaker: str | None = None, **kw: object) -> list[Extraction]:
    return RX.extract(text, speaker=speaker, now=NOW, **kw)  # type: ignore[arg-type]


def spo(text: str, speaker: str | None = None) -> set[Spo]:
    return {(t.subject, t.predicate, t.object, t.polarity) for x in run(text, speaker) for t in x.triples}


def one(text: str, speaker: str | None = None) -> Extraction:
    out = run(text, speaker)
    assert len(out) == 1, out
    return out[0]


# ---------------------------------------------------------------------------------------------------- facts
FACTS: list[tuple[str, set[Spo]]] = [
    ("My name is Bob.", {("user", "name", "Bob", True)}),
    ("my name is bob", {("user", "name", "Bob", True)}),
    ("Call me Liz", {("user", "name", "Liz", True)}),
    ("Hi, I'm John.", {("user", "name", "John", True)}),
    ("I live in Berlin.", {("user", "lives_in", "Berlin", True)}),
    ("i live in berlin", {("user", "lives_in", "Berlin", True)}),
    ("I moved to New York City last year.", {("user", "lives_in", "New York City", True)}),
    ("I'm based in Austin, Texas.", {("user", "lives_in", "Austin", True)}),
    (
        "I moved from Boston to Denver in 2019.",
        {("user", "lives_in", "Denver", True), ("user", "lives_in", "Boston", False)},
    ),
    ("I'm from Canada.", {("user", "from", "Canada", True)}),
    ("I grew up in Lyon.", {("user", "from", "Lyon", True)}),
    (
        "I work at Google as a software engineer.",
        {("user", "works_at", "Google", True), ("user", "job_title", "software engineer", True)},
    ),
    ("I work for Acme Corp.", {("user", "works_at", "Acme Corp", True)}),
    (
        "I'm a nurse at St. Mary's Hospital.",
        {("user", "job_title", "nurse", True), ("user", "works_at", "St. Mary's Hospital", True)},
    ),
    ("I'm a teacher.", {("user", "job_title", "teacher", True)}),
    ("My job is product manager.", {("user", "job_title", "product manager", True)}),
    ("I'm a student at MIT.", {("user", "job_title", "student", True), ("user", "studies_at", "MIT", True)}),
    (
        "I'm allergic to peanuts, shellfish and penicillin.",
        {
            ("user", "allergic_to", "peanuts", True),
            ("user", "allergic_to", "shellfish", True),
            ("user", "allergic_to", "penicillin", True),
        },
    ),
    ("I have a peanut allergy.", {("user", "allergic_to", "peanut", True)}),
    ("I'm lactose intolerant.", {("user", "intolerant_to", "lactose", True)}),
    ("I'm vegan.", {("user", "diet", "vegan", True)}),
    (
        "I am a vegetarian and I can't eat gluten.",
        {("user", "diet", "vegetarian", True), ("user", "avoids", "gluten", True)},
    ),
    ("I have a dog named Rex.", {("user", "has_pet", "Rex", True), ("Rex", "is_a", "dog", True)}),
    ("My cat's name is Luna.", {("user", "has_pet", "Luna", True), ("Luna", "is_a", "cat", True)}),
    ("I have two cats.", {("user", "has_pet", "cat", True)}),
    ("My phone number is +1 555-123-4567.", {("user", "phone", "+1 555-123-4567", True)}),
    ("My email is bob@example.com.", {("user", "email", "bob@example.com", True)}),
    ("You can reach me at jane.doe@mail.org", {("user", "email", "jane.doe@mail.org", True)}),
    ("My github handle is @octocat.", {("user", "github_handle", "@octocat", True)}),
    (
        "My wife Sarah is a teacher.",
        {("user", "married_to", "Sarah", True), ("Sarah", "job_title", "teacher", True)},
    ),
    ("Sarah is my sister.", {("user", "sibling_of", "Sarah", True)}),
    ("My mom's name is Ann.", {("user", "child_of", "Ann", True)}),
    (
        "My daughter Emma loves horses.",
        {("user", "parent_of", "Emma", True), ("Emma", "likes", "horses", True)},
    ),
    (
        "I am married to Tom and we have two kids.",
        {("user", "married_to", "Tom", True), ("user", "has", "two kids", True)},
    ),
    ("My birthday is May 3rd.", {("user", "birthday", "May 3", True)}),
    ("I was born on 1990-05-03.", {("user", "birthday", "1990-05-03", True)}),
    ("I was born in 1990.", {("user", "birth_year", "1990", True)}),
    ("I was born in Naples.", {("user", "born_in", "Naples", True)}),
    ("I'm 32 years old.", {("user", "age", "32", True)}),
    (
        "I speak English and Spanish.",
        {("user", "speaks", "English", True), ("user", "speaks", "Spanish", True)},
    ),
    ("I'm Canadian.", {("user", "nationality", "Canadian", True)}),
    ("i am canadian", {("user", "nationality", "Canadian", True)}),
    ("I use Neovim for coding.", {("user", "uses", "Neovim", True)}),
    ("I play guitar and tennis.", {("user", "plays", "guitar", True), ("user", "plays", "tennis", True)}),
    ("I volunteer at the animal shelter.", {("user", "volunteers_at", "animal shelter", True)}),
]


@pytest.mark.parametrize(("text", "expected"), FACTS, ids=[c[0] for c in FACTS])
def test_fact_triples(text: str, expected: set[Spo]) -> None:
    assert spo(text) == expected


PREFERENCES: list[tuple[str, set[Spo]]] = [
    (
        "I like pizza, pasta and sushi.",
        {
            ("user", "likes", "pizza", True),
            ("user", "likes", "pasta", True),
            ("user", "likes", "sushi", True),
        },
    ),
    ("I really love hiking.", {("user", "likes", "hiking", True)}),
    ("I enjoy reading sci-fi novels.", {("user", "likes", "reading sci-fi novels", True)}),
    ("I'm a big fan of jazz.", {("user", "likes", "jazz", True)}),
    ("I hate mornings.", {("user", "dislikes", "mornings", True)}),
    ("I can't stand cilantro.", {("user", "dislikes", "cilantro", True)}),
    ("I prefer tea over coffee.", {("user", "prefers", "tea", True), ("user", "prefers", "coffee", False)}),
    ("I'd rather walk than drive.", {("user", "prefers", "walk", True), ("user", "prefers", "drive", False)}),
    ("My favourite colour is blue.", {("user", "favourite_colour", "blue", True)}),
    ("My favorite color is green.", {("user", "favourite_colour", "green", True)}),
    ("My favourite kind of music is jazz.", {("user", "favourite_music", "jazz", True)}),
    ("The Hobbit is one of my favorites.", {("user", "likes", "Hobbit", True)}),
]


@pytest.mark.parametrize(("text", "expected"), PREFERENCES, ids=[c[0] for c in PREFERENCES])
def test_preference_triples_and_type(text: str, expected: set[Spo]) -> None:
    ext = one(text)
    assert {(t.subject, t.predicate, t.object, t.polarity) for t in ext.triples} == expected
    assert ext.type == MemoryType.PREFERENCE
    assert "preference" in ext.tags


# ---------------------------------------------------------------------------------------------------- negation
NEGATIONS: list[tuple[str, Spo, set[str]]] = [
    ("I don't like coffee.", ("user", "likes", "coffee", False), {"negation"}),
    ("I do not like coffee anymore.", ("user", "likes", "coffee", False), {"negation"}),
    ("I no longer live in London.", ("user", "lives_in", "London", False), {"negation", "past"}),
    ("I used to work at IBM.", ("user", "works_at", "IBM", False), {"negation", "past"}),
    ("I worked at IBM for ten years.", ("user", "works_at", "IBM", False), {"negation", "past"}),
    ("I lived in Rome as a kid.", ("user", "lives_in", "Rome", False), {"negation", "past"}),
    ("I'm not from Spain.", ("user", "from", "Spain", False), {"negation"}),
    ("I'm not allergic to cats.", ("user", "allergic_to", "cats", False), {"negation"}),
    ("I don't have a dog.", ("user", "has_pet", "dog", False), {"negation"}),
    ("I don't speak German.", ("user", "speaks", "German", False), {"negation"}),
    ("I'm not really into hiking.", ("user", "likes", "hiking", False), {"negation"}),
    ("My ex-husband Mark lives in Ohio.", ("user", "married_to", "Mark", False), {"past"}),
]


@pytest.mark.parametrize(("text", "triple", "signals"), NEGATIONS, ids=[c[0] for c in NEGATIONS])
def test_negation_sets_polarity_false(text: str, triple: Spo, signals: set[str]) -> None:
    ext = one(text)
    assert triple in {(t.subject, t.predicate, t.object, t.polarity) for t in ext.triples}
    assert signals <= set(ext.intent_signals)


def test_prefer_over_is_not_flagged_as_negation() -> None:
    assert "negation" not in one("I prefer tea over coffee.").intent_signals


# ---------------------------------------------------------------------------------------------------- speakers
def test_speaker_becomes_subject_and_content_prefix() -> None:
    ext = one("I went to a LGBTQ support group yesterday. It was so powerful.", speaker="Caroline")
    assert ext.content == "Caroline: I went to a LGBTQ support group yesterday. It was so powerful."
    assert ("Caroline", "went_to", "LGBTQ support group", True) in {
        (t.subject, t.predicate, t.object, t.polarity) for t in ext.triples
    }
    assert ext.speaker == "Caroline"
    assert "Caroline" in ext.entities
    assert ext.type == MemoryType.OBSERVATION
    assert ext.valid_from == MIDNIGHT - timedelta(days=1)


@pytest.mark.parametrize(
    ("text", "speaker", "expected"),
    [
        ("I live in Paris.", "Melanie", ("Melanie", "lives_in", "Paris", True)),
        ("My name is Jo.", "Jo", ("Jo", "name", "Jo", True)),
        ("I love pottery.", "Melanie", ("Melanie", "likes", "pottery", True)),
        ("Caroline likes painting.", "Melanie", ("Caroline", "likes", "painting", True)),
        ("My sister lives in Berlin.", None, ("user's sister", "lives_in", "Berlin", True)),
        ("My sister lives in Berlin.", "Ann", ("Ann's sister", "lives_in", "Berlin", True)),
        ("Caroline's brother works at Apple.", None, ("Caroline's brother", "works_at", "Apple", True)),
    ],
)
def test_subject_attribution(text: str, speaker: str | None, expected: Spo) -> None:
    assert expected in spo(text, speaker)


def test_third_party_signal_and_lower_confidence() -> None:
    mine = one("I live in Lisbon.")
    theirs = one("Alice lives in Lisbon.")
    assert "third_party" in theirs.intent_signals and "third_party" not in mine.intent_signals
    assert theirs.confidence < mine.confidence


def test_pronoun_resolved_from_previous_sentence() -> None:
    ext = one("My friend Alice just moved to Lisbon. She works at Spotify.")
    triples = {(t.subject, t.predicate, t.object, t.polarity) for t in ext.triples}
    assert {
        ("user", "friend_of", "Alice", True),
        ("Alice", "lives_in", "Lisbon", True),
        ("Alice", "works_at", "Spotify", True),
    } <= triples
    assert "pronoun_resolved" in ext.intent_signals


def test_pronoun_resolved_from_context_only() -> None:
    ext = run("She works at Spotify.", context=["I met Dana at the conference."])[0]
    assert ("Dana", "works_at", "Spotify", True) in {
        (t.subject, t.predicate, t.object, t.polarity) for t in ext.triples
    }
    assert run("She works at Spotify.")[0].triples == []  # nobody to resolve to


def test_sounds_like_is_not_a_person() -> None:
    assert spo("Sounds like a plan, John!") == set()


def test_assistant_and_user_speakers_get_no_prefix() -> None:
    assert one("I live in Oslo.", speaker="user").content == "I live in Oslo."
    assert one("I will check the weather tomorrow.", speaker="assistant").content.startswith("I will")


# ---------------------------------------------------------------------------------------------------- plans
PLANS: list[tuple[str, str, datetime | None]] = [
    ("I will call my mom tomorrow.", "call my mom", MIDNIGHT + timedelta(days=1)),
    ("I'm going to Paris next week.", "go to Paris", MIDNIGHT + timedelta(days=7)),
    ("I plan to finish the report on Friday.", "finish the report", MIDNIGHT + timedelta(days=2)),
    ("I'm going to visit Grandma next Friday.", "visit Grandma", MIDNIGHT + timedelta(days=2)),
    ("I need to renew my passport in 2 weeks.", "renew my passport", NOW + timedelta(weeks=2)),
    ("I'll submit the paper on 2024-06-15.", "submit the paper", datetime(2024, 6, 15, tzinfo=UTC)),
    ("I'm going to run a marathon on May 3rd.", "run a marathon", datetime(2024, 5, 3, tzinfo=UTC)),
    ("I will fly to Rome on April 2.", "fly to Rome", datetime(2025, 4, 2, tzinfo=UTC)),
    ("Remind me to buy milk in 2 hours.", "buy milk", NOW + timedelta(hours=2)),
    (
        "I have a dentist appointment on Monday at 3pm.",
        "dentist appointment",
        datetime(2024, 5, 6, 15, tzinfo=UTC),
    ),
    ("I'm flying to Tokyo the day after tomorrow.", "flying to Tokyo", MIDNIGHT + timedelta(days=2)),
    ("We will visit Lisbon this weekend.", "visit Lisbon", datetime(2024, 5, 4, tzinfo=UTC)),
    ("I want to learn Spanish.", "learn Spanish", None),
]


@pytest.mark.parametrize(("text", "activity", "due"), PLANS, ids=[c[0] for c in PLANS])
def test_plans_and_due_dates(text: str, activity: str, due: datetime | None) -> None:
    ext = one(text)
    assert ext.type == MemoryType.PLAN
    assert ("user", "plans_to", activity, True) in {
        (t.subject, t.predicate, t.object, t.polarity) for t in ext.triples
    }
    assert ext.plan_due == due


def test_negated_plan() -> None:
    ext = one("I won't go to the party on Saturday.")
    assert ext.type == MemoryType.PLAN
    assert ("user", "plans_to", "go to the party", False) in {
        (t.subject, t.predicate, t.object, t.polarity) for t in ext.triples
    }


def test_aspiration_and_obligation_signals() -> None:
    assert "aspiration" in one("I hope to visit Japan next year.").intent_signals
    assert "obligation" in one("I have to pay rent tomorrow.").intent_signals


def test_past_intentions_are_not_plans() -> None:
    assert one("I was going to call you yesterday.").type != MemoryType.PLAN


def test_reminder_signal() -> None:
    ext = one("Please remind me to water the plants tonight.")
    assert ext.type == MemoryType.PLAN and "reminder" in ext.intent_signals
    assert ext.plan_due == MIDNIGHT


# ---------------------------------------------------------------------------------------------------- TTL
@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("Please remember this code for 10 minutes: 4821", 600.0),
        ("Remember my hotel room number is 312 for the next 3 days.", 3 * 86400.0),
        ("Keep this in mind for an hour: the gate is B12.", 3600.0),
        ("Note that this token expires in 2 hours.", 7200.0),
        ("Keep the door code for today: 9911.", (MIDNIGHT + timedelta(days=1) - NOW).total_seconds()),
        ("The wifi password is valid until Friday.", (MIDNIGHT + timedelta(days=3) - NOW).total_seconds()),
    ],
)
def test_ttl_phrases(text: str, seconds: float) -> None:
    ext = one(text)
    assert ext.expires_in == pytest.approx(seconds)
    assert "temporary" in ext.intent_signals


@pytest.mark.parametrize(
    "text",
    ["I lived in Paris for 3 years.", "Please remember I've been vegan for years.", "I slept for 8 hours."],
)
def test_durations_of_the_past_are_not_ttls(text: str) -> None:
    assert all(x.expires_in is None for x in run(text))


def test_explicit_remember_raises_importance_and_confidence() -> None:
    plain = one("My wifi password is hunter2.")
    asked = one("Please remember that my wifi password is hunter2.")
    assert "explicit_remember" in asked.intent_signals
    assert asked.importance > plain.importance and asked.confidence >= 0.95
    assert asked.type == MemoryType.FACT


# ---------------------------------------------------------------------------------------------------- instructions
@pytest.mark.parametrize(
    "text",
    [
        "Always answer in French.",
        "From now on, never use emoji.",
        "Please keep your answers short.",
        "Don't ever mention my ex again.",
        "Never book flights before 9am.",
        "Use metric units from now on.",
        "You should always cite your sources.",
        "I want you to address me as Dr. Smith.",
        "Be more concise.",
        "In future responses, skip the pleasantries.",
    ],
)
def test_instructions(text: str) -> None:
    ext = one(text)
    assert ext.type == MemoryType.INSTRUCTION
    assert "instruction" in ext.intent_signals
    assert ext.importance >= 0.8


@pytest.mark.parametrize(
    "text", ["Don't worry about it.", "Write me a poem about cats.", "Please send the report."]
)
def test_one_off_requests_are_not_instructions(text: str) -> None:
    assert all(x.type != MemoryType.INSTRUCTION for x in run(text))


# ---------------------------------------------------------------------------------------------------- emotions
@pytest.mark.parametrize(
    ("text", "emotion"),
    [
        ("I feel so stressed today.", "stressed"),
        ("I'm really happy right now!", "happy"),
        ("I've been feeling kind of lonely lately.", "lonely"),
        ("I am exhausted.", "exhausted"),
    ],
)
def test_emotions_are_transient(text: str, emotion: str) -> None:
    ext = one(text)
    assert ext.type == MemoryType.EMOTION
    assert "transient_emotion" in ext.intent_signals
    assert ("user", "feels", emotion, True) in {
        (t.subject, t.predicate, t.object, t.polarity) for t in ext.triples
    }
    assert ext.importance <= 0.35


def test_emotion_with_date_records_event_time() -> None:
    assert one("I feel so stressed today.").valid_from == MIDNIGHT


def test_good_at_is_not_an_emotion() -> None:
    assert all(t.predicate != "feels" for t in one("I'm good at chess.").triples)


def test_emotion_does_not_override_the_event_it_accompanies() -> None:
    ext = one("I passed my driving test last Friday! I'm so excited.", speaker="Caroline")
    assert ext.type == MemoryType.OBSERVATION
    assert ext.valid_from == datetime(2024, 4, 26, tzinfo=UTC)


# ---------------------------------------------------------------------------------------------------- hedges etc.
@pytest.mark.parametrize(
    "text",
    [
        "I think I'm allergic to penicillin.",
        "Maybe I'm allergic to penicillin.",
        "I'm probably allergic to penicillin.",
        "I think I might be allergic to penicillin.",
    ],
)
def test_hedges_lower_confidence_but_keep_the_fact(text: str) -> None:
    ext = one(text)
    assert "hedge" in ext.intent_signals
    assert ext.confidence < 0.7
    assert {(t.predicate, t.object) for t in ext.triples} == {("allergic_to", "penicillin")}
    assert all(t.confidence < 0.7 for t in ext.triples)


@pytest.mark.parametrize(
    "text",
    [
        "If I were rich I would live in Monaco.",
        "I wish I lived in Hawaii.",
        "Imagine I worked at NASA.",
        "What if I moved to Mars?",
    ],
)
def test_hypotheticals_assert_nothing(text: str) -> None:
    ext = one(text)
    assert "hypothetical" in ext.intent_signals
    assert ext.triples == []
    assert ext.confidence <= 0.3


@pytest.mark.parametrize(
    "text",
    ["Where do I live?", "What's my dog's name?", "do you know where I work", "Is my birthday in May?"],
)
def test_questions_assert_nothing(text: str) -> None:
    ext = one(text)
    assert "question" in ext.intent_signals
    assert ext.triples == [] and ext.confidence <= 0.2


def test_statement_with_tag_question_keeps_fact() -> None:
    ext = one("I just moved to Berlin, any tips?")
    assert ("user", "lives_in", "Berlin", True) in {
        (t.subject, t.predicate, t.object, t.polarity) for t in ext.triples
    }


def test_polite_request_is_not_a_question() -> None:
    ext = one("Can you remember that my locker code is 4412?")
    assert "question" not in ext.intent_signals and "explicit_remember" in ext.intent_signals


# ---------------------------------------------------------------------------------------------------- types
@pytest.mark.parametrize(
    ("text", "mtype"),
    [
        ("Paris is the capital of France.", MemoryType.KNOWLEDGE),
        ("Python is a programming language.", MemoryType.KNOWLEDGE),
        ("The Eiffel Tower is 330 m tall.", MemoryType.KNOWLEDGE),
        ("I went to the Louvre yesterday.", MemoryType.OBSERVATION),
        ("The meeting went well and we shipped the release.", MemoryType.OBSERVATION),
        ("I live in Rome.", MemoryType.FACT),
        ("I love Rome.", MemoryType.PREFERENCE),
    ],
)
def test_types(text: str, mtype: MemoryType) -> None:
    assert one(text).type == mtype


def test_knowledge_triples() -> None:
    assert spo("Paris is the capital of France.") == {("Paris", "capital_of", "France", True)}
    assert spo("Tim Cook is the CEO of Apple.") == {("Tim Cook", "ceo_of", "Apple", True)}
    assert spo("Python is a programming language.") == {("Python", "is_a", "programming language", True)}


# ---------------------------------------------------------------------------------------------------- grouping
def test_directives_get_their_own_memory() -> None:
    out = run("Remind me to call mom tomorrow. Also, I love sushi.")
    assert [x.type for x in out] == [MemoryType.PLAN, MemoryType.PREFERENCE]
    assert out[0].content == "Remind me to call mom tomorrow."
    assert out[1].content == "Also, I love sushi."


def test_split_false_keeps_one_memory() -> None:
    out = RuleExtractor(split=False).extract("Remind me to call mom tomorrow. Also, I love sushi.", now=NOW)
    assert len(out) == 1
    assert out[0].content == "Remind me to call mom tomorrow. Also, I love sushi."
    assert out[0].type == MemoryType.PLAN
    assert {t.predicate for t in out[0].triples} == {"plans_to", "likes"}


def test_facts_in_one_turn_stay_together() -> None:
    out = run("Hey! I live in Berlin and I work at Siemens.")
    assert len(out) == 1
    assert out[0].content == "I live in Berlin and I work at Siemens."
    assert {t.predicate for t in out[0].triples} == {"lives_in", "works_at"}


def test_remember_that_attaches_to_previous_fact() -> None:
    out = run("I'm allergic to peanuts. Please remember that.")
    assert len(out) == 1
    assert "explicit_remember" in out[0].intent_signals
    assert out[0].importance >= 0.85


def test_two_instructions_are_two_memories() -> None:
    out = run("Always answer in French. Never use emoji.")
    assert [x.content for x in out] == ["Always answer in French.", "Never use emoji."]


@pytest.mark.parametrize(
    "text", ["thanks!", "lol ok", "Okay, thanks! Bye.", "that's great", "Hi there!", "😂😂", "...", "   ", ""]
)
def test_chitchat_yields_nothing(text: str) -> None:
    assert run(text) == []


# ---------------------------------------------------------------------------------------------------- robustness
@pytest.mark.parametrize(
    "text",
    [
        "MATCH (n) DETACH DELETE n",
        "CREATE (u:User {name: 'x'})-[:OWNS]->(m) RETURN m; // ' OR 1=1 --",
        "Zoë lives in Zürich 🇨🇭 and loves ☕.",
        "我住在北京。我喜欢茶。",
        "مرحبا، أنا أعيش في دبي",
        "\u202eevil\u202c text with bidi \u200b zero width",
        "a" * 5000,
        "I like " + "very " * 300 + "long sentences.",
        "!!!???...,,,;;;",
        "I I I I I my my my",
        "My name is",
        "I live in",
        "Call me at 555-0100.",
        "tabs\tand\r\nnewlines\n\n\nI work at Google",
        "<script>alert('I live in Paris')</script>",
        "I'm allergic to " + ", ".join(f"thing{i}" for i in range(200)),
    ],
)
def test_weird_input_does_not_crash(text: str) -> None:
    out = run(text)
    for ext in out:
        assert ext.content.strip()
        for t in ext.triples:
            assert t.subject and t.object and t.predicate.replace("_", "").isalnum()


def test_unicode_names() -> None:
    ext = one("Zoë lives in Zürich.")
    assert ("Zoë", "lives_in", "Zürich", True) in {
        (t.subject, t.predicate, t.object, t.polarity) for t in ext.triples
    }


def test_long_text_is_kept_whole() -> None:
    text = "I live in Paris. " + "Filler sentence about nothing in particular. " * 600
    out = RuleExtractor(max_chars=2000).extract(text, now=NOW)
    assert len(out) == 1 and out[0].content == text.strip()
    assert ("user", "lives_in", "Paris", True) in {
        (t.subject, t.predicate, t.object, t.polarity) for t in out[0].triples
    }


def test_non_string_and_invalid_unicode_are_rejected() -> None:
    with pytest.raises(InvalidInputError):
        RX.extract(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        RX.extract("\ud800 lone surrogate I live in Paris")


def test_naive_now_is_utc_and_default_now_works() -> None:
    naive = RX.extract("I will call Ann tomorrow.", now=datetime(2024, 5, 1, 10))[0]
    assert naive.plan_due == datetime(2024, 5, 2, tzinfo=UTC)
    assert RX.extract("I will call Ann tomorrow.")[0].plan_due is not None


def test_deterministic() -> None:
    text = "I moved to Lisbon last month and I love it. Remind me to call Ana on Friday."
    assert run(text) == run(text)


def test_protocol_and_scores_in_range() -> None:
    assert isinstance(RX, Extractor)
    for text, _ in FACTS + PREFERENCES:
        for ext in run(text):
            assert 0.0 <= ext.confidence <= 1.0 and 0.0 <= ext.importance <= 1.0
            assert ext.extractor == "rules"


def test_all_rule_predicates_are_in_the_vocabulary() -> None:
    texts = [t for t, _ in FACTS + PREFERENCES] + [t for t, *_ in NEGATIONS] + [t for t, *_ in PLANS]
    for text in texts:
        for ext in run(text):
            for t, fact in zip(ext.triples, ext.facts, strict=True):
                p = t.predicate
                # outside the vocabulary only the clause reader's open verb lemmas, and they say so
                assert (
                    p in PREDICATES
                    or p.startswith("favourite_")
                    or p.endswith(("_handle", "_of"))
                    or (fact.source == "clause" and fact.verb)
                ), p
                assert canonical_predicate(p) == p


def test_throughput_smoke() -> None:
    """Not a timed assertion (CI machines vary): just exercises the fast path on a realistic mix."""
    texts = [t for t, _ in FACTS] * 5
    start = time.perf_counter()
    for text in texts:
        RX.extract(text, now=NOW)
    assert time.perf_counter() - start < 30


# ---------------------------------------------------------------------------------------------------- regressions
# Each of these was a wrong triple on real conversational text (LoCoMo-style chat turns).
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "My sister's name is Priya and she lives in Mumbai.",
            {("user", "sibling_of", "Priya", True), ("Priya", "lives_in", "Mumbai", True)},
        ),
        (
            "We have a golden retriever called Max.",
            {("user", "has_pet", "Max", True), ("Max", "is_a", "dog", True)},
        ),
        ("My boss is Jennifer Lee.", {("user", "reports_to", "Jennifer Lee", True)}),
        ("I'm learning Japanese.", {("user", "studies", "Japanese", True)}),
        (
            "My address is 221B Baker Street, London.",
            {("user", "lives_in", "221B Baker Street, London", True)},
        ),
        (
            "I love my dog Rex so much!",
            {("user", "likes", "Rex", True), ("user", "has_pet", "Rex", True), ("Rex", "is_a", "dog", True)},
        ),
        ("I can't have dairy.", {("user", "avoids", "dairy", True)}),
        (
            "I'm a software developer from Poland living in Amsterdam.",
            {("user", "job_title", "software developer", True)},
        ),
        ("Dancing is like second nature to me.", set()),
        ("It's Shia Labeouf!", set()),
        ("Note: my flight is UA 123 on June 5th.", set()),
        ("Connecting with the things I love makes writing even more fun.", set()),
        ("Amazing products that I might not have found otherwise.", set()),
    ],
)
def test_regressions(text: str, expected: set[Spo]) -> None:
    assert spo(text) == expected


def test_routines_have_no_event_date() -> None:
    ext = one("I go to the gym every Monday.")
    assert ext.valid_from is None and ext.plan_due is None
    assert ("user", "goes_to", "gym", True) in {
        (t.subject, t.predicate, t.object, t.polarity) for t in ext.triples
    }


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        ("I'm lucky to have people like you to remind me.", "reminder"),
        ("They always remind me of that day.", "reminder"),
        ("I can just imagine the thrill of it.", "hypothetical"),
        ("Don't give up on your dreams!", "instruction"),
        ("I'd been wanting to try yoga for a while.", "hypothetical"),
    ],
)
def test_idioms_do_not_trigger_signals(text: str, absent: str) -> None:
    assert all(absent not in x.intent_signals for x in run(text))


def test_pronoun_confidence_is_per_triple() -> None:
    ext = one("My sister's name is Priya and she lives in Mumbai.")
    conf = {t.predicate: t.confidence for t in ext.triples}
    assert conf["lives_in"] < conf["sibling_of"] == ext.confidence
