"""Reading text has one owner, ``neusym/language/`` (issue #29): no other module compiles a pattern over memory or
query text or holds a word list of 20 entries or more.

Pure: reads the package's source with ``ast``. Patterns over things that are not memory or query text (Cypher
and HTML templates, command-line arguments) are allowed by name. Modules that still read text themselves are
listed in ``PENDING`` with what they hold today: a count may only go down, a module leaves the list when it reaches
zero, and nothing new may join it. When ``PENDING`` is empty the rule holds everywhere.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "neusym"

_REGEX_CALLS = {"compile", "search", "match", "fullmatch", "sub", "subn", "findall", "finditer", "split"}
_REGEX_MODULES = {"re", "rx", "re2", "regex"}

NOT_TEXT = {
    "neusym/cli/_base.py": "command-line arguments (durations, numbers), not memory or query text",
    "neusym/visual/html.py": "the page template's placeholders",
    "neusym/symbolic/guard.py": "Cypher keywords the read-only guard refuses",
    "neusym/cli/_memory.py": "a JSON record's field names (a dict display)",
    "neusym/record.py": "the memory id charset (an identifier, not text)",
    "neusym/symbolic/write_rules.py": "our own Cypher statements (which write rules they follow)",
    "neusym/facade.py": "the deprecation table (old attribute name -> new door), not text",
    "neusym/symbolic/executors/aof.py": "the embedded server's AOF file names and manifest lines",
    "neusym/symbolic/executors/embedded.py": "the embedded server's own log lines (why a start failed)",
}

# module: (pattern calls, word lists) still held outside neusym/language/ (may only shrink)
PENDING: dict[str, tuple[int, int]] = {
    "neusym/embeddings/hashing.py": (1, 0),
    "neusym/extraction/_clauses.py": (3, 29),
    "neusym/extraction/_cues.py": (15, 1),
    "neusym/extraction/_discourse.py": (9, 0),
    "neusym/extraction/_grammar.py": (9, 4),
    "neusym/extraction/_handlers.py": (2, 1),
    "neusym/extraction/_lexicon.py": (3, 6),
    "neusym/extraction/_rules.py": (0, 3),
    "neusym/extraction/_text.py": (8, 7),
    "neusym/extraction/base.py": (5, 0),
    "neusym/extraction/dates.py": (4, 0),
    "neusym/extraction/entities.py": (7, 0),
    "neusym/extraction/rules.py": (3, 0),
    "neusym/extraction/semantic.py": (0, 1),
    "neusym/extraction/vocabulary.py": (3, 3),
    "neusym/governance/asks.py": (26, 0),
    "neusym/governance/attributes.py": (2, 0),
    "neusym/governance/constraint_vocab.py": (2, 2),
    "neusym/governance/contradictions.py": (56, 9),
    "neusym/governance/dedup.py": (3, 0),
    "neusym/governance/directives.py": (9, 1),
    "neusym/governance/forgetting.py": (17, 2),
    "neusym/governance/injection_rules.py": (3, 0),
    "neusym/governance/intents.py": (12, 1),
    "neusym/governance/screening.py": (20, 2),
    "neusym/governance/successors.py": (3, 1),
    "neusym/governance/topics.py": (9, 17),
    "neusym/governance/ttl.py": (30, 4),
    "neusym/governance/update_lexicon.py": (3, 2),
    "neusym/governance/update_model.py": (10, 5),
    "neusym/importing.py": (4, 0),
    "neusym/knowledge/isa.py": (1, 1),
    "neusym/llm.py": (1, 0),
    "neusym/prompting.py": (3, 0),
    "neusym/reflection/extractive.py": (2, 0),
    "neusym/reflection/quality.py": (1, 0),
    "neusym/reflection/rewrite.py": (4, 0),
    "neusym/retrieval/lexical.py": (1, 1),
    "neusym/retrieval/pipeline.py": (1, 0),
    "neusym/retrieval/temporal.py": (7, 0),
    "neusym/symbolic/dialects.py": (1, 0),
}


def _is_word(value: object) -> bool:
    """A natural-language word or phrase (what a word list holds), not an identifier or a field name."""
    if not isinstance(value, str) or not value.strip():
        return False
    return all(part.replace("'", "").replace("-", "").replace("\u2019", "").isalpha() for part in value.split())


def _word_list(node: ast.AST) -> bool:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return sum(isinstance(e, ast.Constant) and _is_word(e.value) for e in node.elts) >= 20
    if isinstance(node, ast.Dict):
        return sum(isinstance(k, ast.Constant) and _is_word(k.value) for k in node.keys) >= 20
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # "a b c ...".split() / words_of("...")
        words = node.value.split()
        return len(words) >= 20 and node.value == node.value.lower() and all(_is_word(w) for w in words)
    return False


def holdings(path: Path) -> tuple[int, int]:
    """(pattern calls over text, word lists of >= 20 entries) in one module's source."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    exported = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)}
    calls = lists = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _REGEX_CALLS \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in _REGEX_MODULES:
            calls += 1
        elif id(node) not in exported and _word_list(node):
            lists += 1
    return calls, lists


def _census() -> dict[str, tuple[int, int]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("neusym/language/") or rel in NOT_TEXT:
            continue
        held = holdings(path)
        if held != (0, 0):
            out[rel] = held
    return out


def test_no_module_outside_language_reads_text_on_its_own() -> None:
    census = _census()
    new = {m: h for m, h in census.items() if m not in PENDING}
    assert new == {}, "read text through neusym.language (patterns and word lists live there): " + repr(new)
    grown = {m: (h, PENDING[m]) for m, h in census.items() if m in PENDING and (h[0] > PENDING[m][0]
                                                                               or h[1] > PENDING[m][1])}
    assert grown == {}, "a pending module took on more text reading: " + repr(grown)


def test_pending_list_is_current() -> None:
    """A module that moved its reading into language/ leaves PENDING (and a lower count is written down)."""
    census = _census()
    stale = {m: (PENDING[m], census.get(m, (0, 0))) for m in PENDING if census.get(m, (0, 0)) != PENDING[m]}
    assert stale == {}, "update PENDING: " + repr(stale)


def test_the_census_sees_what_it_must() -> None:
    """The scanner itself: a pattern call and a long word list are found, identifiers and __all__ are not."""
    sample = ROOT / "tests" / "unit" / "_language_owner_sample.py"
    words = " ".join(f"word{chr(97 + i % 26)}".replace("word", "w") + "x" for i in range(25))
    sample.write_text(
        "import re\n"
        "__all__ = [" + ", ".join(f'"name{i}"' for i in range(30)) + "]\n"
        "_A = re.compile(r'x')\n"
        "_B = frozenset(" + repr(words) + ".split())\n"
        "_C = (" + ", ".join(f'"field_{i}"' for i in range(30)) + ")\n", encoding="utf-8")
    try:
        assert holdings(sample) == (1, 1)
    finally:
        sample.unlink()
