"""``neusym graph``: the self-contained HTML page (checked in headless Chromium), GraphML and Mermaid."""

from __future__ import annotations

import os
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import Cli, one_line_error

from neusym import NeuSymMemory
from neusym.record import Scope
from neusym.symbolic.transfer import collect
from neusym.visual import build_view, to_html

HOSTILE = ("</script><script>document.body.setAttribute('data-pwned', 1)</script>"
           "<img src=x onerror=\"document.body.setAttribute('data-pwned', 2)\"> & <b>bold</b>")


def _seed(mem: NeuSymMemory) -> None:
    mem.add("I live in Porto and I work at Farfetch.", user_id="ana", session_id="s1")
    mem.add("I moved to Lisbon.", user_id="ana", session_id="s2")
    mem.add([{"role": "user", "name": "Ana", "content": "I love specialty coffee."},
             {"role": "user", "name": "Ana", "content": "I no longer drink coffee."}], user_id="ana", session_id="s3")
    mem.add("I will run the Lisbon half marathon on March 9.", user_id="ana", type="plan")
    mem.add(HOSTILE, user_id="ana", infer=False)
    mem.reflect(user_id="ana", session_id="s3", extractive=True)
    mem.add("I keep bees in Ghent.", user_id="bob")


@pytest.fixture
def seeded(make_memory: Callable[..., NeuSymMemory], cli: Cli) -> dict[str, int]:
    mem = make_memory()
    _seed(mem)
    view = build_view(collect(mem.store, Scope(user_id="ana")))
    mem.close()
    return {"nodes": len(view.nodes), "edges": len(view.edges), "memories": len(view.memories)}


def test_graph_writes_html_graphml_and_mermaid(cli: Cli, seeded: dict[str, int], tmp_path: Path) -> None:
    html, gml, mmd = tmp_path / "g.html", tmp_path / "g.graphml", tmp_path / "g.mmd"
    out = cli.json("graph", "-u", "ana", "--html", html, "--graphml", gml, "--mermaid", mmd)
    assert out["nodes"] == seeded["nodes"] and out["edges"] == seeded["edges"]
    assert out["memories"] == seeded["memories"] and out["entities"] > 0 and out["truncated"] is False
    assert set(out["by_relation"]) >= {"MENTIONS", "RELATES", "NEXT", "DERIVED_FROM", "SUPERSEDES"}
    assert set(out["written"]) == {"html", "graphml", "mermaid"}

    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    root = ET.parse(gml).getroot()
    assert len(root.findall(".//g:node", ns)) == seeded["nodes"]
    assert len(root.findall(".//g:edge", ns)) == seeded["edges"]
    keys = {k.get("attr.name") for k in root.findall("g:key", ns)}
    assert {"type", "status", "valid_from", "valid_to", "rel"} <= keys
    assert HOSTILE in [d.text for d in root.iter(f"{{{ns['g']}}}data")]  # escaped by XML, text intact

    text = mmd.read_text()
    assert text.splitlines()[1] == "flowchart LR"
    assert sum(1 for ln in text.splitlines() if re.match(r"^\s+[me]\d+[\[(]", ln)) == seeded["nodes"]
    assert sum(1 for ln in text.splitlines() if re.search(r" (-->|==>|-\.->|-\.-x)", ln)) == seeded["edges"]
    assert "<script>" not in text and "#lt;script#gt;" in text

    assert "Ghent" not in html.read_text()  # another tenant's graph is not drawn
    assert cli("graph", "-u", "ana", ok=False).exit_code == 2
    assert "Lisbon" in cli("graph", "-u", "ana", "--mermaid", "-").stdout


def test_graph_page_is_self_contained_and_inert(cli: Cli, seeded: dict[str, int], tmp_path: Path) -> None:
    page = tmp_path / "g.html"
    cli.json("graph", "-u", "ana", "--html", page, "--title", "Ana <3")
    text = page.read_text()
    assert "<title>Ana &lt;3</title>" in text
    # nothing is fetched: no external scripts, styles, fonts, images or imports
    assert not re.search(r"<(script|img|link|iframe)[^>]*\s(src|href)=", text, re.IGNORECASE)
    assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", text, re.IGNORECASE)
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", text))
    assert urls <= {"http://www.w3.org/2000/svg"}  # the SVG namespace name, not a request
    # memory text is inert data: exactly our three script elements, the payload escaped inside JSON
    assert len(re.findall(r"<script\b", text, re.IGNORECASE)) == 3
    assert "data-pwned" in text and "</script><script>document" not in text


def test_graph_limit_and_status_filters(cli: Cli, seeded: dict[str, int], tmp_path: Path) -> None:
    out = cli.json("graph", "-u", "ana", "--mermaid", tmp_path / "m.mmd", "--limit", "2")
    assert out["memories"] == 2 and out["truncated"] is True
    plans = cli.json("graph", "-u", "ana", "--graphml", tmp_path / "p.graphml", "--status", "superseded")
    assert plans["memories"] == 1
    everyone = cli.json("graph", "--all-tenants", "--graphml", tmp_path / "all.graphml")
    assert everyone["memories"] == seeded["memories"] + 1


def _chromium() -> str:
    exe = shutil.which("chromium")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (Debian's 'chromium' package, installed by .ci/run)",
                        pytrace=False)
        pytest.skip("chromium is not installed")
    return exe


@pytest.mark.browser
def test_graph_page_renders_in_headless_chromium(cli: Cli, seeded: dict[str, int], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Open the page in Debian's Chromium: its own script draws one [data-node] per node and one [data-edge] per
    edge (counted in the DOM after the script ran), the hostile memory stays text, and a screenshot is taken."""
    from neusym.visual.browser import dump_dom

    monkeypatch.setenv("NEUSYM_CHROMIUM", _chromium())
    page, png = tmp_path / "graph.html", tmp_path / "graph.png"
    out = cli.json("graph", "-u", "ana", "--html", page, "--png", png, "--size", "1280x800")
    assert out["written"]["png"] == str(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000

    dom = dump_dom(page)
    body = re.search(r"<body[^>]*>", dom)
    assert body is not None and "data-error" not in body.group(0), body
    assert f'data-rendered="{seeded["nodes"]}/{seeded["edges"]}"' in body.group(0)
    drawn = dom.split('id="graph"', 1)[1].split("</svg>", 1)[0]
    assert len(re.findall(r"<g [^>]*data-node=", drawn)) == seeded["nodes"]
    assert len(re.findall(r"<line [^>]*data-edge=", drawn)) == seeded["edges"]
    memories = len(re.findall(r'data-kind="memory"', drawn))
    assert memories == seeded["memories"]
    assert len(re.findall(r"<rect [^>]*data-bar=", dom)) == seeded["memories"]  # one timeline bar each
    assert "data-legend=" in dom
    # the hostile memory is shown as text: it made no element and ran no code
    assert "data-pwned" not in body.group(0)
    assert "<img" not in dom and "<b>" not in dom and len(re.findall(r"<script\b", dom)) == 3
    assert "&lt;/script&gt;&lt;script&gt;document.body" in dom

    # the page's interaction code runs too: a deep link selects a memory and fills the details panel
    first = re.search(r'data-id="(m:[0-9a-f]+)"[^>]*data-kind="memory"', drawn)
    assert first is not None
    picked = dump_dom(page, fragment=f"select={first.group(1)}")
    details = picked.split('id="details"', 1)[1].split("</section>", 1)[0]
    assert "<dt>status</dt>" in details and first.group(1)[2:] in details
    assert 'class="node memory status-' in picked and " sel" in picked and " dim" in picked


def test_to_html_handles_an_empty_graph(tmp_path: Path) -> None:
    from neusym.symbolic.transfer import GraphDump

    page = to_html(build_view(GraphDump(), title="empty"))
    assert "data-node" in page and "\"nodes\":[]" in page


def test_png_without_chromium_is_a_clear_error(cli: Cli, seeded: dict[str, int], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEUSYM_CHROMIUM", str(tmp_path / "no-such-browser"))
    res = cli("graph", "-u", "ana", "--png", tmp_path / "x.png", ok=False)
    assert res.exit_code == 4 and "Chromium" in one_line_error(res)
