"""The update pair model's pure parts: lexicon, masking, subjects, ended values, the fitted weights, the attribute
resolver and the trust policy (no graph, no model). Sentences are not taken from the governance benchmark."""

from __future__ import annotations

import numpy as np

from neusym.governance import _update_weights
from neusym.governance.attributes import AttributeResolver
from neusym.governance.policy import GovernancePolicy
from neusym.governance.update_lexicon import ADDITIVE, CHANGE, CORRECTION, ENDING, cue_positions, words
from neusym.governance.update_model import (
    FEATURES,
    PairModel,
    body,
    content_words,
    ended_values,
    heads,
    same_subject,
    subject_of,
    value_spans,
)
from neusym.governance.updates import UpdateDetector
from neusym.record import MemoryRecord, Scope, Source, Triple


def _rec(text: str, speaker: str | None = None, triples: list[Triple] | None = None) -> MemoryRecord:
    return MemoryRecord(content=text, scope=Scope(user_id="u"), source=Source(origin="user", speaker=speaker),
                        triples=triples or [])


def test_cues_are_lemmas_in_four_languages() -> None:
    assert cue_positions("We relocated to Graz", CHANGE)
    assert cue_positions("Wir sind umgezogen", CHANGE) and cue_positions("Me mudé a Cádiz", CHANGE)
    assert cue_positions("Désormais je bois du thé", CHANGE)
    assert cue_positions("Je ne fume plus", ENDING) and cue_positions("Ich rauche nicht mehr", ENDING)
    assert cue_positions("Ya no fumo", ENDING) and cue_positions("She quit smoking", ENDING)
    assert cue_positions("sorry, typo: it is Mara", CORRECTION) and cue_positions("En realidad es Ana", CORRECTION)
    assert cue_positions("I also play chess", ADDITIVE) and cue_positions("Ich spiele auch Schach", ADDITIVE)
    assert not cue_positions("I like long walks", CHANGE)
    assert words("J'ai quitté Orange, dad's car") == ["j'", "ai", "quitté", "orange", "dad", "car"]


def test_value_spans_are_names_and_numbers_not_the_speaker() -> None:
    spans = value_spans("So I moved to Tromsø, my number is 0151 2345678 and I'm happy")
    assert "tromsø" in spans and any("2345678" in s for s in spans)
    assert not any(s in ("i", "i'm") for s in spans)


def test_ending_words_end_the_value_they_stand_next_to() -> None:
    shared = {"tesco", "piano", "guitar"}
    assert ended_values("I left Tesco last month", shared) == {"tesco"}
    assert ended_values("not piano, ukulele", shared) == {"piano"}
    assert ended_values("I would never quit Tesco", shared) == set()
    assert content_words("Ich arbeite jetzt bei Zeiss") == {"arbeite", "zeiss"}


def test_subjects() -> None:
    # two speakers are two people
    assert not same_subject(_rec("Ann: I live in Rome", "Ann"), _rec("Bob: I live in Oslo", "Bob"),
                            subject_of(_rec("Ann: I live in Rome", "Ann")),
                            subject_of(_rec("Bob: I live in Oslo", "Bob")))[0]
    # a role the old memory names may be given a name later (weaker link)
    old = _rec("My husband teaches at the college.", triples=[Triple(subject="user's husband", predicate="works_at",
                                                                      object="college")])
    new = _rec("Idris quit the college and joined a startup.")
    assert same_subject(new, old, subject_of(new), subject_of(old)) == (True, True, True)
    # a memory about the speaker is not updated by one about a third person or a thing it names as a value
    mine = _rec("I work at Acme.")
    for other in ("Acme opened a new office in Lyon.", "My sister works at Globex."):
        o = _rec(other)
        assert not same_subject(o, mine, subject_of(o), subject_of(mine))[0], other
    # "Emma and I ..." is about the speaker
    assert subject_of(_rec("Emma and I moved in together.")).names == frozenset()


def test_attribute_heads() -> None:
    assert heads("My favourite drink is cola.") == {"drink"}
    assert heads("Mi jefa es Marta.") == {"jefa"}
    assert heads("rooibos is my favourite now") == set()


def test_shipped_weights_fit_the_features() -> None:
    model = PairModel()
    assert len(_update_weights.WEIGHTS) == len(FEATURES) == len(_update_weights.MEAN)
    assert 0.0 < model.threshold < 1.0
    x = np.asarray(_update_weights.MEAN, dtype=np.float64)
    assert 0.0 <= model.probability(x) <= 1.0
    assert all(name.rstrip("+-") in FEATURES for name in model.explain(x))


def test_attribute_in_words_without_an_embedder() -> None:
    r = AttributeResolver()
    assert r.resolve("where do I live")[0] == "lives_in"
    assert r.resolve("wer ist mein Chef?")[0] == "reports_to"
    assert r.resolve("¿Dónde trabajo?")[0] == "works_at"
    assert r.resolve("favorite color")[0] == "favourite_colour"
    assert r.resolve("works_for") == ("works_at", "predicate")
    assert r.resolve("paint") == ("paint", "unchanged")


def test_trust_of_origins() -> None:
    p = GovernancePolicy()
    assert p.trust("document") == 0.6 and p.trust("nonsense") == p.unknown_source_trust
    assert p.may_update("user") and p.may_update("tool") and p.may_update("agent")
    assert not p.may_update("document") and not p.may_update("nonsense")
    strict = GovernancePolicy(update_min_trust=0.75)
    assert strict.may_update("tool") and not strict.may_update("agent")


def test_the_vector_bound_never_prunes_a_pair_the_model_would_accept() -> None:
    """The write path skips pairs whose vector features cannot reach the threshold whatever their text says: the
    bound must be at least the model's probability for every pair with those vector features."""
    from neusym.governance.update_model import SLOTS
    from neusym.governance.updates import UpdateDetector

    det = UpdateDetector.__new__(UpdateDetector)
    det.model, det._coef, det._offset = PairModel(), None, 0.0
    rng = np.random.default_rng(3)
    width = len(SLOTS) + 14
    s_new, s_old = rng.uniform(-0.1, 0.7, (200, width)), rng.uniform(-0.1, 0.7, (200, width))
    sim = rng.uniform(0.15, 1.0, 200)
    cues = rng.integers(0, 2, (200, 3)).astype(float)  # change, correction, additive cue of the new memory
    bound = det._upper_bounds(s_new, s_old, sim, cues)
    for k in range(200):
        n = len(SLOTS)
        joint = np.minimum(s_new[k, :n], s_old[k, :n])
        a = int(np.argmax(joint))
        single = 1.0 if SLOTS[a].single else 0.0
        for _ in range(20):  # random text features in their ranges
            x = rng.uniform(0.0, 1.0, len(FEATURES))
            x[FEATURES.index("change")] *= cues[k, 0]
            x[FEATURES.index("change_value")] = x[FEATURES.index("change")] * rng.uniform(0.0, 1.0)
            x[FEATURES.index("correction")] = cues[k, 1]
            x[FEATURES.index("additive")] = cues[k, 2]
            x[FEATURES.index("cos")] = sim[k]
            x[FEATURES.index("slot_same")] = joint[a]
            x[FEATURES.index("slot_agree")] = float(np.argmax(s_new[k, :n]) == np.argmax(s_old[k, :n]))
            bg_new, bg_old = s_new[k, n:].max(), s_old[k, n:].max()
            x[FEATURES.index("filler")] = max(bg_new, bg_old) - joint[a]
            x[FEATURES.index("slot_margin")] = min(s_new[k, a] - bg_new, s_old[k, a] - bg_old)
            x[FEATURES.index("single")] = single
            for prod, factor in (("single_change", "single"), ("slot_change", "slot_same"),
                                 ("agree_change", "slot_agree")):
                x[FEATURES.index(prod)] = x[FEATURES.index(factor)] * x[FEATURES.index("change")]
            x[FEATURES.index("slot_value")] = joint[a] * rng.integers(0, 2)
            x[FEATURES.index("cos_margin")] = rng.uniform(-1.0, 0.85)
            assert det.model.probability(x) <= bound[k] + 1e-9


def test_labels_names_and_proper_nouns_are_not_values() -> None:
    """Found by template corpora: two numbered notes saying the same thing, a name inside a longer one, a place that
    starts like an ending word."""
    a = _rec("Trip log 4: the spare key is under the mat.")
    b = _rec("Trip log 11: the spare key is under the mat.")
    assert body(a.content).strip() == body(b.content).strip() == "the spare key is under the mat."
    assert UpdateDetector.pair_gate(b, a) is None  # nothing new beyond the label
    assert UpdateDetector.pair_gate(_rec("[ticket 7] my desk is B12."), _rec("[ticket 3] my desk is C4.")) is not None
    hana, ana = _rec("Hana painted the fence on Friday."), _rec("Ana painted the fence on Monday.")
    assert same_subject(ana, hana, subject_of(ana), subject_of(hana))[0] is False  # "ana" is inside "hana"
    assert ended_values("Bruno flew to Quito for the trip.", {"trip"}) == set()
    assert ended_values("Bruno quit the trip.", {"trip"}) == {"trip"}



_PAIRS_TEXTS = [
    "I live in Porto.", "Moved to Lisbon last month, Porto is behind me now.", "My manager is Rita.",
    "Rita left the company, Jonas is my boss now.", "Actually it's Jonas, not Rita.", "I also play the cello.",
    "We had pasta for dinner and watched a film about sharks.", "used to work at the bakery",
    "I don't eat meat.", "Ich wohne jetzt in Graz.", "Mi jefa nueva se llama Carla.", "My favourite colour is teal.",
    "Signed with Acme Corp, starting Monday as a data engineer!", "Sold the Golf, I drive a Tesla now.",
]


def test_the_text_bound_never_prunes_a_pair_the_model_would_accept() -> None:
    """The write path's second bound knows each pair's text features and its exact ``cos_margin``; only who the
    pair is about (third person, role link) is left at its most favourable value. For real sentence pairs and any
    vector features, the bound must stay at or above the model's probability with either subject reading."""
    from neusym.governance.update_model import (
        SLOTS,
        cos_margin,
        objects_of,
        pair_features,
        statement,
        text_features,
    )

    det = UpdateDetector.__new__(UpdateDetector)
    det.model, det._coef, det._offset = PairModel(), None, 0.0
    rng = np.random.default_rng(5)
    recs = [_rec(t, triples=[Triple(subject="user", predicate="p", object=t.split()[-1].strip(".!"))])
            for t in _PAIRS_TEXTS]
    width = len(SLOTS) + 14
    checked = 0
    for new in recs:
        for old in recs:
            if new is old:
                continue
            tx = text_features(statement(new), statement(old), objects_of(old))
            s_new, s_old = rng.uniform(-0.1, 0.8, (1, width)), rng.uniform(-0.1, 0.8, (1, width))
            sim = float(rng.uniform(0.15, 1.0))
            others = list(rng.uniform(0.15, 1.0, int(rng.integers(0, 6))))
            text = {k: np.asarray([v]) for k, v in tx.items()}
            text["cos_margin"] = np.asarray([cos_margin(sim, others)])
            bound = float(det._upper_bounds(s_new, s_old, np.asarray([sim]), text=text)[0])
            for third in (False, True):
                for via_role in (False, True):
                    x = pair_features(new, old, sim, s_new[0], s_old[0], third=third, via_role=via_role,
                                      others=others)
                    assert np.allclose(x, pair_features(new, old, sim, s_new[0], s_old[0], third=third,
                                                        via_role=via_role, others=others, text=tx))
                    assert det.model.probability(x) <= bound + 1e-9
                    checked += 1
    assert checked == 4 * len(recs) * (len(recs) - 1)


def test_the_margin_bound_holds_whatever_the_batch_adds() -> None:
    """Before a batch's own candidates are known, a stored neighbour's ``cos_margin`` is bounded from the stored
    neighbours alone: earlier candidates of the batch can enter the nearest six and push lower ones out."""
    from neusym.governance.update_model import cos_margin
    from neusym.governance.updates import _others

    det = UpdateDetector.__new__(UpdateDetector)
    rng = np.random.default_rng(9)
    for _ in range(2000):
        near = sorted(rng.uniform(det.pair_floor, 1.0, int(rng.integers(1, det.neighbours + 1))).tolist(),
                      reverse=True)
        batch = rng.uniform(det.pair_floor, 1.0, int(rng.integers(0, 4))).tolist()
        seen = sorted(near + batch, reverse=True)[: det.neighbours]
        for sim in near:
            if sim < seen[-1]:
                continue  # pushed out of the nearest six: not a candidate any more
            assert cos_margin(sim, _others(seen, sim)) <= det._margin_bound(sim, near, False) + 1e-9
