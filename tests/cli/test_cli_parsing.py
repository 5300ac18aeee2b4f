"""The CLI's parsers: import formats, times and durations (no database needed)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cli_helpers import Cli

from neusym.cli._base import parse_duration, parse_time
from neusym.errors import InvalidInputError
from neusym.importing import detect_format, parse_chat, parse_jsonl, parse_locomo


def test_durations_and_times() -> None:
    assert parse_duration("90") == 90 and parse_duration("10m") == 600 and parse_duration("1.5h") == 5400
    assert parse_duration("7d") == 7 * 86400 and parse_duration("2w") == 14 * 86400
    with pytest.raises(InvalidInputError):
        parse_duration("soon")
    assert parse_time("2024-03-01") == datetime(2024, 3, 1, tzinfo=UTC)
    assert parse_time("2024-03-01T10:00:00+02:00") == datetime(2024, 3, 1, 8, tzinfo=UTC)
    assert parse_time("2024-03-01T10:00:00Z") == datetime(2024, 3, 1, 10, tzinfo=UTC)
    assert parse_time("1700000000") == datetime.fromtimestamp(1700000000, tz=UTC)
    now = datetime.now(UTC)
    assert abs(parse_time("-7d") - (now - timedelta(days=7))) < timedelta(seconds=5)
    assert abs(parse_time("+2h") - (now + timedelta(hours=2))) < timedelta(seconds=5)
    assert abs(parse_time("now") - now) < timedelta(seconds=5)
    with pytest.raises(InvalidInputError):
        parse_time("last tuesday")


def test_chat_log_format() -> None:
    text = ("# comment\n"
            "User: hello there\n"
            "=== s2 ===\n"
            "[2024-03-01T10:00:00Z] Dr. Smith: Take two pills: morning and night.\n"
            "AI: Noted.\n"
            "   and a second line\n"
            "---\n"
            "Ana: bye\n")
    items = parse_chat(text, "log.txt", session=None, assistant=None)
    assert [(i.role, i.kwargs["name"], i.kwargs["session_id"]) for i in items] == [
        ("user", "user", "log"), ("user", "Dr. Smith", "s2"), ("assistant", "assistant", "s2"),
        ("user", "Ana", "log-2")]
    assert items[1].content == "Take two pills: morning and night."
    assert items[1].kwargs["valid_from"] == datetime(2024, 3, 1, 10, tzinfo=UTC)
    assert items[2].content == "Noted.\nand a second line"
    named = parse_chat("Ana: hi\nMax: hello\n", "x.txt", session="run1", assistant="Max")
    assert [i.role for i in named] == ["user", "assistant"] and named[0].kwargs["session_id"] == "run1"
    with pytest.raises(InvalidInputError, match="x.txt:1"):
        parse_chat("just some prose without a speaker\n", "x.txt", session=None, assistant=None)


def test_jsonl_shapes_and_errors() -> None:
    ignored: set[str] = set()
    items = parse_jsonl("\n".join([
        json.dumps({"content": "a", "user_id": "u", "ttl": 60, "type": "fact"}),
        json.dumps({"role": "human", "content": "b"}),
        json.dumps({"messages": [{"role": "user", "content": "c"}, {"role": "ai", "content": "d"}],
                    "session_id": "s"}),
    ]), "f.jsonl", ignored)
    assert [(i.turn, i.role, i.content) for i in items] == [(False, "user", "a"), (True, "user", "b"),
                                                            (True, "user", "c"), (True, "assistant", "d")]
    assert items[0].kwargs == {"user_id": "u", "ttl": 60, "type": "fact"}
    assert items[2].kwargs["session_id"] == "s" and ignored == set()
    for bad, msg in ((json.dumps({"content": ""}), "empty"), (json.dumps([1]), "JSON object"),
                     (json.dumps({"content": "x", "tags": "a"}), "tags"),
                     (json.dumps({"content": "x", "valid_from": "someday"}), "valid_from"),
                     (json.dumps({"role": "wizard", "content": "x"}), "role"),
                     (json.dumps({"kind": "header", "format": "neusym-export"}), "neusym restore")):
        with pytest.raises(InvalidInputError, match=msg):
            parse_jsonl(bad, "f.jsonl", set())


def test_locomo_shape_errors_and_format_detection(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="not a LoCoMo sample"):
        parse_locomo([{"sample_id": "x"}], "l.json", user=None)
    with pytest.raises(InvalidInputError, match="session time"):
        parse_locomo([{"conversation": {"session_1": [{"speaker": "A", "text": "hi"}],
                                        "session_1_date_time": "yesterday"}}], "l.json", user=None)
    assert detect_format(Path("a.jsonl"), "") == "jsonl"
    assert detect_format(Path("a.json"), '[{"conversation": {}}]') == "locomo"
    assert detect_format(Path("a.json"), '[{"content": "x"}]') == "jsonl"
    assert detect_format(Path("a.txt"), "Ana: hi") == "chat"
    assert detect_format(Path("-"), '{"content": "x"}\n') == "jsonl"


def test_import_from_stdin(cli: Cli) -> None:
    data = json.dumps({"content": "I live in Porto."}) + "\n" + json.dumps({"content": "I like tea."}) + "\n"
    out = cli.json("import", "-", "-u", "ana", "--format", "jsonl", input=data)
    assert out["items"] == 2 and out["stored"] == 2
    assert cli("import", "-", "-u", "ana", "--format", "xml", input=data, ok=False).exit_code == 2
