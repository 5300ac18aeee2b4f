"""Extraction benchmark: how much graph the extractors make, how much of it is right, and what it costs.

Two corpora, because tuning on one phrasing buys nothing on the next:

- ``locomo``: the ``observation`` sentences of the LoCoMo dev file (third-person facts about two speakers);
- ``everyday``: ``benchmarks/data/everyday_facts.txt``, 100 sentences about people, work, places, plans and tastes,
  written before any rule was tuned on them (then looked at during the first tuning rounds: a dev set);
- ``heldout``: ``benchmarks/data/everyday_facts_heldout.txt``, 50 more, written later and never looked at while
  tuning: the independent figure.

For each extractor it reports facts (S-P-O triples) per sentence, the share of sentences with at least one entity
that is not a speaker, the share with at least one triple, and the median milliseconds per sentence (timed in the
same process, several rounds, so a ratio against the rules baseline is meaningful on a noisy machine).
``--sample N`` writes N random sentences with their triples to a JSONL file for judging precision by hand (each row
has an empty ``ok`` list to fill with one boolean per triple); ``--judged FILE`` scores such a file.

Usage::

    python -m benchmarks.extraction /work/shared/data/locomo/locomo_dev.json
    python -m benchmarks.extraction FILE --extractor parser --sample 100 --out benchmarks/results/extraction
    python -m benchmarks.extraction --judged benchmarks/results/extraction/sample_locomo_rules.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import machine_info, write_json
from neusym.extraction import PREDICATES, Extraction, RuleExtractor, entity_key

EVERYDAY = Path(__file__).parent / "data" / "everyday_facts.txt"
HELDOUT = Path(__file__).parent / "data" / "everyday_facts_heldout.txt"


def locomo_sentences(path: Path) -> list[tuple[str, list[str]]]:
    """(sentence, speaker names of its conversation) for every observation sentence of a LoCoMo file."""
    out: list[tuple[str, list[str]]] = []
    for conv in json.loads(path.read_text()):
        speakers = [conv["conversation"]["speaker_a"], conv["conversation"]["speaker_b"]]
        for _session, by_speaker in sorted(conv.get("observation", {}).items()):
            for _who, items in by_speaker.items():
                for item in items:
                    text = item[0] if isinstance(item, list) else str(item)
                    if text.strip():
                        out.append((text.strip(), speakers))
    return out


def everyday_sentences(path: Path = EVERYDAY) -> list[tuple[str, list[str]]]:
    lines = [x.strip() for x in path.read_text().splitlines()]
    return [(x, ["user"]) for x in lines if x and not x.startswith("#")]


def build_extractor(name: str) -> Callable[[str], list[Extraction]]:
    if name == "rules":
        rx = RuleExtractor()
        return lambda text: rx.extract(text)
    if name == "parser":
        from neusym.extraction.parser import ParserExtractor

        px = ParserExtractor()
        return lambda text: px.extract(text)
    if name == "semantic":
        from neusym.extraction.semantic import SemanticPredicateMapper

        rs = RuleExtractor(predicate_mapper=SemanticPredicateMapper())
        return lambda text: rs.extract(text)
    if name == "table":
        rt = RuleExtractor(clauses=False)  # the rule table alone: the extractor before the clause reader
        return lambda text: rt.extract(text)
    raise SystemExit(f"unknown extractor {name!r}")


def _in_vocabulary(predicate: str) -> bool:
    return (
        predicate in PREDICATES
        or predicate.startswith("favourite_")
        or predicate.endswith(("_handle", "_of"))
    )


def _triples(exts: list[Extraction]) -> list[tuple[str, str, str, bool]]:
    return [(t.subject, t.predicate, t.object, t.polarity) for x in exts for t in x.triples]


def _entities(exts: list[Extraction]) -> list[str]:
    return list(dict.fromkeys(e for x in exts for e in x.entities))


def measure(
    corpus: list[tuple[str, list[str]]], extract: Callable[[str], list[Extraction]]
) -> dict[str, Any]:
    n = len(corpus)
    facts = 0
    with_entity = with_triple = 0
    predicates: Counter[str] = Counter()
    in_vocabulary = 0
    for text, speakers in corpus:
        exts = extract(text)
        triples = _triples(exts)
        facts += len(triples)
        with_triple += bool(triples)
        predicates.update(p for _, p, _, _ in triples)
        in_vocabulary += sum(_in_vocabulary(p) for _, p, _, _ in triples)
        own = {entity_key(s) for s in speakers} | {"user"}
        if any(entity_key(e) not in own for e in _entities(exts)):
            with_entity += 1
    return {
        "sentences": n,
        "facts_per_sentence": round(facts / n, 3),
        "pct_with_triple": round(100 * with_triple / n, 1),
        "pct_with_non_speaker_entity": round(100 * with_entity / n, 1),
        "pct_facts_in_vocabulary": round(100 * in_vocabulary / facts, 1) if facts else None,
        "top_predicates": predicates.most_common(25),
    }


def timing(
    corpus: list[tuple[str, list[str]]], extractors: dict[str, Callable[[str], list[Extraction]]], rounds: int
) -> dict[str, list[float]]:
    """ms/sentence per extractor, rounds interleaved (A B C, A B C, ...) so load changes hit all of them alike."""
    out: dict[str, list[float]] = {name: [] for name in extractors}
    for _ in range(rounds):
        for name, extract in extractors.items():
            start = time.perf_counter()
            for text, _ in corpus:
                extract(text)
            out[name].append((time.perf_counter() - start) * 1000 / len(corpus))
    return out


def sample(
    corpus: list[tuple[str, list[str]]], extract: Callable[[str], list[Extraction]], k: int, seed: int
) -> list[dict[str, Any]]:
    """``k`` random sentences with their triples, for judging by hand (fill ``ok`` with one bool per triple)."""
    rng = random.Random(seed)
    picked = rng.sample(corpus, min(k, len(corpus)))
    rows = []
    for text, _ in picked:
        exts = extract(text)
        triples = [f"{s} | {p} | {o}" + ("" if pol else " | NOT") for s, p, o, pol in _triples(exts)]
        rows.append({"text": text, "triples": triples, "entities": _entities(exts), "ok": []})
    return rows


# Runs in a subprocess with another source tree on PYTHONPATH (e.g. main before a change), so only the public
# RuleExtractor is used: it prints CPU ms/sentence (best of the rounds) of the default extractor on the given files.
_TIME_SNIPPET = """
import json, sys, time
from neusym.extraction import RuleExtractor
texts = json.load(open(sys.argv[1]))
rounds = int(sys.argv[2])
rx = RuleExtractor()
for t in texts:
    rx.extract(t)
best = []
for _ in range(rounds):
    start = time.process_time()
    for t in texts:
        rx.extract(t)
    best.append((time.process_time() - start) * 1000 / len(texts))
print(json.dumps(best))
"""


def compare_trees(
    corpora: dict[str, list[tuple[str, list[str]]]], trees: dict[str, Path], pairs: int, rounds: int
) -> dict[str, Any]:
    """CPU ms/sentence of the default extractor from each source tree, processes alternated (A B, A B, ...)
    so a busy machine slows both alike; the figure per tree is the median over processes of the best round."""
    import os
    import subprocess
    import tempfile

    out: dict[str, Any] = {}
    for corpus_name, corpus in corpora.items():
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
            json.dump([t for t, _ in corpus], fh)
        per: dict[str, list[float]] = {name: [] for name in trees}
        for _ in range(pairs):
            for name, tree in trees.items():
                env = {**os.environ, "PYTHONPATH": str(tree)}
                res = subprocess.run(
                    [sys.executable, "-c", _TIME_SNIPPET, fh.name, str(rounds)],
                    capture_output=True,
                    text=True,
                    env=env,
                    cwd=str(tree),
                    check=True,
                )
                per[name].append(min(json.loads(res.stdout)))
        Path(fh.name).unlink()
        names = list(trees)
        med = {name: statistics.median(v) for name, v in per.items()}
        out[corpus_name] = {
            "ms_per_sentence_cpu": {name: round(med[name], 4) for name in names},
            "processes": {name: [round(x, 4) for x in v] for name, v in per.items()},
            "ratio_last_to_first": round(med[names[-1]] / med[names[0]], 3),
        }
        print(
            f"{corpus_name:9s} "
            + " ".join(f"{n}={med[n]:.3f}ms" for n in names)
            + f" ratio={out[corpus_name]['ratio_last_to_first']}"
        )
    return out


def score_judged(path: Path) -> dict[str, Any]:
    """Precision of a hand-judged sample: share of triples marked true, and of sentences whose triples all are."""
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    judged = [r for r in rows if len(r.get("ok", [])) == len(r["triples"])]
    marks = [bool(v) for r in judged for v in r["ok"]]
    return {
        "file": str(path),
        "sentences_judged": len(judged),
        "triples_judged": len(marks),
        "precision": round(sum(marks) / len(marks), 3) if marks else None,
        "facts_correct_per_sentence": round(sum(marks) / len(judged), 3) if judged else None,
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("locomo", nargs="?", type=Path, help="LoCoMo dev/test JSON (observation sentences)")
    ap.add_argument("--extractor", action="append", choices=["rules", "table", "parser", "semantic"])
    ap.add_argument("--rounds", type=int, default=5, help="timing rounds over each corpus (median reported)")
    ap.add_argument("--sample", type=int, default=0, help="export N random sentences per corpus for judging")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/extraction"))
    ap.add_argument("--judged", type=Path, action="append", help="score hand-judged sample file(s) and exit")
    ap.add_argument(
        "--compare-tree",
        type=Path,
        help="time the default extractor of this source tree (e.g. a checkout of main) against this one, "
        "in alternating processes, and exit",
    )
    ap.add_argument("--pairs", type=int, default=3, help="alternating process pairs for --compare-tree")
    args = ap.parse_args(argv)
    if args.judged:
        for path in args.judged:
            print(json.dumps(score_judged(path)))
        return 0
    corpora = {"everyday": everyday_sentences(), "heldout": everyday_sentences(HELDOUT)}
    if args.locomo:
        corpora = {"locomo": locomo_sentences(args.locomo), **corpora}
    if args.compare_tree:
        here = Path(__file__).resolve().parent.parent
        trees = {"before": args.compare_tree.resolve(), "after": here}
        timing_out = {
            "machine": machine_info("neusym"),
            "command": " ".join(sys.argv),
            "trees": {k: str(v) for k, v in trees.items()},
            "corpora": compare_trees(corpora, trees, args.pairs, args.rounds),
        }
        args.out.mkdir(parents=True, exist_ok=True)
        write_json(args.out / "timing_before_after.json", timing_out)
        return 0
    results: dict[str, Any] = {"machine": machine_info("neusym"), "command": " ".join(sys.argv), "runs": {}}
    args.out.mkdir(parents=True, exist_ok=True)
    extractors = {name: build_extractor(name) for name in args.extractor or ["rules"]}
    for corpus_name, corpus in corpora.items():
        for extract in extractors.values():
            for text, _ in corpus:  # warm-up: lazy regex compilation, model load, caches
                extract(text)
        times = timing(corpus, extractors, args.rounds)
        base = statistics.median(times[next(iter(extractors))])
        for name, extract in extractors.items():
            row = measure(corpus, extract)
            row["ms_per_sentence_median"] = round(statistics.median(times[name]), 4)
            row["ms_per_sentence_rounds"] = [round(t, 4) for t in times[name]]
            row["time_ratio_to_first"] = round(statistics.median(times[name]) / base, 3)
            results["runs"][f"{name}/{corpus_name}"] = row
            print(
                f"{name:9s} {corpus_name:9s} n={row['sentences']:5d} facts/sent={row['facts_per_sentence']:.2f} "
                f"with-triple={row['pct_with_triple']:5.1f}% non-speaker-entity="
                f"{row['pct_with_non_speaker_entity']:5.1f}% vocab={row['pct_facts_in_vocabulary']}% "
                f"ms/sent={row['ms_per_sentence_median']:.3f} (x{row['time_ratio_to_first']})"
            )
            if args.sample:
                rows = sample(corpus, extract, args.sample, args.seed)
                path = args.out / f"sample_{corpus_name}_{name}.jsonl"
                path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_json(args.out / "extraction.json", results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
