"""Token counting: tiktoken from llama-index-core's bundled cache without importing llama_index, else len/4."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from neusym.reflection import tokens


def test_engine_finds_the_bundled_cache_without_importing_llama_index() -> None:
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    code = textwrap.dedent("""
        import os, sys
        import neusym
        from neusym.reflection.tokens import get_token_counter
        c = get_token_counter()
        assert c.exact and c.count("hello world") == 2, c.name
        assert os.environ["TIKTOKEN_CACHE_DIR"].endswith("tiktoken_cache")
        assert not [m for m in sys.modules if m.startswith(("llama_index.core", "langchain"))], "framework imported"
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_an_explicit_cache_dir_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "/somewhere/else")
    assert tokens.ensure_tiktoken_cache() == "/somewhere/else"


def test_falls_back_to_the_approximate_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken

    def boom(name: str) -> None:
        raise ValueError(f"no encoding {name} offline")

    monkeypatch.setattr(tiktoken, "get_encoding", boom)
    monkeypatch.setattr(tokens, "_cache", {})
    counter = tokens.get_token_counter("cl100k_base")
    assert isinstance(counter, tokens.ApproxCounter) and not counter.exact
    assert counter.count("abcdefgh") == 2 and counter.count("abcdefghi") == 3 and counter.count("") == 0
    assert counter.count(counter.truncate("x" * 100, 10)) <= 10
