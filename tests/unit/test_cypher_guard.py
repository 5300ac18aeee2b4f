"""Layer 1 of the guarded read-only Cypher (neusym.symbolic.guard): the lexical check on a real tokenizer.

The database layers (plan check, read-only execution, timeout) are tested against both backends in
tests/contract/test_guarded_cypher.py; here only what the tokenizer must see through.
"""

from __future__ import annotations

import pytest

from neusym import UnsafeQueryError
from neusym.symbolic.guard import ALLOWED_PROCEDURES, cap_rows, check_read_only, procedure_name

ALLOWED = [
    "MATCH (m:Memory) RETURN m.id AS id",
    "MATCH (m:Memory) WHERE m.content CONTAINS 'CREATE (x)' RETURN m",  # keywords inside strings are data
    'MATCH (m) WHERE m.content = "it\'s \\" SET x" RETURN m',
    "MATCH (m) WHERE m.content = 'a\\' CREATE (n) //' RETURN m",  # an escaped quote does not end the string
    "MATCH (n) RETURN n.set, n.create, n.`delete`",  # property keys named like keywords
    "MATCH (n:Create)-[:DELETE]->(m) RETURN n",  # labels and relationship types
    "RETURN {set: 1, merge: 2} AS m",  # map keys
    "MATCH (`set`) RETURN `set`",  # backticked identifiers are never keywords
    "MATCH (n) // SET n.x = 1\nRETURN n",  # comments
    "MATCH (n) /* DELETE n */ RETURN n",
    "CALL db.labels() YIELD label RETURN label",
    "CALL `db`.`labels`() YIELD label RETURN label",
    "CALL db.idx.fulltext.queryNodes('Memory', 'tea') YIELD node RETURN node",
    "CALL { MATCH (m:Memory) RETURN count(m) AS c } RETURN c",  # read subquery
    "MATCH (n) RETURN n;",
    "SHOW INDEXES",
    "MATCH (n) WHERE n.x = $set RETURN n",  # a parameter named like a keyword
]

REFUSED = [
    "WITH 1 AS `'` LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",  # the backtick bypass of issue 14
    "WITH 1 AS `a``'` LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",  # escaped backtick inside
    "LOAD CSV FROM 'https://example.com/x.csv' AS row RETURN row",
    "CREATE (n:Memory)",
    "MATCH (n) SET n.x = 1",
    "MATCH (n) DETACH DELETE n",
    "MATCH (n) REMOVE n.x",
    "MERGE (n:X)",
    "INSERT (n:X)",
    "UNWIND [1] AS i FOREACH (x IN [1] | CREATE (:X))",
    "MATCH (n) CALL { WITH n SET n.x = 1 } RETURN n",
    "CALL dbms.procedures() YIELD name RETURN name",
    "CALL db.labels() YIELD label CALL dbms.components() YIELD name RETURN name",
    "CALL db.idx.fulltext.createNodeIndex('Memory', 'x')",
    "CALL db.idx.fulltext.drop('Memory')",
    "CALL `dbms`.`procedures`()",
    "USE system SHOW USERS",
    "SHOW USERS",
    "EXPLAIN MATCH (n) RETURN n",
    "PROFILE MATCH (n) RETURN n",
    "CYPHER runtime=slotted MATCH (n) RETURN n",
    "MATCH (n) RETURN n; MATCH (m) DETACH DELETE m",
    "MATCH (n) RETURN n; MATCH (m) RETURN m",
    "MATCH (n) WHERE n.x = 'unterminated RETURN n",
    "MATCH (n) RETURN `unterminated",
    "MATCH (n) /* never closed RETURN n",
    "CREATE INDEX FOR (n:Memory) ON (n.x)",
    "DROP INDEX neusym_memory_seq",
    "MATCH (set) SET set.x = 1",
    "",
    "   ",
]


@pytest.mark.parametrize("cypher", ALLOWED)
def test_reads_pass(cypher: str) -> None:
    check_read_only(cypher)


@pytest.mark.parametrize("cypher", REFUSED)
def test_writes_files_and_other_procedures_are_refused(cypher: str) -> None:
    with pytest.raises(UnsafeQueryError):
        check_read_only(cypher)


def test_approved_procedures_are_reported_for_the_plan_check() -> None:
    checked = check_read_only("CALL db.labels() YIELD label WITH label CALL `db`.`propertyKeys`() "
                              "YIELD propertyKey RETURN label, propertyKey")
    assert checked.procedures == ("db.labels", "db.propertykeys")
    assert check_read_only("MATCH (n) RETURN n").procedures == ()


def test_plan_details_name_the_procedure() -> None:
    assert procedure_name("db.labels() :: (label :: STRING)") == "db.labels"
    assert procedure_name("db.index.fulltext.queryNodes($a, $b) :: (node :: NODE)") in ALLOWED_PROCEDURES
    assert procedure_name("dbms.components() :: (name :: STRING)") not in ALLOWED_PROCEDURES


def test_error_messages_say_what_was_refused() -> None:
    with pytest.raises(UnsafeQueryError, match="LOAD CSV"):
        check_read_only("WITH 1 AS `'` LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row")
    with pytest.raises(UnsafeQueryError, match="dbms.procedures"):
        check_read_only("CALL dbms.procedures()")


@pytest.mark.parametrize(("statement", "capped"), [
    ("MATCH (n) RETURN n", "MATCH (n) RETURN n\nLIMIT 10"),
    ("MATCH (n) RETURN n ORDER BY n.x SKIP 3;", "MATCH (n) RETURN n ORDER BY n.x SKIP 3\nLIMIT 10"),
    ("MATCH (n) RETURN n // a trailing comment", "MATCH (n) RETURN n // a trailing comment\nLIMIT 10"),
    ("MATCH (n) RETURN n.x LIMIT 5", "MATCH (n) RETURN n.x LIMIT 5"),
    ("MATCH (n) RETURN n.x LIMIT 500", "MATCH (n) RETURN n.x LIMIT 10"),  # in place: no alias needed
    ("MATCH (n) RETURN n.x LIMIT $k", "MATCH (n) RETURN n.x LIMIT 7"),
    ("MATCH (n) RETURN n.x LIMIT $big", "MATCH (n) RETURN n.x LIMIT 10"),
    ("MATCH (n) RETURN n.x AS x LIMIT 2 + 300", "CALL {\nMATCH (n) RETURN n.x AS x LIMIT 2 + 300\n}\nRETURN * LIMIT 10"),
    ("MATCH (a) RETURN a.x AS x UNION MATCH (b) RETURN b.x AS x",
     "CALL {\nMATCH (a) RETURN a.x AS x UNION MATCH (b) RETURN b.x AS x\n}\nRETURN * LIMIT 10"),
    ("CALL { MATCH (m) RETURN m LIMIT 99999 } RETURN m", "CALL { MATCH (m) RETURN m LIMIT 99999 } RETURN m\nLIMIT 10"),
    ("CALL db.labels()", "CALL db.labels()"),  # bounded by the schema
    ("SHOW INDEXES", "SHOW INDEXES"),
])
def test_the_row_cap_goes_into_the_statement(statement: str, capped: str) -> None:
    assert cap_rows(check_read_only(statement), 10, {"k": 7, "big": 10**6}).text == capped


@pytest.mark.parametrize("statement", [
    "CALL db.idx.fulltext.queryNodes('Memory', 'tea')",  # every match, nothing to cap
    "MATCH (n) RETURN n } MATCH (m) RETURN m",
    "MATCH (n RETURN n",
])
def test_a_statement_the_cap_cannot_bound_is_refused(statement: str) -> None:
    with pytest.raises(UnsafeQueryError):
        cap_rows(check_read_only(statement), 10)
