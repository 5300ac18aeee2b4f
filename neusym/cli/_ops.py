"""Operator commands: curate, reflect, review, rollback, stats, export, restore, graph, cypher, reindex, demo."""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from neusym.cli._app import app, review_app
from neusym.cli._base import Opts, command, emit, err_console, jsonable, parse_time
from neusym.cli._render import kv_table, print_records, record_json
from neusym.errors import InvalidInputError
from neusym.record import MemoryRecord, Scope

__all__: list[str] = []


def _need_scope_or_all(opts: Opts, what: str) -> None:
    if not opts.scoped and not opts.all_tenants:
        raise InvalidInputError(f"{what} needs a scope (--user/--agent/--session) or --all-tenants")


# ---------------------------------------------------------------------------------------------------- curate
@command(app, "curate", tenants=True)
def curate_cmd(
    opts: Opts,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Report what would change.")] = False,
    now: Annotated[str | None, typer.Option(help="Simulated clock (ISO-8601, epoch, +30d).")] = None,
) -> None:
    """Run the janitor once: expire TTLs, decay, archive faded memories, purge old archives."""
    _need_scope_or_all(opts, "curate")
    with opts.memory() as mem:
        sc = opts.scope(mem)
        report = mem.run_janitor(scope=None if sc.is_empty else sc,
                                 now=parse_time(now, "--now") if now else None, dry_run=dry_run)
    data = jsonable(report.model_dump(mode="json"))

    def human(c: Console) -> None:
        verb = "would" if dry_run else "did"
        c.print(f"janitor ({verb}): expired {len(report.expired)}, decayed {report.decayed}, archived "
                f"{len(report.archived)}, purged {len(report.purged)}, compacted {report.compacted}")

    emit(opts, data, human)


# ---------------------------------------------------------------------------------------------------- reflect
@command(app, "reflect")
def reflect_cmd(
    opts: Opts,
    memory_id: Annotated[list[str] | None, typer.Option("--id", help="Reflect on these memories (repeat).")]
    = None,
    entity: Annotated[str | None, typer.Option(help="Reflect on one entity's neighbourhood.")] = None,
    goal: Annotated[str | None, typer.Option(help="What the reflection should focus on.")] = None,
    cool: Annotated[str, typer.Option(help="What happens to covered observations: demote, archive, none.")]
    = "demote",
    only_unreflected: Annotated[bool, typer.Option("--only-unreflected", help="Skip memories a reflection "
                                                   "already covers.")] = False,
    session_end: Annotated[bool, typer.Option("--session-end", help="End the --session: reflect it now.")]
    = False,
) -> None:
    """Consolidate memories into a reflection linked DERIVED_FROM its sources (LLM-free extractive reflector)."""
    with opts.memory() as mem:
        if session_end:
            if not opts.session:
                raise InvalidInputError("--session-end needs --session")
            out = mem.session_end(session_id=opts.session, user_id=opts.user, agent_id=opts.agent, wait=True)
            if out is None:
                raise InvalidInputError(f"session {opts.session!r} has nothing to reflect")
        else:
            out = mem.reflect(scope=opts.scope(mem), ids=memory_id, entity=entity, goal=goal, cool=cool,
                              only_unreflected=only_unreflected)
    data = out.as_dict()

    def human(c: Console) -> None:
        state = "[green]stored[/]" if out.stored else "[yellow]not stored[/]"
        c.print(f"reflection {state} {out.id or ''}")
        c.print(escape(out.summary))
        c.print(f"[dim]{len(out.source_ids)} sources, {len(out.reinforced)} reinforced, {len(out.cooled)} "
                "cooled[/]")

    emit(opts, data, human)


# ---------------------------------------------------------------------------------------------------- review
@command(review_app, "list", tenants=True)
def review_list_cmd(
    opts: Opts,
    kind: Annotated[str | None, typer.Option(help="quarantine, conflict, dedup, contradiction or suspicious.")]
    = None,
    limit: Annotated[int, typer.Option(min=1, max=10000)] = 100,
) -> None:
    """Items waiting for a decision."""
    with opts.memory() as mem:
        items = mem.review_queue(kind, scope=opts.scope(mem), limit=limit, all_tenants=opts.all_tenants)
    data = {"count": len(items), "items": [{"memory_id": i.memory_id, "kind": i.kind, "reason": i.reason,
                                            "related": i.related, "memory": record_json(i.record)} for i in items]}

    def human(c: Console) -> None:
        if not items:
            c.print("[dim](the review queue is empty)[/]")
            return
        table = Table(header_style="bold")
        for col in ("id", "kind", "status", "content", "why", "related"):
            table.add_column(col, overflow="fold", no_wrap=col in ("id", "kind"))
        for i in items:
            table.add_row(i.memory_id, i.kind, i.record.status.value, escape(i.record.content), escape(i.reason),
                          ", ".join(i.related))
        c.print(table)

    emit(opts, data, human)


def _review_decide(opts: Opts, memory_id: str, reason: str, approve: bool) -> None:
    with opts.memory() as mem:
        rec: MemoryRecord | None
        if approve:
            rec = mem.review_approve(memory_id, scope=opts.scope(mem), actor="cli", reason=reason)
        else:
            rec = mem.review_reject(memory_id, scope=opts.scope(mem), actor="cli", reason=reason)
    verb = "approved" if approve else "rejected"
    data = {"memory_id": memory_id, "decision": verb, "memory": record_json(rec) if rec is not None else None,
            "purged": rec is None}

    def human(c: Console) -> None:
        now = "purged" if rec is None else f"now {rec.status.value}"
        c.print(f"{verb} {memory_id}: {now}")

    emit(opts, data, human)


@command(review_app, "approve")
def review_approve_cmd(
    opts: Opts,
    memory_id: Annotated[str, typer.Argument(help="The memory to approve.")],
    reason: Annotated[str, typer.Option(help="Recorded in the audit trail.")] = "approved",
) -> None:
    """Accept an item: release from quarantine, make a conflicting value current, confirm a merge, or accept a
    contradiction."""
    _review_decide(opts, memory_id, reason, True)


@command(review_app, "reject")
def review_reject_cmd(
    opts: Opts,
    memory_id: Annotated[str, typer.Argument(help="The memory to reject.")],
    reason: Annotated[str, typer.Option(help="Recorded in the audit trail.")] = "rejected",
) -> None:
    """Refuse an item: purge a quarantined one, let the other side of a conflict win, keep a suspected duplicate
    as its own memory, or archive the wrong side of a contradiction."""
    _review_decide(opts, memory_id, reason, False)


# ---------------------------------------------------------------------------------------------------- rollback
@command(app, "rollback")
def rollback_cmd(
    opts: Opts,
    memory_id: Annotated[str, typer.Argument(help="The memory whose last change to undo.")],
    audit_id: Annotated[str | None, typer.Option("--audit-id", help="Undo this audit entry instead (see "
                                                 "`neusym history`).")] = None,
    reason: Annotated[str, typer.Option(help="Recorded in the audit trail.")] = "rollback",
) -> None:
    """Undo the latest (or the given) reversible change: an edit, a supersession, an archive or a soft forget."""
    with opts.memory() as mem:
        rec = mem.rollback(memory_id, audit_id=audit_id, scope=opts.scope(mem), actor="cli", reason=reason)
    emit(opts, {"memory": record_json(rec)}, lambda c: print_records(c, [rec], title="after rollback"))


# ---------------------------------------------------------------------------------------------------- stats
@command(app, "stats", tenants=True)
def stats_cmd(opts: Opts) -> None:
    """Counts by status and type, entities, index state and backend."""
    with opts.memory() as mem:
        sc = opts.scope(mem)
        data = mem.stats(scope=sc, all_tenants=opts.all_tenants)
        data["scope"] = {k: v for k, v in sc.as_params().items() if v} if not opts.all_tenants else "all tenants"
    emit(opts, data, lambda c: kv_table(c, data))


# ---------------------------------------------------------------------------------------------------- export / restore
@contextmanager
def _writer(target: Path) -> Iterator[IO[str]]:
    """Write to ``target`` atomically (``-`` is stdout; ``.gz`` compresses)."""
    if str(target) == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    target = target.expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    os.close(fd)
    try:
        raw: IO[str] = (gzip.open(tmp, "wt", encoding="utf-8") if target.suffix == ".gz"  # noqa: SIM115
                        else open(tmp, "w", encoding="utf-8"))  # noqa: SIM115
        with raw as fh:
            yield fh
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _reader(source: Path, stdin: str | None = None) -> IO[str]:
    if str(source) == "-":
        return io.StringIO(stdin if stdin is not None else sys.stdin.read())
    source = source.expanduser()
    if not source.is_file():
        raise InvalidInputError(f"no such file: {source}")
    if source.suffix == ".gz":
        return gzip.open(source, "rt", encoding="utf-8")
    return open(source, encoding="utf-8")  # noqa: SIM115 - closed by the caller


def _progress(opts: Opts, label: str, *, enabled: bool) -> Progress:
    return Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=err_console(), disable=not enabled or opts.json, transient=False)


@command(app, "export", tenants=True)
def export_cmd(
    opts: Opts,
    out: Annotated[Path, typer.Argument(help="Output JSONL file (.gz compresses; '-' is stdout).",
                                        allow_dash=True)],
    embeddings: Annotated[bool, typer.Option("--embeddings/--no-embeddings", help="Include the base64 "
                                             "float32 embeddings (restore re-embeds without them).")] = True,
    progress: Annotated[bool, typer.Option("--progress/--no-progress")] = True,
) -> None:
    """Back up a scope (or --all-tenants) exactly: memories, embeddings, entities, facts, edges and audit."""
    from neusym._version import __version__
    from neusym.symbolic.transfer import export_lines

    _need_scope_or_all(opts, "export")
    started = time.perf_counter()
    counts: dict[str, Any] = {}
    with opts.memory() as mem:
        sc = opts.scope(mem)
        total = mem.stats(scope=sc, all_tenants=opts.all_tenants)["memories"]
        header = {"exported_at": time.time(), "neusym": __version__, "backend": mem.executor.dialect.value,
                  "embedder": mem.embedder.name, "dimension": mem.embedder.dimension,
                  "graph": mem.config.graph_name}
        with _writer(out) as fh, _progress(opts, "exporting", enabled=progress and str(out) != "-") as bar:
            task = bar.add_task("export", total=total)
            for line in export_lines(mem.store, sc, all_tenants=opts.all_tenants, embeddings=embeddings,
                                     header=header):
                fh.write(json.dumps(line, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n")
                if line["kind"] == "memory":
                    bar.advance(task)
                elif line["kind"] == "end":
                    counts = dict(line["counts"])
    data = {"file": str(out), "scope": sc.as_params() if not opts.all_tenants else "all tenants",
            "counts": counts, "embeddings": embeddings, "seconds": round(time.perf_counter() - started, 3)}

    def human(c: Console) -> None:
        parts = ", ".join(f"{v} {k}" for k, v in counts.items())
        c.print(f"exported {parts} to {escape(str(out))}")

    if str(out) == "-":  # the data went to stdout: the summary goes to stderr
        err_console().print(f"exported {counts}")
        return
    emit(opts, data, human)


@command(app, "restore", tenants=True)
def restore_cmd(
    opts: Opts,
    file: Annotated[Path, typer.Argument(help="An export written by `neusym export` ('-' reads stdin).",
                                         allow_dash=True)],
    skip_existing: Annotated[bool, typer.Option("--skip-existing", help="Keep memories whose id already exists "
                                                "(default: refuse the file).")] = False,
    reembed: Annotated[bool, typer.Option("--reembed", help="Embed every memory again with the target's "
                                          "embedder (after a model change).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Validate the file, write nothing.")] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress")] = True,
) -> None:
    """Write an export back exactly as it was (ids, times, statuses, embeddings, edges, audit)."""
    from neusym.symbolic.transfer import Restorer, validate_line

    started = time.perf_counter()
    header: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    ids: list[str] = []
    kinds: dict[str, int] = {}
    scopes: set[tuple[str | None, str | None, str | None]] = set()
    need_embedding = 0
    stdin = sys.stdin.read() if str(file) == "-" else None  # read twice below, so keep it
    # pass 1: validate everything before the first write
    with _reader(file, stdin) as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            where = f"{file}:{n}"
            try:
                line = json.loads(raw)
            except ValueError as err:
                raise InvalidInputError(f"{where}: not valid JSON ({err})") from err
            validate_line(line, where)
            kind = line["kind"]
            if header is None and kind != "header":
                raise InvalidInputError(f"{where}: the file does not start with an export header")
            if kind == "header":
                if header is not None:
                    raise InvalidInputError(f"{where}: a second header (concatenated exports?)")
                header = line
            elif end is not None:
                raise InvalidInputError(f"{where}: data after the end line")
            elif kind == "end":
                end = line
            else:
                kinds[kind] = kinds.get(kind, 0) + 1
            if kind == "memory":
                p = line["props"]
                ids.append(p["id"])
                scopes.add((p.get("user_id"), p.get("agent_id"), p.get("session_id")))
                need_embedding += 0 if line.get("embedding") else 1
    if header is None:
        raise InvalidInputError(f"{file}: empty file")
    if end is None:
        raise InvalidInputError(f"{file}: truncated export (no end line)")
    expected = {k: v for k, v in (end.get("counts") or {}).items() if v}
    if expected != kinds:
        raise InvalidInputError(f"{file}: counts do not match the end line (file {kinds}, end line {expected})")
    if len(set(ids)) != len(ids):
        raise InvalidInputError(f"{file}: a memory id appears twice")
    allowed = None if opts.all_tenants else (Scope(**opts.ids) if opts.scoped else Scope(**header.get("scope")
                                                                                        or {}))
    if allowed is not None:
        if allowed.is_empty:
            raise InvalidInputError("this export spans tenants; restore it with --all-tenants")
        outside = [s for s in scopes if not allowed.contains(Scope(user_id=s[0], agent_id=s[1], session_id=s[2]))]
        if outside:
            raise InvalidInputError(f"the export holds memories outside {allowed.as_params()} (e.g. "
                                    f"{dict(zip(('user_id', 'agent_id', 'session_id'), outside[0], strict=True))}); "
                                    "pass the matching scope or --all-tenants")

    with opts.memory() as mem:
        dim = mem.embedder.dimension
        if not reembed and need_embedding < len(ids) and header.get("dimension") not in (None, dim):
            raise InvalidInputError(f"the export holds {header.get('dimension')}-d embeddings "
                                    f"({header.get('embedder')}); this memory uses {dim}-d ({mem.embedder.name}): "
                                    "pass the same --embedder or --reembed")
        restorer = Restorer(mem.store, skip_existing=skip_existing, reembed=reembed, dimension=dim,
                            embed=mem.embedder.embed_documents)
        existing = restorer.existing(ids)
        if existing and not skip_existing:
            raise InvalidInputError(f"{len(existing)} of the {len(ids)} memories already exist here (e.g. "
                                    f"{sorted(existing)[0]}); restore into an empty graph or pass --skip-existing")
        if dry_run:
            report: dict[str, Any] = {"memories": len(ids) - len(existing), "skipped": len(existing), **{
                k: v for k, v in kinds.items() if k != "memory"}}
        else:
            with _reader(file, stdin) as fh, _progress(opts, "restoring", enabled=progress) as bar:
                task = bar.add_task("restore", total=len(ids))
                for raw in fh:
                    if raw.strip():
                        line = json.loads(raw)
                        restorer.feed(line)
                        if line["kind"] == "memory":
                            bar.advance(task)
                report = restorer.finish().as_dict()
                mem.derived.catch_up(mem.store)  # FAISS/BM25 follow the graph, as after any write
                mem.derived.save()
    data = {"file": str(file), "dry_run": dry_run, "restored": report,
            "source": {k: header.get(k) for k in ("scope", "all_tenants", "embedder", "dimension", "exported_at",
                                                  "neusym")},
            "seconds": round(time.perf_counter() - started, 3)}

    def human(c: Console) -> None:
        verb = "would restore" if dry_run else "restored"
        c.print(f"{verb} " + ", ".join(f"{v} {k}" for k, v in report.items() if v) + f" from {escape(str(file))}")

    emit(opts, data, human)


# ---------------------------------------------------------------------------------------------------- graph
@command(app, "graph", tenants=True)
def graph_cmd(
    opts: Opts,
    html: Annotated[Path | None, typer.Option("--html", help="Write the interactive page (self-contained, "
                                              "works offline).")] = None,
    graphml: Annotated[Path | None, typer.Option("--graphml", help="Write GraphML (Gephi, yEd, NetworkX).")]
    = None,
    mermaid: Annotated[Path | None, typer.Option("--mermaid", help="Write Mermaid flowchart text ('-' is "
                                                 "stdout).", allow_dash=True)] = None,
    png: Annotated[Path | None, typer.Option("--png", help="Screenshot of the page (needs Chromium).")] = None,
    limit: Annotated[int, typer.Option(min=1, help="Draw at most the newest N memories.")] = 500,
    status: Annotated[list[str] | None, typer.Option("--status", help="Only these statuses (repeat; default "
                                                     "all).")] = None,
    title: Annotated[str | None, typer.Option(help="Page title.")] = None,
    size: Annotated[str, typer.Option(help="Screenshot size WIDTHxHEIGHT.")] = "1400x900",
) -> None:
    """Export the scope's graph: memories, entities and relations as HTML, GraphML, Mermaid or PNG."""
    from neusym.symbolic.transfer import collect
    from neusym.visual import build_view, to_graphml, to_html, to_mermaid

    if not any((html, graphml, mermaid, png)):
        raise InvalidInputError("choose at least one of --html, --graphml, --mermaid, --png")
    try:
        width, height = (int(x) for x in size.lower().split("x"))
    except ValueError as err:
        raise InvalidInputError(f"--size must look like 1400x900, got {size!r}") from err
    with opts.memory() as mem:
        sc = opts.scope(mem)
        dump = collect(mem.store, sc, all_tenants=opts.all_tenants, statuses=status, limit=limit)
    scope = sc.as_params() if not opts.all_tenants else {}
    label = ", ".join(f"{k.removesuffix('_id')} {v}" for k, v in scope.items() if v) or "all tenants"
    view = build_view(dump, title=title or f"NeuSym memory graph: {label}", scope=scope)
    written: dict[str, str] = {}

    def write(path: Path, text: str) -> None:
        path = path.expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    page = to_html(view) if html or png else ""
    if html:
        write(html, page)
        written["html"] = str(html)
    if graphml:
        write(graphml, to_graphml(view))
        written["graphml"] = str(graphml)
    if mermaid:
        text = to_mermaid(view)
        if str(mermaid) == "-":
            sys.stdout.write(text)
        else:
            write(mermaid, text)
        written["mermaid"] = str(mermaid)
    if png:
        from neusym.visual.browser import screenshot

        if html:
            screenshot(html, png, width=width, height=height)
        else:
            with tempfile.TemporaryDirectory(prefix="neusym-graph-") as tmp:
                tmp_page = Path(tmp) / "graph.html"
                tmp_page.write_text(page, encoding="utf-8")
                screenshot(tmp_page, png, width=width, height=height)
        written["png"] = str(png)
    data = {"written": written, **view.counts()}
    if str(mermaid) == "-":
        err_console().print(f"{data['nodes']} nodes, {data['edges']} edges")
        return

    def human(c: Console) -> None:
        more = " (truncated: raise --limit)" if view.truncated else ""
        c.print(f"{data['memories']} memories, {data['entities']} entities, {data['edges']} edges{more}")
        for kind, path in written.items():
            c.print(f"  {kind}: {escape(path)}")

    emit(opts, data, human)


# ---------------------------------------------------------------------------------------------------- cypher
@command(app, "cypher", scope=False, tenants=True)
def cypher_cmd(
    opts: Opts,
    statement: Annotated[str, typer.Argument(help="A read-only Cypher statement.")],
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="KEY=JSON_VALUE (repeat).")] = None,
    limit: Annotated[int, typer.Option(min=1)] = 1000,
) -> None:
    """Guarded read-only Cypher for operators (not tenant-scoped: needs --all-tenants)."""
    if not opts.all_tenants:
        raise InvalidInputError("raw Cypher reads every tenant; pass --all-tenants to acknowledge")
    params: dict[str, Any] = {}
    for p in param or []:
        key, sep, value = p.partition("=")
        if not sep or not key:
            raise InvalidInputError(f"--param {p!r} must look like key=value")
        try:
            params[key] = json.loads(value)
        except ValueError:
            params[key] = value
    with opts.memory() as mem:
        rows = mem.cypher(statement, params, all_tenants=True, limit=limit)
    rows = [{k: (v[:24] + "...") if k == "embedding" and isinstance(v, str) else v for k, v in r.items()}
            for r in rows]

    def human(c: Console) -> None:
        if not rows:
            c.print("[dim](no rows)[/]")
            return
        table = Table(header_style="bold")
        cols = list(rows[0])
        for col in cols:
            table.add_column(col, overflow="fold")
        for r in rows:
            table.add_row(*(escape(json.dumps(jsonable(r.get(col)), ensure_ascii=False)) for col in cols))
        c.print(table)

    emit(opts, {"count": len(rows), "rows": rows}, human)


# ---------------------------------------------------------------------------------------------------- reindex
@command(app, "reindex", scope=False)
def reindex_cmd(opts: Opts) -> None:
    """Rebuild FAISS and BM25 from the graph (the source of truth)."""
    with opts.memory() as mem:
        n = mem.rebuild_index()
    emit(opts, {"reindexed": n}, lambda c: c.print(f"rebuilt the indexes from the graph: {n} memories"))


# ---------------------------------------------------------------------------------------------------- demo
@app.command("demo")
def demo_cmd(
    data_dir: Annotated[str | None, typer.Option("--data-dir", help="Demo data directory (default "
                                                 "NEUSYM_DEMO_DIR or ./.neusym-demo).")] = None,
    phase: Annotated[str, typer.Option(help="all, write or verify.")] = "all",
) -> None:
    """Run the multi-session memory demo on the embedded default (no server, no API key)."""
    if phase not in ("all", "write", "verify"):
        raise typer.BadParameter(f"{phase!r} is not one of 'all', 'write', 'verify'", param_hint="--phase")
    from neusym.demo import run_demo

    raise typer.Exit(run_demo(data_dir, phase=phase))
