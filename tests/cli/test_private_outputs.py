"""Every file the library writes is 0600 in a 0700 directory, written atomically, never through a symbolic link
(issue 27 item 11): a sweep of everything one session creates under umask 022, CLI graph outputs included, and the
planted-link cases.

The session runs in a subprocess (a umask is process-wide) with its own data directory, so its embedded server,
indexes, reflection queue, exports and graph outputs are all created from nothing.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_helpers import Cli, one_line_error

from neusym import InvalidInputError, NeuSymMemory
from neusym.private_files import write_private
from neusym.visual.browser import find_chromium

ROOT = Path(__file__).resolve().parents[2]

SESSION = textwrap.dedent('''
    import os, subprocess, sys
    from pathlib import Path
    os.umask(0o022)
    from neusym import NeuSymMemory
    from neusym.embeddings import HashingEmbedder
    from neusym.reflection import ReflectionPolicy
    base = Path(sys.argv[1])
    data = base / "data"
    mem = NeuSymMemory(data, embedder=HashingEmbedder(256),
                       reflection=ReflectionPolicy(every_n=2, debounce_s=3600, drain_on_close=False))
    mem.add("I live in Porto.", user_id="ana")
    mem.add("My sister Marta lives in Braga.", user_id="ana")
    mem.search("where does Marta live", user_id="ana")
    mem.export(base / "exports" / "new" / "ana.jsonl", user_id="ana")
    mem.export(base / "exports" / "new" / "ana.jsonl.gz", user_id="ana")
    (base / "in.jsonl").write_text('{"content": "I like green tea."}\\n')  # the test's own input, checked apart
    mem.import_file(base / "in.jsonl", user_id="ana")
    mem.close()  # persists the pending reflection job
    env = dict(os.environ, NEUSYM_DATA_DIR=str(data), NEUSYM_EMBEDDER="hashing:256")
    out = base / "graph" / "deep"
    args = ["--html", out / "g.html", "--graphml", out / "g.graphml", "--mermaid", out / "g.mmd"]
    if sys.argv[2] == "png":
        args += ["--png", base / "shots" / "g.png"]
    subprocess.run([sys.executable, "-m", "neusym", "graph", "-u", "ana", *map(str, args)], env=env, check=True,
                   capture_output=True)
    subprocess.run([sys.executable, "-m", "neusym", "graph", "-u", "ana", "--mermaid", base / "graph" / "top.mmd"],
                   env=env, check=True, capture_output=True)
''')


def test_every_file_a_session_writes_is_private(tmp_path: Path) -> None:
    png = find_chromium() is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEUSYM_", "NEO4J_", "FALKORDB_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", SESSION, str(tmp_path), "png" if png else "-"], env=env,
                          capture_output=True, text=True, timeout=600, cwd=str(ROOT))
    assert done.returncode == 0, done.stdout + done.stderr
    found: dict[str, int] = {}
    for dirpath, dirnames, filenames in os.walk(tmp_path):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            found[str(path.relative_to(tmp_path))] = stat.S_IMODE(path.lstat().st_mode)
    found.pop("in.jsonl")  # the test wrote it
    wrong = {p: oct(m) for p, m in found.items()
             if m != (0o700 if (tmp_path / p).is_dir() else 0o600)}
    assert not wrong, wrong
    expected = {"data/indexes", "exports/new/ana.jsonl", "exports/new/ana.jsonl.gz", "graph/deep/g.html",
                "graph/deep/g.graphml", "graph/deep/g.mmd", "graph/top.mmd",
                *(["shots/g.png"] if png else [])}
    assert expected <= set(found), sorted(found)
    queue = [p for p in found if p.endswith("reflection-pending.json")]
    assert queue and json.loads((tmp_path / queue[0]).read_text())["jobs"]
    assert not [p for p in found if ".tmp" in p or Path(p).name.startswith(".")], sorted(found)  # atomic: no leftovers


def test_outputs_are_never_written_through_a_planted_link(cli: Cli, memory: NeuSymMemory, tmp_path: Path) -> None:
    """A link planted where an output will go (pointing at a file of the user's) is refused, the file it points at
    unchanged: the CLI graph outputs, exports and every other write_private caller."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    memory.add("I live in Porto.", user_id="ana")
    for flag, name in (("--html", "g.html"), ("--graphml", "g.graphml"), ("--mermaid", "g.mmd")):
        link = tmp_path / name
        link.symlink_to(victim)
        res = cli("graph", "-u", "ana", flag, link, ok=False)
        assert "symbolic link" in one_line_error(res) and victim.read_text() == "precious"
        assert link.is_symlink()
    link = tmp_path / "backup.jsonl"
    link.symlink_to(victim)
    with pytest.raises(InvalidInputError, match="symbolic link"):
        memory.export(link, user_id="ana")
    with pytest.raises(InvalidInputError, match="symbolic link"):
        write_private(link, "x")
    assert victim.read_text() == "precious"
    # the temporary file is never where a link could be planted in advance: an existing name is refused (O_EXCL)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    from neusym.private_files import atomic_private

    target = write_private(tmp_path / "out.txt", "old")
    with pytest.raises(RuntimeError), atomic_private(target) as fh:
        fh.write("half of the new")
        raise RuntimeError("the writer died")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]
