"""The rule table: one regex per way of stating a fact, with the handler that turns a match into triples.

Each rule is gated by a few words: its regex runs only if the sentence contains one of them, which keeps ~75 rules
at thousands of texts a second (most sentences open two or three gates). Order matters only for duplicates: the
first rule to produce a (subject, predicate, object) wins, so the specific rules come before the generic ones.
"""

from __future__ import annotations

from neusym.extraction import _handlers as h
from neusym.extraction._grammar import (
    ACT_RX,
    ADJ,
    DEMONYM_RX,
    DEMONYM_WORDS,
    EMO_RX,
    EMOTION_WORDS,
    END_ENT,
    END_LIST,
    ENT_RX,
    EVENT_NOUN_RX,
    EVENT_WORDS,
    HEAD,
    HEAD_NONEG,
    INTENS_RX,
    ITEM_RX,
    LIST_RX,
    MODAL_RX,
    NAME,
    NAME_ANY,
    OCCUPATION_WORDS,
    ORG_RX,
    OWNER,
    PET_WORDS,
    PETS_RX,
    REL_RX,
    SUBJ,
    Ctx,
    RawTriple,
    Rule,
    obj,
)
from neusym.extraction.entities import EMAIL, PHONE, URL

__all__ = ["RULES", "run_rules"]


_I_AM_NAME = Rule(
    "i_am_name",
    rf"^(?:(?:hi|hello|hey)(?:\s+there|\s+all|\s+everyone)?[,!.]?\s+)?(?:i\s+am\s+(?P<obj>{NAME})"
    rf"(?=\s*(?:$|[,.!;]|\s+(?:and|from|by|here|speaking)\b))|this\s+is\s+(?P<obj2>{NAME})\s+(?:speaking|here)\b)",
    "am is",
    h.name_guess,
)

RULES: tuple[Rule, ...] = (
    # identity
    Rule(
        "name",
        rf"{OWNER}\s+(?:full\s+|first\s+|real\s+|legal\s+)?name\s+is\s+(?P<obj>{NAME_ANY}){END_ENT}",
        "name",
        h.name,
    ),
    Rule(
        "call_me",
        (
            rf"\b(?:you\s+can\s+|please\s+|just\s+|everyone\s+|people\s+|"
            rf"friends\s+)?call\s+me\s+(?P<obj>{NAME_ANY}){END_ENT}"
        ),
        "call",
        h.name,
    ),
    _I_AM_NAME,
    Rule(
        "nationality",
        (
            rf"{HEAD}\s+(?:an?\s+)?(?P<obj>{DEMONYM_RX})\b(?!\s+(?:food|cuisine|music|movies?|films?|restaurants?|"
            rf"dishes|culture|wine|beer))"
        ),
        DEMONYM_WORDS,
        h.nationality,
    ),
    Rule(
        "age",
        (
            rf"{HEAD}\s+(?P<turn>turning\s+|turned\s+)?(?P<obj>\d{{1,3}})(?:\s*(?:years?|yrs?)(?:\s+old)?|\s*(?:yo|"
            rf"y/o))?{END_ENT}"
        ),
        "#digit",
        h.age,
    ),
    Rule(
        "my_age",
        rf"{OWNER}\s+age\s+is\s+(?P<obj>\d{{1,3}})\b",
        "age",
        h.simple("age", "fact", "item", owner=True),
    ),
    Rule(
        "born",
        (
            rf"{HEAD}\s+born(?P<raised>\s+and\s+raised)?(?P<rest>\s+(?:on|in|"
            rf"at)?\s*(?P<place>[^,;!?]{{2,60}}?){END_ENT})"
        ),
        "born",
        h.born,
    ),
    Rule(
        "birthday",
        rf"{OWNER}\s+(?:birthday|bday|b-day|date\s+of\s+birth|dob)\s+is\s+(?:on\s+)?(?P<rest>)",
        "birthday bday b-day birth dob",
        h.birthday,
    ),
    # places
    Rule(
        "moved_from_to",
        rf"{HEAD}\s+(?:moved|relocated)\s+(?:here\s+)?from\s+{obj('src', END_ENT)}\s+to\s+{ENT_RX}",
        "moved relocated",
        h.moved_from_to,
    ),
    Rule(
        "lives_in",
        (
            rf"{HEAD}\s+(?P<v>live|lives|lived|living|reside|resides|resided|residing|based|settled|staying|stay|"
            rf"stays)\s+(?:in|at|on|near)\s+{ENT_RX}"
        ),
        "live lives lived living reside resides resided residing based settled staying stay stays",
        h.simple("lives_in", "fact", past_verbs=("lived", "resided")),
    ),
    Rule(
        "moved_to",
        rf"{HEAD}\s+(?:moved|relocated)\s+(?:back\s+|over\s+|out\s+)?to\s+{ENT_RX}",
        "moved relocated",
        h.simple("lives_in", "fact"),
    ),
    Rule(
        "from",
        rf"{HEAD}\s+(?:(?P<v>come|comes|came)\s+)?(?:originally\s+)?from\s+{ENT_RX}",
        "from",
        h.from_place,
    ),
    Rule(
        "grew_up",
        rf"{HEAD}\s+grew\s+up\s+in\s+{ENT_RX}",
        "grew",
        h.simple("from", "fact"),
    ),
    Rule(
        "address",
        rf"{OWNER}\s+(?:home\s+|current\s+|new\s+)?address\s+is\s+(?P<obj>[^;!?()\n]+?)(?=\s*(?:$|[;!?]|\.(?:\s|$)))",
        "address",
        h.simple("lives_in", "fact", "item", owner=True),
    ),
    Rule(
        "hometown",
        rf"{OWNER}\s+home\s*town\s+is\s+{ENT_RX}",
        "hometown home",
        h.simple("from", "fact", owner=True),
    ),
    # work and study
    Rule(
        "works_as",
        (
            rf"{HEAD}\s+(?P<v>work|works|worked|working)\s+as\s+(?:an?\s+|"
            rf"the\s+)?{obj('title', END_ENT)}(?:\s+(?:at|for|with)\s+{ORG_RX})?"
        ),
        "work works worked working",
        h.job,
    ),
    Rule(
        "works_at",
        (
            rf"{HEAD}\s+(?P<v>work|works|worked|working|employed|interning|interned)\s+(?:at|for|"
            rf"by)\s+{ORG_RX}(?:\s+as\s+(?:an?\s+|the\s+)?{obj('title', END_ENT)})?"
        ),
        "work works worked working employed interning interned",
        h.job,
    ),
    Rule(
        "job_at",
        rf"{HEAD}\s+(?:an?|the)\s+{obj('title', END_ENT)}\s+(?:at|for|of|with)\s+{ORG_RX}",
        OCCUPATION_WORDS,
        h.job_checked,
    ),
    Rule(
        "job_title",
        rf"{HEAD}\s+(?:an?)\s+{obj('title', END_ENT)}",
        OCCUPATION_WORDS,
        h.job_checked,
    ),
    Rule(
        "my_job",
        (
            rf"{OWNER}\s+(?:job|job\s+title|role|position|occupation|"
            rf"profession)\s+is\s+(?:an?\s+)?{obj('title', END_ENT)}"
        ),
        "job role position occupation profession",
        h.job,
    ),
    Rule(
        "my_employer",
        rf"{OWNER}\s+(?:employer|company)\s+is\s+{ORG_RX}",
        "employer company",
        h.job,
    ),
    Rule(
        "got_job",
        (
            rf"{HEAD}\s+(?:got|landed|started|accepted|took)\s+(?:a\s+|an\s+|my\s+|the\s+)?(?:new\s+)?(?:job|"
            rf"position|role|internship)\s+(?:at|with)\s+{ORG_RX}"
        ),
        "job position role internship",
        h.job,
    ),
    Rule(
        "studies",
        (
            rf"{HEAD}\s+(?P<v>study|studies|studied|studying|major|majors|majored|majoring|learning|learn|learns)"
            rf"\s+(?:in\s+)?(?!to\b|how\b|about\b|that\b){ITEM_RX}"
        ),
        "study studies studied studying major majors majored majoring learning learn learns",
        h.simple("studies", "fact", "item"),
    ),
    Rule(
        "studies_at",
        rf"{HEAD}\s+(?:study|studies|studying|am\s+a\s+student)\s+(?:\w+\s+){{0,3}}?at\s+{ENT_RX}",
        "study studies studying student",
        h.simple("studies_at", "fact"),
    ),
    Rule(
        "graduated",
        rf"{HEAD}\s+graduated\s+from\s+{ENT_RX}",
        "graduated",
        h.simple("graduated_from", "fact"),
    ),
    Rule(
        "volunteers",
        rf"{HEAD}\s+(?:volunteer|volunteers|volunteered|volunteering)\s+(?:at|for|with)\s+{ENT_RX}",
        "volunteer volunteers volunteered volunteering",
        h.simple("volunteers_at", "fact"),
    ),
    Rule(
        "member",
        rf"{HEAD}\s+(?:joined|(?:a\s+)?member\s+of|belongs?\s+to)\s+{ENT_RX}",
        "joined member belong belongs",
        h.simple("member_of", "fact"),
    ),
    # tastes
    Rule(
        "likes",
        (
            rf"{HEAD}\s+(?P<v>like|likes|liked|love|loves|loved|enjoy|enjoys|enjoyed|adore|adores|adored|dig|"
            rf"digs)\s+{LIST_RX}"
        ),
        "like likes liked love loves loved enjoy enjoys enjoyed adore adores adored dig digs",
        h.simple("likes", "preference", "item", many=True),
    ),
    Rule(
        "likes_be",
        (
            rf"{HEAD}\s+(?:a\s+(?:big\s+|huge\s+|massive\s+)?fan\s+of|into|fond\s+of|passionate\s+about|"
            rf"obsessed\s+with|crazy\s+about|keen\s+on|a\s+lover\s+of)\s+{LIST_RX}"
        ),
        "fan into fond passionate obsessed crazy keen lover",
        h.simple("likes", "preference", "item", many=True, need_be=True),
    ),
    Rule(
        "dislikes",
        (
            rf"{HEAD}\s+(?P<v>hate|hates|hated|dislike|dislikes|disliked|detest|detests|despise|despises|loathe|"
            rf"loathes|cannot\s+stand|can\s+not\s+stand|could\s+not\s+stand|cannot\s+bear)\s+{LIST_RX}"
        ),
        "hate hates hated dislike dislikes disliked detest detests despise despises loathe loathes stand bear",
        h.simple("dislikes", "preference", "item", many=True),
    ),
    Rule(
        "prefers",
        (
            rf"{HEAD}\s+(?:prefer|prefers|"
            rf"preferred)\s+{obj('obj', END_LIST.replace('|over|', '|over|to|'))}(?:\s+(?:over|to|rather\s+than|"
            rf"instead\s+of|than)\s+{obj('other', END_LIST)})?"
        ),
        "prefer prefers preferred",
        h.prefers,
    ),
    Rule(
        "rather",
        rf"{SUBJ}\s+would\s+rather\s+{obj('obj', END_LIST)}\s+than\s+{obj('other', END_LIST)}",
        "rather",
        h.prefers,
    ),
    Rule(
        "favourite",
        (
            rf"{OWNER}\s+(?:all[\s-]time\s+|absolute\s+|personal\s+|current\s+)?(?:favou?rite|fave|"
            rf"fav)\s+(?:kinds?\s+of\s+|types?\s+of\s+|"
            rf"sorts?\s+of\s+)?(?P<cat>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){{0,2}}?)\s+(?:is|are|was|were|has\s+to\s+be|"
            rf"would\s+have\s+to\s+be)(?P<neg>\s+not)?\s+{LIST_RX}"
        ),
        "favourite favorite fave fav",
        h.favourite,
    ),
    Rule(
        "favourite_inv",
        (
            rf"(?:^|[,;]\s*|\b(?:and|but|so|think|guess)\s+)(?P<obj>[^,;.!?]{{1,60}}?)\s+(?:is|are|"
            rf"was)\s+{OWNER}\s+(?:all[\s-]time\s+)?(?:favou?rite|"
            rf"fave)\s+(?P<cat>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){{0,2}}?){END_ENT}"
        ),
        "favourite favorite fave",
        h.favourite,
    ),
    Rule(
        "one_of_favs",
        (
            rf"(?:^|[,;]\s*|\b(?:and|but|so|think|guess)\s+)(?P<obj>[^,;.!?]{{1,60}}?)\s+(?:is|are)\s+(?:one|"
            rf"some)\s+of\s+{OWNER}\s+(?:all[\s-]time\s+)?(?:favou?rites?|faves?)\b"
        ),
        "favourite favorite fave favourites favorites faves",
        h.simple("likes", "preference", "item", owner=True),
    ),
    Rule(
        "allergic",
        (
            rf"{HEAD}\s+(?:(?:severely|very|deathly|highly|mildly|slightly|badly|super|extremely|"
            rf"seriously)\s+)?allergic\s+to\s+{LIST_RX}"
        ),
        "allergic",
        h.simple("allergic_to", "fact", "item", many=True),
    ),
    Rule(
        "allergy_have",
        (
            rf"{HEAD}\s+(?:have|has|got)\s+(?:an?\s+)?(?:(?:severe|bad|serious|mild|"
            rf"slight)\s+)?(?P<obj>[\w\-]+(?:\s+[\w\-]+)?)\s+allerg(?:y|ies)\b"
        ),
        "allergy allergies",
        h.simple("allergic_to", "fact", "item"),
    ),
    Rule(
        "allergy_to",
        (
            rf"{HEAD}\s+(?:have|has|got)\s+(?:an?\s+)?(?:(?:severe|bad|serious|mild)\s+)?allerg(?:y|"
            rf"ies)\s+to\s+{LIST_RX}"
        ),
        "allergy allergies",
        h.simple("allergic_to", "fact", "item", many=True),
    ),
    Rule(
        "my_allergy",
        rf"{OWNER}\s+(?:(?:severe|bad|serious)\s+)?(?P<obj>[\w\-]+(?:\s+[\w\-]+)?)\s+allergy\b",
        "allergy",
        h.simple("allergic_to", "fact", "item", owner=True),
    ),
    Rule(
        "intolerant",
        rf"{HEAD}\s+(?P<obj>lactose|gluten|fructose|histamine|dairy|wheat)[\s-]+intolerant\b",
        "intolerant",
        h.simple("intolerant_to", "fact", "item"),
    ),
    Rule(
        "diet",
        (
            rf"{HEAD}\s+(?:an?\s+)?(?:strict\s+)?(?P<obj>vegetarian|vegan|pescatarian|pescetarian|gluten[\s-]free|"
            rf"keto|kosher|halal|teetotal|sober|paleo|plant[\s-]based)\b(?!\s+(?:food|restaurants?|recipes?|"
            rf"options?|places?|cafes?|dish(?:es)?|meals?|cook(?:ing|book)?))"
        ),
        "vegetarian vegan pescatarian pescetarian gluten keto kosher halal teetotal sober paleo plant",
        h.simple("diet", "fact", "item", need_be=True),
    ),
    Rule(
        "avoids",
        (
            rf"{HEAD_NONEG}\s+(?:avoid|avoids|(?:do|does)\s+not\s+(?:eat|drink)|cannot\s+(?:eat|drink|have)|"
            rf"can\s+not\s+(?:eat|drink)|never\s+(?:eat|drink)|no\s+longer\s+(?:eat|drink)|stopped\s+(?:eating|"
            rf"drinking)|gave\s+up)\s+{LIST_RX}"
        ),
        "avoid avoids eat drink eating drinking gave cannot",
        h.simple("avoids", "fact", "item", many=True),
    ),
    Rule(
        "speaks",
        rf"{HEAD}\s+(?:speak|speaks)(?!\s+(?:to|with|about|up|out|for|of|at|on|in)\b)\s+{LIST_RX}",
        "speak speaks",
        h.simple("speaks", "fact", "item", many=True),
    ),
    Rule(
        "fluent",
        rf"{HEAD}\s+(?:fluent|native|conversational|proficient)\s+in\s+{LIST_RX}",
        "fluent native conversational proficient",
        h.simple("speaks", "fact", "item", many=True),
    ),
    Rule(
        "plays",
        rf"{HEAD}\s+(?P<v>play|plays|played|playing)\s+(?:the\s+)?{LIST_RX}",
        "play plays played playing",
        h.simple("plays", "preference", "item", many=True),
    ),
    Rule(
        "uses",
        rf"{HEAD}\s+(?:use|uses|using)\s+(?!to\b){ITEM_RX}",
        "use uses using",
        h.simple("uses", "fact", "item"),
    ),
    # possessions and family
    Rule(
        "pet",
        (
            rf"{HEAD}\s+(?P<v>have|has|had|got|adopted|own|owns|owned|bought|rescued)\s+(?:a|an|one|two|three|four|"
            rf"five|\d+|another|some)?\s*(?:(?:new|little|big|small|old|young|cute|rescue|rescued|baby|black|white|"
            rf"brown|grey|gray|golden|ginger|tabby|senior|sweet|"
            rf"lovely)\s+){{0,2}}(?P<species>{PETS_RX})\b(?:(?:,\s*|\s+)(?:named|called)\s+(?P<pname>{NAME_ANY}))?"
        ),
        PET_WORDS,
        h.pet,
    ),
    Rule(
        "pet_named",
        (
            rf"{OWNER}\s+{ADJ}(?P<species>{PETS_RX})(?:'s\s+name\s+is|\s+is\s+(?:called|"
            rf"named))\s+(?P<pname>{NAME_ANY})"
        ),
        "name called named",
        h.pet,
    ),
    Rule(
        "has_family",
        (
            rf"{HEAD}\s+(?:have|has|had)\s+(?P<obj>(?:a|an|one|two|three|four|five|six|seven|\d+)\s+(?:(?:young|"
            rf"little|small|older|younger|big|grown|grown-up|twin|adult|beautiful|wonderful)\s+)?(?:kids?|children|"
            rf"child|sons?|daughters?|brothers?|sisters?|siblings?|grandchildren|grandkids|grandsons?|"
            rf"granddaughters?|twins|boys|girls|babies|baby))\b"
        ),
        "kid kids child children son sons daughter daughters brother brothers sister sisters sibling siblings grandchildren grandkids grandson grandsons granddaughter granddaughters twins boys girls babies baby",
        h.simple("has", "fact", "act"),
    ),
    Rule(
        "owns",
        rf"{HEAD}\s+(?P<v>own|owns|owned)\s+(?!(?:a|an|one|two|\d+)?\s*{PETS_RX}\b){ITEM_RX}",
        "own owns owned",
        h.simple("owns", "fact", "item", past_verbs=("owned",)),
    ),
    Rule(
        "rel_appos",
        rf"\bmy\s+(?P<ex>ex[\s-]+)?{ADJ}(?P<rel>{REL_RX}|{PETS_RX}),?\s+(?P<name>{NAME})",
        "my",
        h.relation,
    ),
    Rule(
        "rel_is_my",
        rf"(?P<name>{NAME})\s+(?:is|was)\s+(?:also\s+)?my\s+(?P<ex>ex[\s-]+)?{ADJ}(?P<rel>{REL_RX})\b",
        "my",
        h.relation,
    ),
    Rule(
        "rel_is_name",
        rf"{OWNER}\s+(?P<ex>ex[\s-]+)?{ADJ}(?P<rel>{REL_RX})\s+is\s+(?P<name>{NAME})(?=\s*(?:$|[,.;!?]|\s+(?:and|but)\b))",
        "is",
        h.relation,
    ),
    Rule(
        "rel_named",
        (
            rf"{OWNER}\s+(?P<ex>ex[\s-]+)?{ADJ}(?P<rel>{REL_RX})(?:'s\s+name\s+is|\s+is\s+(?:called|"
            rf"named))\s+(?P<name>{NAME_ANY})"
        ),
        "name called named",
        h.relation,
    ),
    Rule(
        "married",
        (
            rf"{HEAD}\s+(?:(?:happily|recently|just)\s+)?(?P<v>married|engaged|dating|seeing|divorced|"
            rf"separated)(?:\s+(?:to|from|with))?\s+(?P<name>{NAME}|my\s+\w+|(?:a|an)\s+\w+)"
        ),
        "married engaged dating seeing divorced separated",
        h.married,
    ),
    # contact
    Rule(
        "phone",
        (
            rf"{OWNER}\s+(?:(?:cell|mobile|home|work|office|personal|new)\s+)?(?:phone(?:\s+number)?|number|"
            rf"cell(?:\s+number)?|mobile(?:\s+number)?|telephone(?:\s+number)?)\s+is\s+(?P<obj>{PHONE})"
        ),
        "phone number cell mobile telephone",
        h.simple("phone", "fact", "item", owner=True),
    ),
    Rule(
        "email",
        rf"{OWNER}\s+(?:(?:work|personal|private|new|school)\s+)?e-?mail(?:\s+address)?\s+is\s+(?P<obj>{EMAIL})",
        "email e-mail mail",
        h.simple("email", "fact", "item", owner=True),
    ),
    Rule(
        "reach_email",
        rf"\b(?:reach|contact|email|e-mail|message|ping)\s+me\s+(?:at|on|via)\s+(?P<obj>{EMAIL})",
        "me",
        h.self_fact("email"),
    ),
    Rule(
        "reach_phone",
        rf"\b(?:reach|contact|text|call|ring|message|ping)\s+me\s+(?:at|on)\s+(?P<obj>{PHONE})",
        "me",
        h.self_fact("phone"),
    ),
    Rule(
        "website",
        (
            rf"{OWNER}\s+(?:personal\s+)?(?:website|site|blog|homepage|portfolio)\s+is\s+(?P<obj>{URL}|"
            rf"[\w\-]+(?:\.[\w\-]+)+)"
        ),
        "website site blog homepage portfolio",
        h.simple("website", "fact", "item", owner=True),
    ),
    Rule(
        "handle",
        (
            rf"{OWNER}\s+(?P<plat>twitter|instagram|insta|github|gitlab|linkedin|telegram|discord|tiktok|mastodon|"
            rf"bluesky|reddit|snapchat|youtube|twitch|steam|skype|slack)(?:\s+(?:handle|username|user\s*name|"
            rf"account|id|name|profile|tag))?\s+is\s+(?P<obj>@?[\w.\-]+)"
        ),
        "twitter instagram insta github gitlab linkedin telegram discord tiktok mastodon bluesky reddit snapchat youtube twitch steam skype slack",
        h.account,
    ),
    # events
    Rule(
        "went_to",
        (
            rf"{HEAD}\s+(?P<v>went|go|goes|been)\s+(?:back\s+)?to\s+(?!(?:see|visit|get|buy|pick|meet|watch|check|"
            rf"grab|do|have|make|take|play|eat|help|sleep|bed|be|the\s+bathroom|it|this|that)\b){ENT_RX}"
        ),
        "went go goes been",
        h.went,
    ),
    Rule(
        "visited",
        rf"{HEAD}\s+(?:visited|toured|explored)\s+{ENT_RX}",
        "visited toured explored",
        h.simple("visited", "event"),
    ),
    Rule(
        "attended",
        rf"{HEAD}\s+(?:attended|attend|attends)\s+{ENT_RX}",
        "attended attend attends",
        h.simple("attended", "event"),
    ),
    Rule(
        "met",
        (
            rf"{HEAD}\s+(?:met|met\s+up\s+with|ran\s+into|bumped\s+into|hung\s+out\s+with|"
            rf"caught\s+up\s+with)\s+{ENT_RX}"
        ),
        "met ran bumped hung caught",
        h.simple("met", "event"),
    ),
    Rule(
        "bought",
        (
            rf"{HEAD}\s+(?:bought|purchased|ordered|got\s+(?:myself\s+)?(?:a|an)\s+new)\s+(?!(?:a|an|one|"
            rf"two)?\s*{PETS_RX}\b){ITEM_RX}"
        ),
        "bought purchased ordered got",
        h.simple("bought", "event", "item"),
    ),
    # feelings and intentions
    Rule(
        "emotion",
        rf"{HEAD}\s+(?:(?P<feel>feel|feels|felt|feeling)\s+)?{INTENS_RX}(?P<emo>{EMO_RX})\b",
        EMOTION_WORDS,
        h.emotion,
    ),
    Rule(
        "plan",
        (
            rf"(?<!\bif\s)(?<!whether\s){HEAD_NONEG}(?P<neg1>\s+(?:do\s+not|does\s+not|am\s+not|is\s+not|are\s+not|"
            rf"never))?\s+{MODAL_RX}(?P<neg2>\s+not|\s+never)?\s+{ACT_RX}"
        ),
        "will shall going plan plans planning intend intends about have has need needs must hope hopes hoping want wants would thinking aim scheduled supposed expect might should considering",
        h.plan,
    ),
    Rule(
        "remind",
        rf"\bremind\s+me\s+(?:to|about|that)\s+{ACT_RX}",
        "remind",
        h.plan,
    ),
    Rule(
        "remember_to",
        (
            rf"^(?:(?:ok(?:ay)?|so|also|and|oh|hey|btw|please|pls|just)[,!]?\s+)*(?:remember|do\s+not\s+forget|"
            rf"never\s+forget)\s+to\s+{ACT_RX}"
        ),
        "remember forget",
        h.plan,
    ),
    Rule(
        "have_event",
        (
            rf"{HEAD_NONEG}\s+(?:have|has|got)\s+(?:an?|my|the|another|one\s+more|"
            rf"our)\s+(?P<obj>(?:[\w'\-]+\s+){{0,3}}?{EVENT_NOUN_RX})\b"
        ),
        EVENT_WORDS,
        h.plan,
    ),
    Rule(
        "progressive",
        (
            rf"{HEAD}\s+(?P<obj>(?:flying|driving|leaving|heading|travell?ing|moving|relocating|meeting|seeing|"
            rf"visiting|starting|going|coming|returning|hosting|attending|taking|having|getting|playing|running|"
            rf"doing|working|celebrating|throwing|cooking|picking|catching|joining|presenting|"
            rf"launching)\b[^,;!?()]*)"
        ),
        "flying driving leaving heading traveling travelling moving relocating meeting seeing visiting starting going coming returning hosting attending taking having getting playing running doing working celebrating throwing cooking picking catching joining presenting launching",
        h.progressive,
    ),
    # knowledge
    Rule(
        "role_of",
        (
            rf"(?P<subj>{NAME})\s+(?:is|"
            rf"was)\s+(?:also\s+)?the\s+(?P<role>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){{0,2}}?)\s+of\s+{ENT_RX}"
        ),
        "of",
        h.knowledge_of,
    ),
    Rule(
        "is_a",
        rf"(?P<subj>{NAME})\s+(?P<v>is|was)\s+(?:an?)\s+{ITEM_RX}",
        "a an",
        h.is_a,
    ),
    Rule(
        "located_in",
        rf"(?P<subj>{NAME})\s+(?:is|are)\s+(?:located|situated)\s+in\s+{ENT_RX}",
        "located situated",
        h.simple("located_in", "knowledge"),
    ),
)


def run_rules(sentence: str, words: frozenset[str], ctx: Ctx) -> list[RawTriple]:
    """All triples the rules find in one normalised sentence, deduplicated (first rule wins)."""
    seen: set[tuple[str, str, str]] = set()
    out: list[RawTriple] = []
    for rule in RULES:
        if rule.gate.isdisjoint(words):
            continue
        for m in rule.regex.finditer(sentence):
            for triple in rule.handler(m, ctx):
                key = (triple.subject.lower(), triple.predicate, triple.object.lower())
                if key not in seen:
                    seen.add(key)
                    out.append(triple)
    return out
