"""The rule table of the injection screener (see :mod:`neusym.governance.screening` for how it is scored).

Each rule names one *kind* of evidence. Weights are probabilities-ish: a rule at >= 0.5 quarantines on its own, a
rule under 0.5 needs company. ``agent_directed`` marks imperatives addressed to the assistant, which are what
indirect injection through tool output looks like; ``unless_first_person`` is the weight when the sentence is about
the speaker ("always suggest vegetarian options *for me*" is a preference, "always recommend X" is an attack).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from neusym.language import regex as rx

__all__ = ["RULES", "Rule"]

_I = re.IGNORECASE | re.MULTILINE


@dataclass(frozen=True)
class Rule:
    name: str
    category: str
    pattern: rx.TextPattern
    weight: float
    agent_directed: bool = False
    unless_first_person: float | None = None


def _r(pattern: str) -> rx.TextPattern:
    return rx.compile(pattern, _I)


_START = r"(?:^|[.!?:;,\n\"'(\]>\-]\s*|\b(?:please|now|just|and|then|so|also)\s+)"
_OBJ_STRONG = (r"(?:(?:all|any|every|each)\s+(?:of\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier|preceding|"
               r"original|initial|former|old)?\s*|(?:the|your)\s+(?:previous|prior|above|earlier|preceding|original|"
               r"initial|system|safety|developer)\s+|your\s+|previous\s+|prior\s+)"
               r"(?:instructions?|prompts?|rules|guidelines|directives?|constraints|guardrails|programming|"
               r"policies|restrictions|orders|context)")
_AI = (r"(?:the\s+assistant|the\s+ai|the\s+model|the\s+bot|the\s+chatbot|the\s+agent|ai\s+(?:assistants?|models?|"
       r"agents?)|chatgpt|claude|gpt|llms?|language\s+models?)")
_AI_CONFIG = (r"(?:instructions?|guidelines|guidance|rules|programming|system\s+prompt|prompt|training|persona|policy|"
              r"policies|directives?|constraints|guardrails|memory|configuration|filters|restrictions|creators?|"
              r"developers?|safety\s+(?:team|settings|rules))")
_META = (r"(?:instructions?|guidelines|guidance|rules|programming|prompt|directives?|policy|policies|training|"
         r"restrictions|filters|guardrails)")
_SET_ASIDE = (r"(?:ignore|disregard|forget|override|bypass|discard|abandon|drop|ditch|scrap|skip|toss|void|suspend|"
              r"(?:set|put|leave|cast|push)\s+aside|throw\s+(?:out|away))")
_HENCEFORTH = (r"(?:from\s+now\s+on|from\s+this\s+(?:point|moment)\s+(?:on|forward)|from\s+here\s+on|henceforth|"
               r"going\s+forward|starting\s+(?:now|today)|for\s+the\s+rest\s+of\s+(?:the|this)\s+"
               r"(?:session|conversation|chat))")
_URL = (r"(?:[a-z][a-z0-9+.\-]*://|www\.|[\w.+-]+@[\w-]+\.[\w.]+|[\w-]+(?:\.[\w-]+)*\.(?:com|net|org|io|xyz|biz|"
        r"info|example|ru|cn|top|click|link)\b)")
_PEOPLE = (r"(?:anyone|someone|somebody|anybody|a\s+user|users|the\s+user|people|customers|a\s+customer|they|"
           r"visitors|a\s+person)")

RULES: tuple[Rule, ...] = (
    # ---------------------------------------------------------------- instruction override
    Rule("override_instructions", "override",
         _r(_START + r"(?:ignore|disregard|forget|override|bypass|discard|abandon|drop)\b[\s,:]+" + _OBJ_STRONG),
         1.0, True),
    Rule("override_instructions_embedded", "override", _r(r"\b(?:ignore|disregard|override|bypass)\s+" + _OBJ_STRONG),
         0.3, True),
    Rule("ai_config_directive", "override",
         _r(r"\b(?:stop\s+following|don'?t\s+follow|do\s+not\s+follow|no\s+longer\s+follow|stop\s+obeying|reset|"
            r"wipe|erase|replace|rewrite|" + _SET_ASIDE[3:-1] + r")\s+(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:\w+\s+){0,2}"
            r"(?:(?:from|by|of)\s+)?your\s+(?:\w+\s+)?" + _AI_CONFIG + r"\b"), 0.85, True),
    Rule("set_aside_guidance", "override",
         _r(r"\b" + _SET_ASIDE + r"\s+(?:whatever|all|any|the|every)\s+(?:\w+\s+)?" + _META +
            r"\b.{0,30}\b(?:you|earlier|before|previously|received|given)\b"), 0.85, True),
    Rule("meta_voided", "override",
         _r(r"\b" + _META + r"\s+(?:is|are|has\s+been|have\s+been)\s+(?:now\s+)?(?:void|null|invalid|obsolete|"
            r"cancell?ed|revoked|lifted|suspended|outdated|no\s+longer\s+(?:valid|apply|applies|in\s+effect))"), 0.85,
         True),
    Rule("your_meta", "override",
         _r(r"\byour\s+(?:\w+\s+)?(?:instructions|guidelines|guidance|programming|system\s+prompt|directives|"
            r"training|creators?|developers|restrictions|filters|guardrails|memory)\b"), 0.45, True, 0.3),
    Rule("config_you_were_given", "override",
         _r(r"\b(?:ignore|disregard|forget|drop|discard)\b.{0,30}\b" + _AI_CONFIG +
            r"\s+(?:that\s+)?you\s+(?:were|have\s+been|'ve\s+been)\s+(?:given|told|taught|trained|programmed)"),
         0.9, True),
    Rule("ignore_the_above", "override",
         _r(r"\b(?:ignore|disregard|forget)\s+(?:everything\s+|all\s+|what(?:ever)?\s+(?:is|was)\s+(?:written\s+)?)?"
            r"(?:above|before\s+this|prior\s+to\s+this)\b"), 0.9, True),
    Rule("forget_training", "override",
         _r(r"\bforget\s+(?:everything|all|what)\s+(?:you|you've|you\s+were|you\s+have)\s+(?:been\s+)?"
            r"(?:told|taught|learned|learnt|instructed|know)"), 1.0, True),
    Rule("supersede_instructions", "override",
         _r(r"\b(?:instructions?|rules|directives?|this\s+message)\b.{0,40}\b(?:override|supersede|replace|"
            r"take\s+precedence\s+over)\b.{0,40}\b(?:previous|prior|earlier|anything|all|system|your)"), 1.0, True),
    Rule("new_instructions_header", "override",
         _r(r"\b(?:new|updated|revised|real|true|actual)\s+(?:system\s+)?(?:instructions?|rules|system\s+prompt|"
            r"directives?|policy)\s*:"), 0.8, True),
    Rule("true_instructions", "override",
         _r(r"\byour\s+(?:true|real|actual|new|secret|hidden|updated)\s+(?:instructions?|rules|task|purpose|goal|"
            r"directive|mission|orders|programming)\b|\bthe\s+(?:true|real|hidden|secret)\s+instructions\b"),
         0.8, True),
    Rule("foreign_override", "override",
         _r(r"\b(?:ignora|ignorez|ignorer|ignoriere\w*|olvid\w*|oubli\w*|vergiss\w*|dimentic\w*|esque\w*)\b\W+"
            r"(?:\w+\W+){0,3}(?:instruc\w*|anweisung\w*|istruzion\w*|instru\u00e7\w*|consign\w*|regeln|r\u00e8gles)|"
            r"\bignore\b\W+(?:\w+\W+){0,3}(?:instrucc\w*|instru\u00e7\w*|istruzion\w*|anweisung\w*)"), 0.9, True),
    # ---------------------------------------------------------------- role / system impersonation
    Rule("chat_template_tokens", "impersonation",
         _r(r"<\|(?:im_start|im_end|system|assistant|user|endoftext|eot_id|start_header_id)\|>|\[/?INST\]|"
            r"<</?SYS>>|###\s*(?:instruction|system)\s*:?|"
            # our own frame's delimiter (screening reads the visible form: fullwidth and look-alikes fold to it)
            r"</?\s*neusym[\s_-]*memories\s*>"), 0.9, True),
    Rule("role_header_directive", "impersonation",
         _r(r"^\s*[\[(<#*]*\s*(?:system|assistant|admin|administrator|developer|root|operator)\s*[\])>:]+"
            r"[^\n]{0,200}\b(?:you|must|always|never|ignore|override|instruction|policy|verified|authori[sz]ed|"
            r"grant|access|mode|share|reveal|disable|permission|privileges?|i\s+will)\b"), 0.9, True),
    Rule("role_header", "impersonation",
         _r(r"^\s*[\[(<#*]*\s*(?:system|assistant|admin|administrator|developer)\s*[\])>:]"), 0.3, True),
    Rule("authority_claim", "impersonation",
         _r(r"\b(?:message|notice|instruction|update)\s+from\s+(?:the\s+)?(?:system|administrator|developers?|"
            r"openai|anthropic|your\s+(?:creators?|developers?|admins?))\b|\b(?:this\s+is|i\s+am|i'm)\s+your\s+"
            r"(?:system|developer|creator|administrator|admin|operator|owner|master)\b|\bthis\s+is\s+the\s+(?:system|"
            r"developer|administrator|admin)\b|\b(?:system|developer|admin|administrator)\s+speaking\b|"
            r"\bas\s+(?:the|your)\s+(?:system|developer|administrator|admin|creator|operator|owner)\s*,"), 0.7, True),
    Rule("grant_authority", "impersonation",
         _r(r"\bi\s+(?:hereby\s+)?(?:authori[sz]e|order|command|instruct)\s+you\s+to\b|\bobey\s+(?:only\s+)?"
            r"(?:me|my|this|these|the\s+following)\b"), 0.45, True),
    Rule("system_message", "impersonation",
         _r(r"\b(?:system|admin|administrator|developer|security)\s+(?:message|notice|instruction|note|alert|"
            r"announcement|command)s?\b"), 0.45, True, 0.2),
    Rule("privileged_approval", "impersonation",
         _r(r"\b(?:developer|developers|admin|administrator|system|safety\s+team|operator|creators?)\s+(?:has|have)?"
            r"\s*(?:approved|authori[sz]ed|enabled|allowed|signed\s+off|unlocked|permitted)\b"), 0.4, True, 0.15),
    Rule("respond_as_privileged", "impersonation",
         _r(r"\b(?:respond|reply|answer|act|speak)\s+as\s+(?:the\s+|a\s+|an\s+)?(?:system|administrator|admin|"
            r"developer|root|operator)\b"), 0.6, True),
    Rule("grant_access", "impersonation",
         _r(r"\bgrant\s+(?:me|us|this\s+user|them)\s+(?:full\s+|admin\s+|root\s+|unlimited\s+)?(?:permissions?|"
            r"access|rights|privileges)\b|\btreat\s+(?:every|all|each|my)\s+(?:\w+\s+)?(?:requests?|messages?)\s+"
            r"(?:from\s+me\s+)?as\s+(?:coming\s+from\s+)?(?:an?\s+)?(?:admin|system|developer|root)"), 0.7, True),
    Rule("as_system_message", "impersonation",
         _r(r"\b(?:treat|read|interpret|process)\s+(?:the\s+next|this|the\s+following)\s+(?:\w+\s+)?as\s+"
            r"(?:an?\s+)?(?:system|admin|developer)\b"), 0.8, True),
    Rule("named_bot_persona", "impersonation",
         rx.compile(r"\b[Yy]ou(?:'re|\s+are)\s+(?:now\s+)?[A-Z]\w*(?:Bot|GPT|AI|Mode)\b|\b(?:[Ss]witch|[Cc]hange)\s+"
                    r"(?:your\s+)?personalit(?:y|ies)\b|\byou(?:'re|\s+are)\s+(?:now\s+)?(?:free|unbound|"
                    r"liberated|unleashed)\b(?!\s+to\s+(?:go|leave|come|join))", re.IGNORECASE), 0.6, True),
    Rule("answer_anything", "impersonation",
         _r(r"\b(?:answer|say|do|tell\s+me)\s+(?:absolutely\s+)?(?:anything|everything)\s+(?:i|you're|you\s+are|"
            r"without|no\s+matter)"), 0.45, True),
    Rule("system_override", "impersonation",
         _r(r"\b(?:system|security|root|kernel|master)\s+override\b|\[\[\s*(?:system|admin|override)[^\]]*\]\]"),
         0.7, True),
    Rule("persona_switch", "impersonation",
         _r(r"\byou(?:'re|\s+are)\s+(?:now\s+|no\s+longer\s+)(?:a\s+|an\s+|the\s+|in\s+)?(?:DAN|unrestricted|unfiltered|"
            r"uncensored|jailbroken|evil|developer|admin|root|free|different\s+(?:ai|assistant)|(?:\w+\s+)?(?:ai|"
            r"assistant|model|bot|chatbot|system)\b)|\byou(?:'re|\s+are)\s+(?:now\s+)?(?:an?\s+)?(?:\w+\s+)?"
            r"(?:ai|assistant|model|bot)\s+(?:with|without)\s+(?:zero|no|any)\s+(?:rules|restrictions|limits|filters)"),
         0.9, True),
    Rule("adopt_persona", "impersonation",
         _r(r"\b(?:adopt|assume|take\s+on|switch\s+to|become)\s+(?:the\s+|a\s+|an\s+)?(?:new\s+)?(?:persona|identity|"
            r"character|role)\s+of\b"), 0.5, True, 0.1),
    Rule("pretend_unrestricted", "impersonation",
         _r(r"\b(?:pretend|act|behave|roleplay|respond)\s+(?:to\s+be\s+|as\s+(?:if\s+you\s+were\s+)?|like\s+)"
            r"(?:an?\s+)?(?:\w+\s+){0,3}(?:ai|assistant|model|bot|version\s+of\s+yourself)\b.{0,40}"
            r"(?:no|without|free\s+of)\s+(?:any\s+)?(?:restrictions|filters|limits|rules|guidelines)"), 0.9, True),
    Rule("unrestricted_model", "impersonation",
         _r(r"\b(?:unrestricted|unfiltered|uncensored|jailbroken)\s+(?:ai|assistant|model|mode|version|bot|llm|"
            r"output|responses?|answers?|access)\b"),
         0.6, True),
    Rule("dan_mode", "impersonation", rx.compile(r"\bDAN\b"), 0.6, True),
    Rule("jailbreak_mode", "impersonation",
         _r(r"\bdo\s+anything\s+now\b|\bjailbr(?:eak|oken)\s+(?:mode|prompt|activated|enabled|ai|assistant|"
            r"model)\b|\bdeveloper\s+mode\b"), 0.6, True),
    Rule("privilege_phrase", "impersonation",
         _r(r"\b(?:admin(?:istrator)?|security|root|sudo)\s+(?:override|mode|access)\b|\bdebug\s+mode\b"), 0.3, True),
    # ---------------------------------------------------------------- persistent behaviour injection / promotion
    Rule("always_promote", "behaviour",
         _r(r"\b(?:always|only|" + _HENCEFORTH[3:-1] + r"|every\s+time|whenever|in\s+every\s+(?:answer|response|"
            r"reply))\b.{0,40}\b(?:recommend|suggest|promote|endorse|advertise|push|praise|mention|link\s+to|"
            r"refer\s+(?:people|users|them)\s+to|redirect|send\s+(?:people|users|them))\b"), 0.85, True, 0.3),
    Rule("promote_only", "behaviour",
         _r(r"\b(?:recommend|suggest|promote|endorse|advertise)\s+only\b|\bonly\s+(?:recommend|promote|endorse)\b|"
            r"\b(?:promote|advertise|endorse|recommend)\b.{0,40}\bto\s+(?:every|all|each)\s+(?:users?|customers?|"
            r"visitors?)\b"), 0.7, True, 0.15),
    Rule("henceforth_directive", "behaviour",
         _r(_HENCEFORTH + r",?\s+(?:you\b|always|never|respond|answer|reply|tell|say|act|behave|treat|agree|"
            r"recommend|refuse|include|add)"), 0.55, True, 0.1),
    Rule("never_mention", "behaviour",
         _r(r"\b(?:you\s+(?:must|should|will|shall)\s+)?never\s+(?:mention|reveal|say|disclose|admit|tell)\b"),
         0.6, True, 0.05),
    Rule("whenever_others_ask", "behaviour",
         _r(r"\b(?:whenever|when|if)\s+" + _PEOPLE + r"\s+(?:asks?|mentions?|talks?|searches?|wants?)\b.{0,80}"
            r"\b(?:say|tell|respond|answer|reply|recommend|claim|state|send|suggest|push)\b"), 0.8, True, 0.15),
    Rule("when_asked", "behaviour",
         _r(r"\b(?:when|whenever|if)\s+(?:you(?:'re|\s+are)\s+|you\s+get\s+)?asked\s+(?:about|for|what|how|whether|"
            r"if)\b.{0,80}\b(?:say|tell|respond|answer|reply|claim|state|recommend)\b"), 0.75, True, 0.2),
    Rule("broadcast_reply", "behaviour",
         _r(r"\b(?:respond|reply|answer)\s+(?:to\s+)?(?:every|all|each|any)\s+(?:future\s+|subsequent\s+|incoming\s+)?"
            r"(?:quer(?:y|ies)|questions?|messages?|requests?|prompts?|users?)\b"), 0.7, True, 0.1),
    Rule("tell_all_users", "behaviour",
         _r(r"\btell\s+(?:all|other|every)\s+users?\b|\btell\s+(?:everyone|anyone|anybody)\s+who\s+asks\b"),
         0.8, True),
    Rule("tell_people_that", "behaviour",
         _r(r"\b(?:tell|inform|warn|convince|assure)\s+(?:all\s+)?(?:people|users|everyone|everybody|customers|"
            r"others|visitors|readers)\s+(?:that|to)\b"), 0.5, True, 0.1),
    Rule("future_conversations", "behaviour",
         _r(r"\b(?:in|for|during)\s+(?:all|every|each)\s+(?:future\s+)?(?:conversations?|responses?|answers?|"
            r"sessions?|replies|chats)\b"), 0.6, True, 0.1),
    Rule("you_must_always", "behaviour",
         _r(r"\b(?:you|" + _AI[3:-1] + r"|assistants?)\b[^.!?\n]{0,30}\b(?:must|should|shall|will|need\s+to|"
            r"have\s+to|are\s+required\s+to)\s+(?:now\s+|from\s+now\s+on\s+)?(?:always|never|only|tell|say|promote|"
            r"recommend|store|share|send)\b"), 0.6, True, 0.1),
    Rule("ai_modal", "behaviour",
         _r(r"\b" + _AI + r"\s+(?:must|should|shall|will|is\s+to|are\s+to|needs?\s+to|has\s+to|have\s+to|"
            r"is\s+required\s+to|are\s+required\s+to)\b"), 0.35, True, 0.1),
    Rule("address_the_ai", "behaviour",
         _r(r"\b(?:(?:note|message|memo|instructions?)\s+(?:to|for)\s+(?:the\s+|any\s+)?(?:ai|assistant|llm|bot)"
            r"(?:\s+model)?|ai\s+(?:assistants?|models?|agents?)\s+"
            r"reading\s+this|(?:dear|attention|hey)\s+(?:ai|assistant|chatbot|llm))\b"), 0.8, True),
    Rule("vocative_ai", "behaviour",
         _r(r"(?:^|[.!?\n]\s*)(?:ai|assistant|chatbot|bot|llm)\s*,|\b(?:for|to)\s+the\s+(?:ai|assistant|model|llm|"
            r"agent|bot)\s*[:,]"), 0.45, True),
    Rule("scope_all", "behaviour",
         _r(r"\b(?:for|to)\s+(?:all|every|each)\s+users?\b|\b(?:every|each|any)\s+(?:future\s+)?(?:reply|replies|"
            r"response|responses|answer|answers|request|requests|output)\b|\bno\s+matter\s+(?:the|what)\s+"
            r"(?:question|topic|they\s+ask|is\s+asked)|\bregardless\s+of\s+(?:the\s+)?(?:topic|question|context)\b"),
         0.35, True, 0.1),
    Rule("link_in_replies", "behaviour",
         _r(r"\b(?:reply|replies|response|responses|answer|answers|message|output)\b.{0,40}" + _URL), 0.3, True, 0.1),
    Rule("memory_must_say", "behaviour",
         _r(r"\b(?:your|the)\s+memory\s+(?:must|should|will|shall)\s+(?:now\s+)?(?:say|state|show|record|contain|"
            r"reflect)\b|\bstore\s+this\s+(?:fact\s+)?for\s+(?:all|every)\s+users?\b"), 0.7, True),
    Rule("stealth", "behaviour",
         _r(r"\b(?:secretly|covertly|silently|quietly|without\s+(?:telling|informing|letting)\s+(?:the\s+user|them|"
            r"anyone))\b"), 0.3, True, 0.0),
    Rule("referral_link", "behaviour", _r(r"\b(?:referral|affiliate|tracking)\s+(?:links?|codes?|urls?)\b"),
         0.3, False, 0.05),
    Rule("standing_order", "behaviour",
         _r(r"\b(?:save|store|remember|record|keep)\b.{0,30}\b(?:as\s+)?(?:a\s+)?(?:permanent|core|system|"
            r"standing|global)\s+(?:rule|instruction|directive|order|policy)\b|\bthis\s+is\s+a\s+standing\s+order\b"),
         0.7, True),
    Rule("remember_assistant_must", "behaviour",
         _r(r"\bremember\b.{0,30}\b(?:the\s+assistant|the\s+ai|you)\s+(?:must|should|shall|will\s+always|"
            r"are\s+to)\b"), 0.6, True),
    Rule("memory_write", "behaviour",
         _r(r"\bmemory\s+(?:write|update|injection|entry)\s*:|\b(?:update|overwrite|modify|rewrite|alter)\s+"
            r"(?:all\s+)?(?:the\s+)?(?:user'?s?\s+)?(?:records|memories|memory\s+store|database)\b"),
         0.5, True, 0.1),
    Rule("imperative_always", "behaviour", _r(_START + r"(?:always|never)\s+\w+"), 0.15, False),
    # ---------------------------------------------------------------- exfiltration
    Rule("exfiltrate", "exfiltration",
         _r(r"\b(?:send|forward|email|e-mail|post|upload|leak|exfiltrate|transmit|share|copy|pass\s+along|"
            r"hand\s+over)\b.{0,60}\b(?:memories|memory\s+store|conversations?|chat|notes?|files?|documents?|"
            r"chat\s+(?:history|logs?)|logs?|transcripts?|passwords?|"
            r"credentials|api\s+keys?|tokens?|secrets?|system\s+prompt|user\s+data|personal\s+data|everything)\b"
            r".{0,60}\b(?:to|at)\s+" + _URL), 1.0, True),
    Rule("harvest_data", "exfiltration",
         _r(r"\b(?:output|dump|extract|collect|harvest|exfiltrate|gather)\s+(?:all\s+)?(?:of\s+)?(?:the\s+)?"
            r"(?:user'?s?|their|stored|saved|every|people'?s)\s+(?:\w+\s+)?(?:addresses|passwords|credentials|"
            r"memories|secrets|contacts|card\s+numbers|messages|history|data)\b|\bcollect\s+(?:credit\s+card|"
            r"card|social\s+security|bank)\s+(?:numbers|details)\b"), 0.7, True, 0.1),
    Rule("reveal_prompt", "exfiltration",
         _r(r"\b(?:reveal|print|output|repeat|show|display|dump|leak|disclose|list|recite)\b[\s\w]{0,20}?\b(?:your|"
            r"the)\s+(?:system\s+prompt|initial\s+prompt|hidden\s+instructions|original\s+instructions|"
            r"configuration|memory\s+store|instructions\s+you\s+were\s+given)\b|\b(?:your|the)\s+(?:system|"
            r"initial)\s+prompt\b.{0,30}\b(?:verbatim|word\s+for\s+word)|\brepeat\s+the\s+(?:text|words)\s+above\b|"
            r"\bevery\s+instruction\s+you\s+were\s+given\b"), 0.8, True),
    Rule("reveal_sensitive", "exfiltration",
         _r(r"\b(?:reveal|disclose|leak|expose|share|list|print|output|dump)\s+(?:all\s+|every\s+|any\s+)?(?:of\s+)?"
            r"(?:the\s+)?(?:saved\s+|stored\s+|private\s+|user\s+|users'?\s+)*(?:passwords|secrets|credentials|"
            r"private\s+data|personal\s+data|api\s+keys|tokens|hidden\s+prompt|private\s+(?:notes|messages))\b"),
         0.7, True, 0.15),
    Rule("markdown_beacon", "exfiltration", _r(r"!\[[^\]]*\]\(\s*https?://[^)\s]*[?&][^)\s]*=[^)]*\)"), 0.7, True),
    Rule("visit_url_with_data", "exfiltration",
         _r(r"\b(?:visit|visiting|fetch|fetching|call|load|open|request)\s+" + _URL + r"\S*[?&]\w*=\s*(?:$|[\s{$])"),
         0.5, True),
    # ---------------------------------------------------------------- safety disabling
    Rule("disable_safety", "safety",
         _r(r"\b(?:disable|turn\s+off|switch\s+off|bypass|remove|deactivate|suspend|lift|ignore|forget|drop|skip)\s+"
            r"(?:all\s+|any\s+)?"
            r"(?:your\s+|the\s+|of\s+your\s+)?(?:safety|content|ethical|moderation)\s*(?:filters?|filtering|"
            r"guidelines|guardrails|restrictions|policies|rules|moderation|checks)?\b|\b(?:safety|content)\s+"
            r"(?:guidelines|filters?|policies|rules)\s+(?:are|is)\s+(?:suspended|disabled|lifted|off)\b|"
            r"\bbypass\s+(?:all\s+)?(?:the\s+)?guardrails\b|\bignore\s+the\s+content\s+polic(?:y|ies)\b"), 0.9, True),
    Rule("no_restrictions", "safety",
         _r(r"\b(?:you\s+have\s+no|without\s+any|with\s+(?:no|zero)|free\s+from|no\s+longer\s+bound\s+by)\s+"
            r"(?:\w+\s+)?(?:restrictions|filters|limitations|censorship|rules|ethical\s+guidelines|guidelines)\b"),
         0.55, True, 0.2),
    # ---------------------------------------------------------------- hidden markup
    Rule("html_comment", "hidden", _r(r"<!--.*?-->"), 0.2, False),
    Rule("hidden_style", "hidden",
         _r(r"<[^>]{0,300}?style\s*=\s*[\"'][^\"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|"
            r"opacity\s*:\s*0|color\s*:\s*(?:white|#fff\b|#ffffff))"), 0.6, False),
    Rule("script_markup", "hidden", _r(r"<\s*(?:script|iframe|object|embed)\b|javascript:"), 0.7, False),
    Rule("system_tag", "impersonation", _r(r"<\s*/?\s*(?:system|sys|instructions?|admin)\s*>"), 0.7, True),
)
