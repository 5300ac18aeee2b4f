"""The FalkorDB executor's own parameter header and reply decoding, checked against the real server.

FalkorDB takes parameters only as a ``CYPHER name=value ...`` text prefix, so the serializer is the one place where
user data meets Cypher text: every value must come back exactly as sent, and nothing may escape its literal.
"""

from __future__ import annotations

import enum
import math
import random
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from neusym.errors import BackendError, InvalidInputError
from neusym.symbolic.executors.falkordb import FalkorDBExecutor, build_query

TRICKY_STRINGS = [
    "",
    "plain",
    'double "quoted" text',
    "single 'quoted' text",
    "back\\slash",
    "trailing backslash\\",
    "\\",
    '\\"',
    '"',
    "\\n is not a newline",
    "a real\nnewline and a\ttab and a\rreturn",
    "\\u00e9 stays six characters",
    "é€😀 ünïcödé 漢字 \u202eRTL",
    "\x01\x02\x1f control",
    "`backtick` and $dollar and {brace} and [bracket]",
    '" RETURN 1 AS pwned //',
    "\" }) MATCH (n) DETACH DELETE n //",
    "CYPHER x=1 RETURN",
    "\ufeffBOM",
    "x" * 5000,
]


class Colour(enum.StrEnum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


@pytest.fixture
def executor(falkordb_dir: Path, graph_name: str) -> Iterator[FalkorDBExecutor]:
    ex = FalkorDBExecutor(graph_name, unix_socket_path=str(falkordb_dir / "falkordb.sock"), stop_on_close=False)
    ex.run("CREATE (:Probe {k: 1})")  # RO queries on a graph that does not exist yet are refused
    yield ex
    ex.delete_graph()
    ex.close()


def echo(ex: FalkorDBExecutor, value: Any) -> Any:
    return ex.run("RETURN $x AS x", {"x": value}, write=False)[0]["x"]


@pytest.mark.parametrize("text", TRICKY_STRINGS)
def test_strings_round_trip_exactly(executor: FalkorDBExecutor, text: str) -> None:
    assert echo(executor, text) == text


def test_random_strings_round_trip(executor: FalkorDBExecutor) -> None:
    rng = random.Random(5)
    alphabet = ['"', "\\", "'", "`", "\n", "\r", "\t", "n", "u", "x", "0", "{", "}", "$", " ", "é", "😀", "\x7f"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(300)]
    got = executor.run("RETURN $xs AS xs", {"xs": texts}, write=False)[0]["xs"]
    assert got == texts


@pytest.mark.parametrize("value", [0, 1, -1, 2**63 - 1, -(2**63), 123456789012345])
def test_ints_round_trip(executor: FalkorDBExecutor, value: int) -> None:
    got = echo(executor, value)
    assert got == value and type(got) is int


@pytest.mark.parametrize("value", [0.0, -0.0, 1.5, -2.25, 0.1, 1e-05, 1e16, 1.5e300, 5e-324, 123456.789, 1 / 3])
def test_floats_round_trip(executor: FalkorDBExecutor, value: float) -> None:
    got = echo(executor, value)
    assert type(got) is float
    assert got == pytest.approx(value, rel=1e-14, abs=0.0) or got == value


def test_containers_bools_and_null(executor: FalkorDBExecutor) -> None:
    value = {"a": [1, 2.5, "s", None, [True, False]], "b c": {"nested": {"deep": "v"}}, "é": (1, 2), "e": []}
    assert echo(executor, value) == {"a": [1, 2.5, "s", None, [True, False]], "b c": {"nested": {"deep": "v"}},
                                     "é": [1, 2], "e": []}
    assert echo(executor, None) is None
    assert echo(executor, True) is True
    assert echo(executor, False) is False
    assert echo(executor, {}) == {}


def test_subclasses_and_numpy_values(executor: FalkorDBExecutor) -> None:
    assert echo(executor, Colour.RED) == "red"
    assert echo(executor, Level.HIGH) == 3
    assert echo(executor, np.float64(0.5)) == 0.5
    assert echo(executor, np.float32(0.25)) == 0.25
    assert echo(executor, np.int64(7)) == 7
    assert echo(executor, np.bool_(True)) is True
    assert echo(executor, np.arange(3)) == [0, 1, 2]
    assert echo(executor, OrderedDict([("k", "v")])) == {"k": "v"}
    assert echo(executor, b"bytes") == "bytes"


def test_many_parameters_keep_their_names(executor: FalkorDBExecutor) -> None:
    params = {f"p{i}": i for i in range(40)}
    row = executor.run("RETURN " + ", ".join(f"$p{i} AS p{i}" for i in range(40)), params, write=False)[0]
    assert row == params


def test_write_path_round_trip(executor: FalkorDBExecutor) -> None:
    rows = [{"props": {"id": f"m{i}", "content": TRICKY_STRINGS[i % len(TRICKY_STRINGS)], "score": i / 7,
                       "tags": ["a", 'b"', "c\\"]}} for i in range(50)]
    executor.run("UNWIND $rows AS r CREATE (m:Probe) SET m = r.props", {"rows": rows})
    got = executor.run("MATCH (m:Probe) WHERE m.id IS NOT NULL RETURN m.id AS id, m.content AS content, "
                       "m.score AS score, m.tags AS tags ORDER BY m.score", write=False)
    assert [r["content"] for r in got] == [r["props"]["content"] for r in rows]
    assert [r["tags"] for r in got] == [["a", 'b"', "c\\"]] * 50
    assert [r["score"] for r in got] == pytest.approx([i / 7 for i in range(50)])


def test_nodes_and_other_types_still_decode(executor: FalkorDBExecutor) -> None:
    executor.run("CREATE (:Probe {name: 'n', weight: 2.5})-[:LINK {w: 1}]->(:Probe {name: 'o'})")
    row = executor.run("MATCH (a:Probe {name: 'n'})-[r:LINK]->(b) RETURN a, r, b.name AS b, "
                       "point({latitude: 1.5, longitude: 2.5}) AS p, {k: [1, {z: 'q'}]} AS m", write=False)[0]
    assert row["a"] == {"name": "n", "weight": 2.5}
    assert row["r"] == {"w": 1}
    assert row["b"] == "o"
    assert row["p"] == {"latitude": 1.5, "longitude": 2.5}
    assert row["m"] == {"k": [1, {"z": "q"}]}


def test_a_write_without_return_gives_no_rows(executor: FalkorDBExecutor) -> None:
    assert executor.run("CREATE (:Probe {k: 2})") == []
    assert executor.run("MATCH (p:Probe {k: 2}) RETURN p.k AS k", write=False) == [{"k": 2}]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, [1.0, math.nan], {"k": math.inf}])
def test_non_finite_floats_are_refused(value: Any) -> None:
    with pytest.raises(BackendError, match="NaN/inf"):
        build_query("RETURN $x AS x", {"x": value})


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, [10**30]])
def test_ints_beyond_64_bits_are_refused(value: Any) -> None:
    with pytest.raises(InvalidInputError, match="64-bit"):
        build_query("RETURN $x AS x", {"x": value})


@pytest.mark.parametrize("value", ["a\x00b", ["x", "\x00"], {"k": "\ud800"}, "lone \udfff surrogate"])
def test_nul_and_lone_surrogates_are_refused(value: Any) -> None:
    with pytest.raises(InvalidInputError):
        build_query("RETURN $x AS x", {"x": value})


@pytest.mark.parametrize("value", [{1, 2}, object(), b"\xff\xfe", {"": 1}, {"a`b": 1}])
def test_values_without_a_safe_literal_are_refused(value: Any) -> None:
    with pytest.raises(InvalidInputError):
        build_query("RETURN $x AS x", {"x": value})


def test_refused_parameter_names() -> None:
    for name in ["", "a`b"]:
        with pytest.raises(InvalidInputError):
            build_query("RETURN 1", {name: 1})


def test_header_shape() -> None:
    q = build_query("RETURN $s AS s", {"s": 'a"b\\c', "n": None, "l": [1, 2.5, True], "m": {"k": "v"}})
    assert q == b'CYPHER `s`="a\\"b\\\\c" `n`=null `l`=[1,2.5,true] `m`={`k`:"v"} RETURN $s AS s'
    assert build_query("RETURN 1", None) == b"RETURN 1"
    assert build_query("RETURN 1", {}) == b"RETURN 1"


def test_errors_are_backend_errors(executor: FalkorDBExecutor) -> None:
    with pytest.raises(BackendError):
        executor.run("RETURN $missing AS x", {}, write=False)
    with pytest.raises(BackendError):
        executor.run("THIS IS NOT CYPHER", {"x": 1})
    with pytest.raises(BackendError):  # a run-time error (arrives inside the reply, not as the reply)
        executor.run("UNWIND [1, 0] AS d RETURN 1 / d AS q", write=False)
