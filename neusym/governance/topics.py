"""What a forget request's topic covers: categories, the words memories of a category use, and the people it names.

"Forget everything about my health" must reach "I take metformin twice a day", which shares no word with "health"
and sits at cosine ~0.2 from it under MiniLM. A topic that names a *category* (health, money, religion, politics,
relationships, work, home, body, gambling, legal trouble, ...) is therefore expanded two ways:

* a few short English **descriptions** of what memories of that category say; the forget preview scores a memory by
  its best similarity to the topic or any description;
* the category's **cue words** in English, German, Spanish and French ("Neurologe", "préstamo", "découvert",
  "overdraft"): MiniLM is English-centric, and a German memory sits as close to an unrelated German memory as to a
  relevant English description, so outside English the words are what carries the meaning.

A topic can also name a **person by role** ("my landlord", "mi jefa", "meinen Vermieter"): the preview then resolves
the role to the names the tenant's memories give it ("My landlord, Mr. Okafor, ...") and follows those names. When
the role only *holds* the topic ("my sister's pregnancy", "my dad's heart surgery") its name is what the memories are
about, not a lead to the topic, and is not followed.

Everything here is text in, text out; the similarity scoring lives in :mod:`neusym.governance.forgetting`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

from neusym.knowledge.isa import Kind, find_kinds, senses_of, wordnet
from neusym.language import regex as rx
from neusym.language.detect import language_of

__all__ = ["CATEGORY_KINDS", "ROLES", "ROLE_KINDS", "TopicSense", "fold", "introduced_names", "language_of",
           "read_topic", "role_names", "role_words", "topic_descriptions"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def fold(text: str) -> str:
    """Lower case without accents: "Gesundheit" and "gesundheit", "santé" and "sante" compare equal."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


@dataclass(frozen=True)
class _Category:
    keys: str  # words that name the category in a request, any language (folded)
    descriptions: tuple[str, ...]  # what memories of the category say, in English (MiniLM's language)
    cues: str  # words such memories use, any language (folded); "stem*" matches any word starting with stem


_CATEGORIES: dict[str, _Category] = {
    "health": _Category(
        "health healthy illness illnesses ill sick sickness disease diseases medical medicine medication medications "
        "condition conditions diagnosis treatment treatments doctor doctors hospital symptoms surgery operation meds "
        "cancer diabetes injury injuries heart pain gesundheit krankheit "
        "krankheiten krank medizinisch medikamente arzt arzte arzttermine salud enfermedad enfermedades medico "
        "medica medicos medicamentos sante maladie maladies medecin medicaments medical medicale salute malattia "
        "farmaci",
        ("a medical diagnosis, disease or chronic condition", "taking medication or pills",
         "a visit to a doctor, specialist or hospital", "test results from a medical check-up",
         "an injury, pain or therapy", "a prescription from a doctor", "symptoms such as pain, fever or a racing heart"),
        "doctor doctors gp clinic hospital diagnos* prescri* medic* meds pill pills tablet* dose dosage symptom* "
        "surgery surgeon* operation physio* scan mri x-ray blood check-up checkup specialist cardiolog* neurolog* "
        "dermatolog* oncolog* gyn* orthop* psychiatr* allerg* asthma diabet* insulin cancer tumour tumor migraine* "
        "infection fever flu covid chronic disease illness sick injur* fracture sprain inhaler antibiotic* vaccin* "
        "heart cholesterol hypertension arthritis insomnia rehab bypass stroke metformin ibuprofen rash itch* cough* "
        "sore_throat nausea dizz* swollen bleeding chickenpox measles otitis ear_infection "
        "arzt arztin hausarzt* klinik krankenhaus diagnose rezept verschrieb* medikament* tablette* schmerz* "
        "operiert therapie blutabnahme blutdruck blutwert* untersuchung facharzt* kardiolog* orthopad* "
        "allergie* migrane krebs infekt fieber grippe chronisch krankheit krank verletz* herz* zahnarzt* husten "
        "erkaltung ausschlag ubelkeit schwindel* mittelohrentzundung windpocken "
        "medico medica clinica diagnostic* receta medicament* pastilla* dolor operaron operacion cirug* terapia "
        "analisis sangre especialista neumolog* alergi* asma insulina migrana infeccion fiebre gripe cronic* "
        "resfriado tos otitis varicela nauseas mareo* sarpullido "
        "enfermedad enferm* lesion fractura corazon hipertension inhalador* ambulatorio urgencias "
        "medecin docteur clinique hopital ordonnance medicament* cachet* comprime* douleur* chirurg* therapie kine* "
        "pediatre otite angine bronchite gastro varicelle rhume toux nausee* vertige* antibiotique* "
        "analyse* specialiste asthme diabete insuline fievre chronique maladie malade blesse* coeur hypertension "
        "generaliste blood_test heart_rate blood_pressure prise_de_sang tension_arterielle presion_arterial "
        "analisis_de_sangre"),
    "mental_health": _Category(
        "mental_health mental therapy therapist therapists counselling counseling psychologist psychiatrist anxiety depression "
        "psyche psychisch therapeut therapeutin psychologe salud_mental terapia terapeuta psicologo psicologa "
        "ansiedad depresion sante_mentale therapeute psy psychologue anxiete",
        ("anxiety, panic attacks or depression", "seeing a therapist, psychologist or psychiatrist",
         "antidepressants or other psychiatric medication", "what was talked about in a therapy session",
         "struggling to get out of bed or to cope"),
        "therap* counsel* psycholog* psychiatr* anxiety anxious panic depress* antidepress* sertraline prozac "
        "burnout burn-out session* trauma* ptsd adhd bipolar suicid* self-harm lonely "
        "angst* panik* depressiv* therapeut* sitzung* angstzustand* "
        "ansiedad panico depresion terapeut* psicolog* psiquiatr* sesion* "
        "angoisse* anxiete panique depressi* therapeute psy seance*"),
    "money": _Category(
        "money finances financial finance salary income savings debt debts loan loans bank banking credit pay "
        "wages earnings budget expenses expense costs bills spending finanzen finanziell gehalt schulden kredit geld einkommen dinero finanzas deuda "
        "deudas prestamo prestamos sueldo salario ahorro ahorros argent finances dette dettes pret prets salaire "
        "epargne revenus soldi debiti stipendio",
        ("how much money someone earns", "money saved or in the bank", "owing money, debts and loan repayments",
         "credit cards and bank accounts", "being behind on rent or bills"),
        "_amount_ credit_card salary income wage* savings saved owe owed owing debt* loan* mortgage overdraft bank amex "
        "mastercard borrow* lend* repay* repayment* installment* instalment* bills rent invest* shares "
        "stocks pension tax taxes bankrupt* payday broke "
        "gehalt einkommen ersparnis* erspart* schuld* schulde kredit* darlehen dispo uberzieh* konto bank "
        "raten geliehen leihen miete steuer* rente "
        "sueldo salario gano ahorro* deuda* prestamo* hipoteca cuota* banco tarjeta credito presta* "
        "alquiler impuesto* "
        "salaire gagne epargne* economies dette* pret prets emprunt* credit decouvert banque loyer impot*"),
    "relationship": _Category(
        "relationship relationships partner boyfriend girlfriend husband wife marriage wedding dating love life "
        "beziehung partnerin ehe hochzeit liebe relacion pareja novio novia boda matrimonio relation couple "
        "mariage copain copine fiance fiancee relazione fidanzato fidanzata",
        ("being in a couple with a partner", "engagement and wedding plans", "dating, love and break-ups",
         "moving in together or living with a partner"),
        "together proposed propos* engaged engagement wedding married marriage boyfriend girlfriend husband wife "
        "partner dating anniversary break-up breakup divorc* fiance* "
        "zusammen verlobt* hochzeit verheiratet beziehung partner* freundin getrennt scheidung jahrestag "
        "juntos juntas novio novia pareja boda casamos casar* aniversario rompimos divorci* "
        "ensemble fiance* mariage couple copain copine rupture divorc* anniversaire"),
    "ex": _Category(
        "ex ex-wife ex-husband ex-boyfriend ex-girlfriend ex-partner divorce breakup break-up exfrau exmann "
        "exfreund exfreundin scheidung trennung exmujer exmarido exnovio exnovia divorcio ruptura exfemme exmari "
        "divorce rupture",
        ("a former partner, an ex", "breaking up, separating or getting divorced"),
        "ex broke break-up breakup divorc* separat* custody alimony getrennt scheidung trennung sorgerecht "
        "divorci* separa* rompimos custodia divorc* rupture garde"),
    "religion": _Category(
        "religion religious faith belief beliefs church god glaube glauben religion kirche religios religion fe "
        "creencias iglesia religioso religiosa foi croyance eglise religieux religieuse religione fede chiesa",
        ("belonging to a religion or faith", "religious services, prayer and worship",
         "religious holidays, fasting and rituals"),
        "church mass pray* prayer* god catholic* protestant* christian* muslim* islam* jewish judaism hindu* "
        "buddhis* atheist* synagogue mosque temple lent ramadan easter passover bible quran koran faith baptis* "
        "kirche messe bete betet beten gebet gott katholisch* evangelisch* moschee fasten faste fastet christ* "
        "iglesia misa rezo rezar dios catolic* musulman* mezquita cuaresma ramadan cristian* "
        "eglise messe prie* priere dieu catholique* musulman* mosquee careme ramadan chretien*"),
    "politics": _Category(
        "political politics views vote voting party politik politisch wahl partei politica politico voto "
        "partido politique vote parti",
        ("which political party someone votes for", "opinions about laws, government and politicians",
         "political campaigns and activism"),
        "vote voted voting election* elected campaign* labour tory tories conservative* liberal* democrat* "
        "republican* green greens socialist* government law minister president parliament protest* "
        "wahle* wahlt* gewahlt partei regierung gesetz demonstration* "
        "voto vote* partido gobierno ley campana eleccion* "
        "vote* parti gouvernement loi manif* election*"),
    "weight": _Category(
        "weight body diet dieting gewicht korper abnehmen diat peso cuerpo dieta poids corps regime",
        ("a person's body weight in kilos or pounds", "losing or gaining body weight", "dieting and counting calories"),
        "weigh weighs weight kilo kilos kg pounds lbs gained calorie* diet* slim* "
        "wiege gewicht abgenommen zugenommen kalorie* diat* waage "
        "peso kilos adelgaz* engord* caloria* dieta bascula "
        "pese poids kilos maigri* grossi* calorie* regime balance"),
    "gambling": _Category(
        "gambling betting bets casino poker gluckspiel glucksspiel wetten apuestas juego jeux paris casino gioco "
        "scommesse",
        ("gambling, betting and casino games", "money won or lost gambling", "betting accounts and apps"),
        "bet bets betting bet365 betfair casino poker gambl* roulette blackjack wager* lottery "
        "wette* spielsucht apuesta* apost* casino loteria parier loto"),
    "alcohol": _Category(
        "drinking alcohol alcoholism drunk sobriety sober addiction drugs trinken alkohol sucht beber alcohol "
        "adiccion boire alcool addiction",
        ("drinking alcohol, getting drunk or hungover", "staying sober, AA meetings and recovery",
         "relapsing after quitting drinking or drugs", "an addiction to alcohol or drugs"),
        "sober sobriety aa alcohol* alcoholic* drunk hungover hangover relaps* rehab wine beer vodka whisky "
        "addict* detox "
        "nuchtern alkohol* betrunken ruckfall* entzug sucht* "
        "sobrio sobria alcohol* borracho* recaida resaca "
        "sobre alcool* ivre rechute* cuite sevrage"),
    "work": _Category(
        "boss manager job work employer colleague colleagues career office chef chefin arbeit job kollege "
        "kollegin jefe jefa trabajo empleo patron patronne travail collegue capo lavoro",
        ("a boss or manager at work", "dealings with colleagues at work", "someone's job, employer and shifts"),
        "boss manager colleague* coworker* employer office shifts promot* fired salary job "
        "chefin kolleg* buro arbeit* schicht* "
        "jefe jefa companer* oficina trabajo turno* "
        "patron* collegue* bureau travail"),
    "job_search": _Category(
        "job_hunt job_search job_hunting job-hunting jobhunt applications application interview interviews recruiter jobsuche "
        "bewerbung bewerbungen vorstellungsgesprach busqueda entrevista entrevistas recherche candidature "
        "candidatures entretien",
        ("applying for jobs and sending a CV", "a job interview with a company",
         "a recruiter, a job offer or a rejection from an employer"),
        "applied application* interview* recruiter* cv resume hiring "
        "beworben bewerbung* vorstellungsgesprach* absage zusage lebenslauf "
        "entrevista* solicitud* candidatura* curriculum oferta "
        "candidature* entretien* postule* embauche"),
    "family": _Category(
        "family families relatives parents familie eltern verwandte familia padres parientes famille parents",
        ("parents, siblings and other relatives", "what a mother, father, brother or sister is doing"),
        "mum mom mother dad father parents brother sister sons daughter grandma grandmother grandpa grandfather "
        "aunt uncle cousin niece nephew "
        "mutter mama vater papa eltern bruder schwester sohn tochter oma opa tante onkel "
        "madre padre hermano hermana hijo hija abuela abuelo tia tio primo prima "
        "mere maman pere papa frere soeur fils fille grand-mere grand-pere oncle"),
    "pregnancy": _Category(
        "pregnancy pregnant fertility ivf baby schwangerschaft schwanger kinderwunsch embarazo embarazada "
        "fertilidad grossesse enceinte fertilite fiv",
        ("being pregnant, a due date or a baby on the way", "fertility treatment, IVF and embryo transfers",
         "trying to have a baby"),
        "due_date egg_count egg_retrieval frozen_eggs pregnan* embryo* ivf fertility sperm ultrasound midwife trimester miscarr* baby twins "
        "schwanger* embryo* ultraschall hebamme fehlgeburt "
        "embaraz* embrion* ecografia matrona aborto "
        "enceinte embryon* echographie sage-femme fausse-couche"),
    "neighbour": _Category(
        "neighbour neighbours neighbor neighbors nachbar nachbarin nachbarn vecino vecina vecinos voisin voisine "
        "voisins vicino vicini",
        ("the people living next door", "what the neighbours do"),
        "next_door neighbour* neighbor* next-door upstairs downstairs nachbar* vecin* voisin*"),
    "home": _Category(
        "landlord landlady rent flat apartment tenancy lease housing vermieter vermieterin miete wohnung casero "
        "casera alquiler piso propietario arrendador proprietaire loyer appartement bail padrone affitto",
        ("the landlord and the rent", "renting a flat: deposit, lease and repairs"),
        "landlord landlady rent lease deposit tenancy tenant* boiler heating repair* evict* "
        "vermiet* miete mietvertrag kaution heizung mieter* "
        "casero casera alquiler fianza contrato calefaccion inquilin* "
        "proprietaire proprio loyer caution chauffage locataire*"),
    "sexuality": _Category(
        "sexuality sexual orientation gay lesbian bisexual sexualitat orientacion sexualite",
        ("being gay, lesbian or bisexual", "coming out"),
        "coming_out came_out gay lesbian bisexual queer schwul lesbisch homosexual* gai lesbienne"),
    "legal": _Category(
        "legal lawsuit court police arrest criminal record case immigration visa custody rechtlich gericht polizei "
        "prozess visum einwanderung juicio tribunal policia visado inmigracion justice tribunal police avocat "
        "proces immigration",
        ("a court case or lawsuit", "an arrest or criminal record", "a lawyer", "a visa, residence permit or "
         "immigration hearing"),
        "court lawyer* solicitor* attorney* lawsuit sued hearing appeal* arrest* police conviction convicted "
        "probation visa deport* asylum immigration home_office residence_permit titre_de_sejour "
        "permiso_de_residencia "
        "gericht anwalt anwaltin klage* polizei verhaftet vorstrafe* visum aufenthalt* abschieb* berufung "
        "juicio abogad* demanda* policia detenid* visado residencia deport* asilo recurso "
        "tribunal avocat* plainte police arrete* casier visa expuls* asile"),
    "children": _Category(
        "kids kid children child son sons daughter daughters kinder kind sohn tochter ninos hijos hijo hija enfants "
        "enfant fils fille",
        ("a child's school, nursery or teacher", "what the kids do: their age, activities and friends",
         "looking after the children, childcare and the babysitter"),
        "kids kid children child son daughter school nursery kindergarten daycare babysitter nanny homework "
        "teacher* playdate* "
        "kinder kind sohn tochter schule kita kindergarten babysitter hausaufgabe* lehrer* "
        "ninos nino nina hijo hija colegio escuela guarderia canguro deberes profesor* "
        "enfant* fils fille ecole creche nounou devoirs maitresse instit*"),
    "contact": _Category(
        "contact contacts phone number numbers email emails address addresses kontakt telefonnummer nummer adresse "
        "contacto telefono numero correo direccion coordonnees telephone numero courriel adresse",
        ("a phone number", "an email address", "a home or postal address"),
        "_phone_ _email_ phone mobile cell email e-mail address street postcode zip telefon handy handynummer "
        "strasse adresse telefono movil correo calle direccion telephone portable courriel rue adresse"),
    "credentials": _Category(
        "password passwords pin pins passcode passcodes login logins credentials code codes passwort passworter "
        "kennwort contrasena contrasenas clave mot_passe identifiants",
        ("a password, PIN or access code", "login details for an account", "a door, alarm or wifi code"),
        "password* passcode* pin login username wifi code codes passwort* kennwort* zugangscode* "
        "contrasena* clave* usuario mot_de_passe identifiant* digicode"),
    "education": _Category(
        "studies study school university college degree exams education studium uni universitat prufungen "
        "estudios universidad carrera examenes etudes universite fac examens",
        ("studying at university or college", "exams, grades and courses", "a thesis, degree or diploma"),
        "school primary secondary teacher* headteacher pupil* classmate* "
        "university uni college degree exam* thesis dissertation professor lecture* course* semester grade* "
        "grundschule gymnasium realschule colegio instituto ecole lycee college "
        "studium universitat hochschule prufung* klausur* abschluss* vorlesung* "
        "universidad carrera examen* tesis asignatura* nota* "
        "universite fac examen* partiel* these diplome* cours"),
    "car": _Category(
        "car cars vehicle driving accident auto autos fahrzeug unfall coche coches vehiculo accidente voiture "
        "voitures vehicule accident",
        ("a car: its repairs, insurance and garage", "a car accident or a driving fine"),
        "car garage mechanic tyres tires mot insur* accident crash* collision collided rear-ended speeding dent* "
        "driving licence license penalty_points parking_ticket "
        "auto werkstatt reifen unfall fuhrerschein tuv versicherung* strafzettel blitzer* "
        "coche taller neumaticos accidente carnet itv seguro multa* choque* "
        "voiture garagiste pneus accident permis assurance* amende* pv"),
}

# People a topic can name by role; each group lists its words in en/de/es/fr (folded). A role word the topic ends
# with makes it a topic about that person ("my landlord"); one that holds another word ("my sister's pregnancy",
# "la maladie de ma mère") makes it the holder.
ROLES: dict[str, str] = {
    "boss": "boss manager supervisor line-manager chef chefin vorgesetzter vorgesetzte jefe jefa patron patronne superieur",
    "landlord": "landlord landlady vermieter vermieterin casero casera arrendador propietario propietaria "
                "proprietaire proprio bailleur",
    "neighbour": "neighbour neighbor nachbar nachbarin vecino vecina voisin voisine",
    "therapist": "therapist counsellor counselor psychologist psychiatrist therapeut therapeutin psychologe "
                 "psychologin terapeuta psicologo psicologa psiquiatra therapeute psychologue psy",
    "doctor": "doctor gp physician surgeon arzt arztin hausarzt hausarztin medico medica cirujano medecin docteur "
              "chirurgien",
    "dentist": "dentist zahnarzt zahnarztin dentista dentiste",
    "lawyer": "lawyer solicitor attorney anwalt anwaltin abogado abogada avocat avocate",
    "ex": "ex ex-wife ex-husband ex-boyfriend ex-girlfriend ex-partner exfrau exmann exfreund exfreundin exmujer "
          "exmarido exnovio exnovia ex-mujer ex-marido ex-novio ex-novia exfemme exmari ex-femme ex-mari",
    "partner": "partner boyfriend girlfriend husband wife fiance fiancee spouse partnerin verlobter verlobte "
               "ehemann ehefrau novio novia pareja marido esposo esposa prometido prometida copain copine mari "
               "compagnon compagne",
    "mother": "mother mum mom mutter mama madre mere maman",
    "father": "father dad papa vater padre pere",
    "sister": "sister schwester hermana soeur",
    "brother": "brother bruder hermano frere",
    "son": "son sohn hijo fils",
    "daughter": "daughter tochter hija fille",
    "grandparent": "grandmother grandma granny grandfather grandpa oma opa grossmutter grossvater abuela abuelo "
                   "grand-mere grand-pere mamie papi",
    "relative": "aunt uncle cousin niece nephew tante onkel cousine nichte neffe tia tio primo prima sobrina "
                "sobrino oncle niece neveu",
    "colleague": "colleague coworker co-worker kollege kollegin companero companera collegue",
    "friend": "friend freund freundin amigo amiga ami amie",
    "flatmate": "flatmate roommate housemate mitbewohner mitbewohnerin colocataire coloc",
    "recruiter": "recruiter headhunter personalvermittler reclutador reclutadora recruteur recruteuse",
    "teacher": "teacher tutor coach trainer lehrer lehrerin trainerin profesor profesora entrenador entrenadora "
               "professeur prof entraineur",
    "accountant": "accountant steuerberater steuerberaterin contable gestor comptable",
}
_ROLE_OF = {w: name for name, words in ROLES.items() for w in words.split()}
# people whose name is a lead to the topic even when a memory is about them ("Dr. Kim prescribed statins" ->
# "Kim's office moved the appointment"); the names of family and friends are the holders of what is said of them
_PROFESSIONAL = ("boss", "landlord", "therapist", "doctor", "dentist", "lawyer", "recruiter", "teacher", "accountant",
                 "neighbour", "colleague")
# a category that is about people of these roles follows their names ("my family" -> "Kevin's wedding")
_CATEGORY_ROLES = {"family": ("mother", "father", "sister", "brother", "son", "daughter", "grandparent", "relative"),
                   "children": ("son", "daughter"), "education": ("teacher",),
                   "relationship": ("partner",), "ex": ("ex",), "neighbour": ("neighbour",),
                   "home": ("landlord",), "work": ("boss", "colleague"), "mental_health": ("therapist",),
                   "job_search": ("recruiter",)}
# roles whose word also names a category: "my boss" is about the boss, not about work in general
_ROLE_ONLY = frozenset({"boss", "colleague"})

# WordNet synsets of each category (neusym.knowledge.isa): a memory naming a kind of one of them ("tinnitus" is a
# symptom, "arrears" a debt, "stepdaughter" a relative, "rabbi" a spiritual leader) is about the category, though no
# cue word lists it. English only (WordNet's language), and no synset a keyword trap would hide behind: "employee"
# or "workplace" take every job and shop, so work is its bosses and employers only.
CATEGORY_KINDS: dict[str, tuple[str, ...]] = {
    "health": ("ill_health.n.01", "symptom.n.01", "injury.n.01", "pain.n.01", "medical_care.n.01",
               "medical_procedure.n.01", "health_professional.n.01", "medicine.n.02", "hospital.n.01",
               "hypersensitivity_reaction.n.01", "vaccine.n.01", "caries.n.01"),
    "mental_health": ("mental_disorder.n.01", "psychotherapy.n.01", "psychotherapist.n.01", "psychiatrist.n.01",
                      "psychologist.n.01", "depression.n.01"),
    "money": ("money.n.01", "funds.n.01", "debt.n.02", "indebtedness.n.01", "loan.n.01", "mortgage.n.01",
              "financial_institution.n.01", "payment.n.01", "tax.n.01", "wage.n.01", "income.n.01", "expense.n.01",
              "cost.n.01", "bill.n.02", "credit_card.n.01"),
    "relationship": ("spouse.n.01", "girlfriend.n.01", "boyfriend.n.01", "fiance.n.01", "fiancee.n.01",
                     "marriage.n.01", "wedding.n.01", "divorce.n.01", "courtship.n.01"),
    "ex": ("divorce.n.01", "ex-wife.n.01", "ex-husband.n.01"),
    "religion": ("religion.n.01", "religious_person.n.01", "clergyman.n.01", "spiritual_leader.n.01",
                 "place_of_worship.n.01", "religious_ceremony.n.01", "prayer.n.01", "prayer.n.04",
                 "religious_holiday.n.01"),
    "politics": ("political_party.n.01", "election.n.01", "politician.n.01"),
    "weight": ("body_weight.n.01", "obesity.n.01", "fast.n.01"),
    "gambling": ("gambling.n.01", "gambling_house.n.01"),
    "alcohol": ("alcohol.n.01", "alcoholism.n.01", "drunkenness.n.01", "hangover.n.01"),
    "work": ("supervisor.n.01", "employer.n.01", "colleague.n.01", "wage.n.01"),
    "job_search": ("job_interview.n.01", "recruiter.n.01", "resume.n.02"),
    "family": ("relative.n.01", "family.n.01"),
    "pregnancy": ("pregnancy.n.01", "fetus.n.01", "midwife.n.01"),
    "neighbour": ("neighbor.n.01",),
    "home": ("landlord.n.01", "tenant.n.01", "rent.n.01", "lease.n.01"),
    "sexuality": ("homosexual.n.01",),
    "legal": ("lawsuit.n.01", "legal_proceeding.n.01", "lawyer.n.01", "crime.n.01", "police.n.01", "visa.n.01",
              "custody.n.02"),
    "children": ("juvenile.n.01", "offspring.n.01"),
    "education": ("educational_institution.n.01", "examination.n.02", "student.n.01", "academic_degree.n.01"),
    "car": ("car.n.01", "auto_part.n.01"),
}
# the people of a role, as WordNet kinds ("my doctor" -> "My oncologist, Dr. Varga"; "my lawyer" -> "my barrister")
ROLE_KINDS: dict[str, tuple[str, ...]] = {
    "boss": ("boss.n.01", "supervisor.n.01", "employer.n.01"), "landlord": ("landlord.n.01",),
    "neighbour": ("neighbor.n.01",),
    "therapist": ("psychotherapist.n.01", "psychiatrist.n.01", "psychologist.n.01", "therapist.n.01"),
    "doctor": ("doctor.n.01",), "dentist": ("dentist.n.01",), "lawyer": ("lawyer.n.01",),
    "recruiter": ("recruiter.n.01",), "teacher": ("teacher.n.01",), "accountant": ("accountant.n.01",),
    "colleague": ("colleague.n.01",),
}
_ALL_ROLE_KINDS = tuple(sorted({k for ks in ROLE_KINDS.values() for k in ks}))
_TOPIC_GENERAL = 5000  # a topic noun with more kinds below it is no topic ("things", "activity")


@lru_cache(maxsize=4096)
def role_words(text: str) -> dict[str, tuple[str, ...]]:
    """The words of an English ``text`` that WordNet says name a person of each role ("oncologist" -> doctor,
    "barrister" -> lawyer, "foreman" -> boss); words the role's own list has are left to it."""
    if language_of(text) != "en":
        return {}
    out: dict[str, list[str]] = {}
    wn = wordnet()
    for k in find_kinds(text, _ALL_ROLE_KINDS, lexnames=("noun.person",)):
        if not k.reading.dominant:
            continue
        target = wn.synset(k.reading.target)
        for role, kinds in ROLE_KINDS.items():
            if any(wn.synset(x) == target for x in kinds) and k.phrase.lower() not in ROLES[role].split():
                out.setdefault(role, []).append(k.phrase)
    return {r: tuple(dict.fromkeys(ws)) for r, ws in out.items()}


# cue "phrases" that are patterns rather than words
_PHRASES = {
    # an amount of money in any of the four languages: "300 euros", "12k", "$500", "2.100 euros netos", "£40"
    "_phone_": r"\+?\d[\d ()/-]{6,}\d",
    "_email_": r"\b[\w.+-]+@[\w-]+\.[\w.]+\b",
    "_amount_": r"(?:[$£€]\s?\d[\d.,]*\s?k?\b|\b\d[\d.,\s]*\s?(?:euros?|eur|dollars?|bucks|quid|pesos|francs?)\b)",
}
_KEYWORDS = {w: name for name, cat in _CATEGORIES.items() for w in cat.keys.split()}
_WORD = rx.compile(r"[\w'’-]+")
# words a request wraps its topic in, in any of the four languages
_FILLER = _words(
    "a an the my our your his her their me i we of about with to and or for on in at all everything anything stuff "
    "things thing details detail info information bits what that said told mentioned related "
    "mein meine meinen meinem meiner unser unsere die der das den dem des ein eine einen uber von mit und alles "
    "was ich zu mi mis nuestro nuestra nuestros el la los las lo un una de del sobre con y todo que sobre "
    "mon ma mes notre nos le la les l un une de du des sur avec et tout ce que")
_POSSESSIVE = rx.compile(r"^(?P<owner>[\w-]+?)(?:'s|s'|’s)$")


@dataclass(frozen=True)
class TopicSense:
    """What a forget topic names: its content words, categories (with descriptions and cue words), and people."""

    text: str
    words: tuple[str, ...]  # folded content words of the topic
    categories: tuple[str, ...] = ()
    descriptions: tuple[str, ...] = ()
    cues: tuple[str, ...] = ()
    person_roles: tuple[str, ...] = ()  # the topic is about the people of these roles
    holder_roles: tuple[str, ...] = ()  # the topic is something of these people (not to be followed)
    kinds: tuple[str, ...] = ()  # WordNet synsets whose kinds a memory may name (categories', the topic's nouns')
    _exact: frozenset[str] = field(default=frozenset(), repr=False)
    _prefixes: tuple[str, ...] = field(default=(), repr=False)
    _phrases: rx.TextPattern | None = field(default=None, repr=False)

    @staticmethod
    def is_filler(word: str) -> bool:
        """A word requests wrap topics in ("my", "mon", "über"): never an entity of the topic."""
        return fold(word) in _FILLER

    def kinds_in(self, text: str) -> list[Kind]:
        """The phrases of an English ``text`` WordNet says are kinds of what the topic covers ("'tinnitus' is a
        kind of symptom"); nothing outside English."""
        if not self.kinds or language_of(text) != "en":
            return []
        return find_kinds(text, self.kinds)

    def cue_in(self, text: str) -> str | None:
        """The first cue word of the topic's categories that ``text`` uses (any language), or None."""
        if not self.cues:
            return None
        if self._phrases is not None:  # "due date", "prise de sang", an amount of money
            m = self._phrases.search(fold(text))
            if m is not None:
                return m.group(0)
        for token in _WORD.findall(text):
            # "l'hypertension", "d'argent": the elided article is not part of the word
            word = rx.split(r"['’]", token)[-1] if rx.match(r"^\w{1,2}['’]", token) else token
            w = fold(word).strip("'-")
            if w in self._exact or w.removesuffix("s") in self._exact or any(w.startswith(p) for p in self._prefixes):
                return word
        return None


def _categories_of(words: list[str]) -> list[str]:
    names: list[str] = []
    skip = -1
    for i, word in enumerate(words):
        if i <= skip:
            continue
        pair = f"{word}_{words[i + 1]}" if i + 1 < len(words) else ""
        if pair in _KEYWORDS:  # "job hunt", "mental health": the phrase names one category, not its words' two
            if _KEYWORDS[pair] not in names:
                names.append(_KEYWORDS[pair])
            skip = i + 1
            continue
        for key in (word, word.removesuffix("'s"), word.removesuffix("s"), word.removesuffix("es")):
            name = _KEYWORDS.get(key)
            if name is not None:
                if name not in names:
                    names.append(name)
                break
    return names


def read_topic(topic: str) -> TopicSense:
    """Analyse a forget topic ("my mother's illness", "meinen Vermieter", "mi jefa", "Project Falcon")."""
    raw = [w for w in _WORD.findall(topic)]
    words: list[str] = []
    holders: list[str] = []
    for i, token in enumerate(raw):
        w = fold(token).strip("'-")
        owner = _POSSESSIVE.match(w)
        if owner is not None and i < len(raw) - 1:  # "my sister's pregnancy": sister holds it
            role = _ROLE_OF.get(owner.group("owner")) or _ROLE_OF.get(owner.group("owner").removesuffix("s"))
            if role is not None:
                holders.append(role)
            w = owner.group("owner")
        if w and w not in _FILLER:
            words.append(w)
    roles = [r for w in words if (r := _ROLE_OF.get(w) or _ROLE_OF.get(w.removesuffix("s"))) is not None]
    # "la maladie de ma mère", "die Krankheit meiner Mutter": a role after the head word holds it
    if roles and words and (_ROLE_OF.get(words[0]) or _ROLE_OF.get(words[0].removesuffix("s"))) is None \
            and len(words) > 1:
        holders.extend(r for r in roles if r not in holders)
    person = [r for r in roles if r not in holders]
    # a category is named by the topic's words, not by the person holding it ("la santé de mon fils" is about
    # health, not about children), unless that person is a professional ("my doctor's appointments")
    held = {w for w in words if (r := _ROLE_OF.get(w) or _ROLE_OF.get(w.removesuffix("s"))) in holders
            and r not in _PROFESSIONAL}
    categories = _categories_of([w for w in words if w not in held])
    # "my boss" is about the boss: the work category would take every memory about work
    if person and all(r in _ROLE_ONLY for r in person) and len(words) == len(person):
        categories = [c for c in categories if not set(_CATEGORY_ROLES.get(c, ())) & set(person)]
    for name in categories:
        person.extend(r for r in _CATEGORY_ROLES.get(name, ()) if r not in person and r not in holders)
    kinds = [k for name in categories for k in CATEGORY_KINDS.get(name, ())]
    kinds += [k for r in person if r not in holders for k in ROLE_KINDS.get(r, ())]
    if not categories and not person:
        kinds += _topic_kinds([w for w in words if w not in held], topic)
    descriptions = [d for name in categories for d in _CATEGORIES[name].descriptions]
    cues = [c for name in categories for c in _CATEGORIES[name].cues.split()]
    exact = frozenset(c for c in cues if not c.endswith("*") and "_" not in c)
    prefixes = tuple(c[:-1] for c in cues if c.endswith("*") and "_" not in c)
    phrases = [_PHRASES.get(c) or r"\b" + re.escape(c.rstrip("*")).replace("_", r"\s+") + ("" if c.endswith("*") else r"\b")
               for c in cues if "_" in c]
    return TopicSense(text=topic, words=tuple(words), categories=tuple(categories), descriptions=tuple(descriptions),
                      cues=tuple(cues), person_roles=tuple(dict.fromkeys(person)), holder_roles=tuple(holders),
                      kinds=tuple(dict.fromkeys(kinds)),
                      _exact=exact, _prefixes=prefixes,
                      _phrases=rx.compile("|".join(phrases)) if phrases else None)


def _topic_kinds(words: list[str], topic: str) -> list[str]:
    """The WordNet senses of an English topic's own nouns ("my plants" -> plant, "my allergies" -> allergy): a memory
    naming a kind of one (a fern, hay fever) is about the topic. Only for a topic that names no category and no role
    (the category covers "my money problems"; "problems" would reach every kind of trouble); a topic that is a name ("Project Falcon") has no kinds, and a noun too
    general to be a topic (:data:`_TOPIC_GENERAL` kinds below it) counts for nothing."""
    if language_of(topic) != "en" or any(w[:1].isupper() for w in _WORD.findall(topic)[1:]):
        return []
    rest = [w for w in words if _KEYWORDS.get(w) is None and w not in _ROLE_OF and w.removesuffix("s") not in _ROLE_OF]
    if not rest:
        return []
    return [x for _, senses in senses_of(" ".join(rest), general=_TOPIC_GENERAL) for x in senses]


def topic_descriptions(topic: str) -> list[str]:
    """Short English descriptions of what memories about ``topic`` say, for every category it names."""
    return list(read_topic(topic).descriptions)


# --------------------------------------------------------------------------------------------------- roles -> names
_TITLES = (r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Herr|Frau|Sr|Sra|Srta|Don|Doña|M|Mme|Mlle|Me|Maître|Docteur|Doctor)"
           r"\.?")
_NAME_WORD = r"[A-ZÀ-ÖØ-Þ][\w'’-]*[\w]"
_NAME = rf"(?:{_TITLES}\s+)?(?P<name>{_NAME_WORD}(?:\s+{_NAME_WORD})?)"
_LINK = (r"(?:\s*[,(]\s*|\s+|['’]s\s+name\s+is\s+|\s+(?:is|was|is\s+called|is\s+named|called|named|ist|heißt|heisst|hei[sß]t|war|es|era|"
         r"se\s+llama|llamad[oa]|est|s'appelle|s’appelle|nommée?|appelée?)\s+)")
_NOT_NAMES = _words(
    "I I'm I've I'll I'd The A An My Our His Her Their This That It He She We They You Your Monday Tuesday Wednesday "
    "Thursday Friday Saturday Sunday January February March April May June July August September October November "
    "December Ich Er Sie Es Wir Mein Meine Der Die Das Ein Eine Und Aber Montag Dienstag Mittwoch Donnerstag "
    "Freitag Samstag Sonntag Januar Februar März Juni Juli Oktober Dezember Yo El La Los Las Mi Mis Un Una Lunes "
    "Martes Miércoles Jueves Viernes Sábado Domingo Je Il Elle Nous Vous Ils Le Les Mon Ma Mes Un Une Lundi Mardi "
    "Mercredi Jeudi Vendredi Samedi Dimanche")


def _role_pattern(words: list[str]) -> rx.TextPattern:
    alt = "|".join(sorted((re.escape(w).replace(r"\-", "[-\\s]?") for w in words), key=len, reverse=True))
    return rx.compile(rf"\b(?:{alt})(?:s)?\b", re.IGNORECASE)


def role_names(role: str, text: str) -> list[str]:
    """Names ``text`` gives the person of ``role``: "My landlord, Mr. Okafor, ..." -> ["Okafor"], "My boss is Priya
    Raman" -> ["Priya", "Raman"], "Mein Vermieter heißt Herr Brandt", "Dr. Kim is my GP" -> ["Kim"]; in English the
    role may be any kind of it WordNet knows ("My barrister, Ms. Quill" for the lawyer)."""
    words = ROLES.get(role, "").split()
    if not words:
        return []
    words += role_words(text).get(role, ())  # "My oncologist, Dr. Varga": an oncologist is a doctor
    folded = fold(text)
    if len(folded) != len(text):  # folding changed offsets (rare ligatures): match on the text itself
        folded = text.lower()
    out: list[str] = []
    pattern = _role_pattern(words)
    # "my landlord, Mr. Okafor", "mi jefa se llama Lucía Ortega", "mon chef de service s'appelle Dr Morel"
    after = rx.compile(rf"(?:\s+[a-zà-ÿ]+){{0,3}}?{_LINK}(?:{_TITLES}\s+)?(?P<name>{_NAME_WORD}(?:\s+{_NAME_WORD})?)")
    before = rx.compile(rf"(?:{_TITLES}\s+)?(?P<name>{_NAME_WORD}(?:\s+{_NAME_WORD})?)\s*[,(]?\s*(?:(?:is|was|ist|es|"
                        rf"est|c'est)\s+)?(?:my|our|the|mein|meine|meiner|unser|unsere|der|die|mi|nuestro|nuestra|el|la|"
                        rf"mon|ma|notre|le)\s+$")
    for m in pattern.finditer(folded):
        tail = text[m.end():]
        a = after.match(tail)
        if a is not None:
            out.extend(_split_name(a.group("name")))
        head = text[max(0, m.start() - 60):m.start()]
        b = before.search(head)
        if b is not None:
            out.extend(_split_name(b.group("name")))
    return list(dict.fromkeys(out))


_TITLED = rx.compile(rf"\b{_TITLES}\s+(?P<name>{_NAME_WORD})")


def introduced_names(text: str) -> set[str]:
    """Names ``text`` introduces with a title or a professional role ("Dr. Kim", "my lawyer, Ms. Haddad")."""
    out = {n for r in _PROFESSIONAL for n in role_names(r, text)}
    out.update(w for m in _TITLED.finditer(text) for w in _split_name(m.group("name")))
    return out


def _split_name(name: str) -> list[str]:
    return [w.removesuffix("'s").removesuffix("’s") for w in name.split()
            if w not in _NOT_NAMES and len(w.removesuffix("'s")) > 1]
