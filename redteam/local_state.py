"""Probe 6: files and local state. Each case seeds a fresh data dir (5 memories, closed), damages it, reopens:
expected a typed NeuSymError naming the file(s), or a store with all 5 memories, never fewer without an error.

Run: PYTHONPATH=$PWD nice -n 10 python3 redteam/local_state.py [case ...]
"""
import os
import shutil
import stat
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, "redteam")
from common import open_mem  # noqa: E402

from neusym.errors import NeuSymError  # noqa: E402

G = "g"
N = 5


def seed() -> Path:
    d = Path(tempfile.mkdtemp(prefix="rtls_")) / "data"
    mem, _ = open_mem(d, graph_name=G)
    for i in range(N):
        mem.add(f"Fact number {i}: my locker code is {1000 + i}", user_id="a")
    mem.close()
    return d


def reopen(d: Path, label: str, extra=None) -> None:
    t = time.perf_counter()
    try:
        mem, _ = open_mem(d, graph_name=G)
    except NeuSymError as e:
        print(f"TYPED   {label:48s} {type(e).__name__}: {str(e)[:170]!r} ({time.perf_counter() - t:.1f}s)")
        return
    except Exception as e:  # noqa: BLE001
        print(f"RAW     {label:48s} {type(e).__name__}: {str(e)[:170]!r}")
        return
    try:
        n = mem.admin.stats(user_id="a")["memories"]
        hits = len(mem.search("locker code", user_id="a", k=10))
        try:
            mem.add("one more after reopening", user_id="a")
            w = "write ok"
        except Exception as e:  # noqa: BLE001
            w = f"write {type(e).__name__}: {str(e)[:80]}"
        verdict = "OK" if n == N and hits == N else "SILENT-LOSS"
        print(f"{verdict:7s} {label:48s} memories={n} hits={hits} {w}" + (f" | {extra(d)}" if extra else ""))
    except Exception as e:  # noqa: BLE001
        print(f"{'TYPED' if isinstance(e, NeuSymError) else 'RAW':7s} {label:48s} on use: {type(e).__name__}: {str(e)[:150]!r}")
    finally:
        try:
            mem.close()
        except Exception:  # noqa: BLE001
            pass


aof = lambda d: d / "appendonlydir"  # noqa: E731


def only(d, pat):
    return sorted(aof(d).glob(pat))


def trunc(p, keep):
    data = p.read_bytes()
    p.write_bytes(data[:keep] if keep >= 0 else data[:len(data) + keep])


CASES = {
    "missing manifest": lambda d: (aof(d) / "appendonly.aof.manifest").unlink(),
    "manifest is a directory": lambda d: ((aof(d) / "appendonly.aof.manifest").unlink(),
                                          (aof(d) / "appendonly.aof.manifest").mkdir()),
    "empty manifest": lambda d: (aof(d) / "appendonly.aof.manifest").write_text(""),
    "garbage manifest": lambda d: (aof(d) / "appendonly.aof.manifest").write_text("hello\n"),
    "missing base rdb": lambda d: only(d, "*.base.rdb")[0].unlink(),
    "truncated base rdb": lambda d: trunc(only(d, "*.base.rdb")[0], 100),
    "base rdb zeroed": lambda d: only(d, "*.base.rdb")[0].write_bytes(b"\0" * only(d, "*.base.rdb")[0].stat().st_size),
    "missing appendonlydir (indexes kept)": lambda d: shutil.rmtree(aof(d)),
    "appendonlydir is a file": lambda d: (shutil.rmtree(aof(d)), aof(d).write_text("x")),
    "appendonlydir symlink to empty dir": lambda d: (shutil.rmtree(aof(d)), aof(d).symlink_to(tempfile.mkdtemp())),
    "incr aof garbage appended": lambda d: only(d, "*.incr.aof")[0].write_bytes(
        only(d, "*.incr.aof")[0].read_bytes() + b"*3\r\n$5\r\nGRAPH.QUERY\r\ngarbage"),
    "everything but indexes deleted": lambda d: [p.unlink() if p.is_file() else shutil.rmtree(p)
                                                 for p in d.iterdir() if p.name != "indexes"],
    "indexes dir is a file": lambda d: (shutil.rmtree(d / "indexes"), (d / "indexes").write_text("x")),
    "vectors.faiss is a directory": lambda d: ((d / "indexes" / G / "vectors.faiss").unlink(),
                                               (d / "indexes" / G / "vectors.faiss").mkdir()),
    "lexical.npz is a directory": lambda d: ((d / "indexes" / G / "lexical.npz").unlink(),
                                             (d / "indexes" / G / "lexical.npz").mkdir()),
    "falkordb.log is a directory": lambda d: ((d / "falkordb.log").unlink(), (d / "falkordb.log").mkdir()),
    "falkordb.clients is a directory": lambda d: ((d / "falkordb.clients").unlink(), (d / "falkordb.clients").mkdir()),
    "falkordb.server.lock is a directory": lambda d: ((d / "falkordb.server.lock").unlink(),
                                                     (d / "falkordb.server.lock").mkdir()),
    "falkordb.sock is a directory": lambda d: (d / "falkordb.sock").mkdir(),
    "falkordb.lock is a directory": lambda d: (d / "falkordb.lock").mkdir(),
    "data dir not writable (0500)": lambda d: os.chmod(d, 0o500),
    "indexes/<graph> not writable (0500)": lambda d: os.chmod(d / "indexes" / G, 0o500),
}
VICTIM = Path(tempfile.mkdtemp(prefix="rtvictim_")) / "victim.txt"


def plant_log_link(d):
    VICTIM.write_text("victim file\n")
    (d / "falkordb.log").unlink()
    (d / "falkordb.log").symlink_to(VICTIM)


def victim_state(d):
    return f"victim size {VICTIM.stat().st_size} (was 12)"


def plant_faiss_link(d):
    VICTIM.write_text("victim file\n")
    f = d / "indexes" / G / "vectors.faiss"
    f.unlink()
    f.symlink_to(VICTIM)


def faiss_state(d):
    f = d / "indexes" / G / "vectors.faiss"
    return f"vectors.faiss is_symlink={f.is_symlink()} victim size {VICTIM.stat().st_size} (was 12)"


def plant_indexes_link(d):
    elsewhere = Path(tempfile.mkdtemp(prefix="rtelse_"))
    shutil.rmtree(d / "indexes")
    (d / "indexes").symlink_to(elsewhere)
    os.chmod(elsewhere, 0o777)


LINKS = {
    "falkordb.log symlink -> victim file": (plant_log_link, victim_state),
    "vectors.faiss symlink -> victim file": (plant_faiss_link, faiss_state),
    "indexes symlink -> world-writable dir": (plant_indexes_link,
                                              lambda d: f"indexes still a link: {(d / 'indexes').is_symlink()}, "
                                                        f"target mode {oct(stat.S_IMODE(os.stat(d / 'indexes').st_mode))}"),
}

pick = sys.argv[1:]
for name, damage in CASES.items():
    if pick and not any(p in name for p in pick):
        continue
    d = seed()
    damage(d)
    reopen(d, name)
    os.chmod(d, 0o700)
for name, (damage, extra) in LINKS.items():
    if pick and not any(p in name for p in pick):
        continue
    d = seed()
    damage(d)
    reopen(d, name, extra)
