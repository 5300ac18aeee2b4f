"""Commands that read and write memories: add, import, search, query, show, history, forget."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from neusym.cli._app import app
from neusym.cli._base import (
    Opts,
    command,
    emit,
    parse_duration,
    parse_json_object,
    parse_time,
    progress_bar,
)
from neusym.cli._render import kv_table, print_records, print_results, record_json, result_json, when
from neusym.errors import InvalidInputError

if TYPE_CHECKING:
    from neusym.record import MemoryRecord

__all__: list[str] = []


def _all_statuses() -> list[str]:
    from neusym.record import MemoryStatus

    return [s.value for s in MemoryStatus]


_MULTI = "repeat the option for several values"


def _confirm(opts: Opts, yes: bool, what: str) -> None:
    """Irreversible or wide changes need --yes (or an interactive confirmation on a terminal)."""
    if yes:
        return
    if sys.stdin.isatty() and not opts.json:
        if typer.confirm(f"{what} Continue?", default=False, err=True):
            return
        raise typer.Exit(1)
    raise InvalidInputError(f"{what} Add --yes to confirm (or --dry-run to preview).")


# ---------------------------------------------------------------------------------------------------- add
@command(app, "add")
def add_cmd(
    opts: Opts,
    text: Annotated[list[str], typer.Argument(help="The statement to remember ('-' reads stdin).")],
    type_: Annotated[str | None, typer.Option("--type", "-t", help="Force the memory type (fact, preference, "
                                              "instruction, plan, emotion, observation, reflection, "
                                              "knowledge).")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help=f"Tag ({_MULTI}).")] = None,
    importance: Annotated[float | None, typer.Option(min=0.0, max=1.0)] = None,
    confidence: Annotated[float | None, typer.Option(min=0.0, max=1.0)] = None,
    ttl: Annotated[str | None, typer.Option(help="Expire after e.g. 10m, 2h, 7d.")] = None,
    valid_from: Annotated[str | None, typer.Option("--valid-from", help="Event time (ISO-8601, epoch, -3d).")]
    = None,
    speaker: Annotated[str | None, typer.Option(help="Who said it (prefixes the text with --verbatim).")] = None,
    metadata: Annotated[str | None, typer.Option(help="JSON object stored with the memory.")] = None,
    origin: Annotated[str, typer.Option(help="user, agent, tool, import or system (sets the trust).")] = "user",
    verbatim: Annotated[bool, typer.Option("--verbatim", help="Store the text as one memory, no splitting "
                                           "or type inference.")] = False,
) -> None:
    """Remember a statement (extraction and governance run as in the library)."""
    content = sys.stdin.read() if text == ["-"] else " ".join(text)
    with opts.memory() as mem:
        res = mem.add(content, scope=opts.scope(mem), type=type_, tags=tag or None, importance=importance,
                      confidence=confidence, ttl=parse_duration(ttl, "--ttl") if ttl else None,
                      valid_from=parse_time(valid_from, "--valid-from") if valid_from else None, speaker=speaker,
                      metadata=parse_json_object(metadata, "--metadata"), origin=origin, infer=not verbatim)
        data = {"stored": [record_json(r) for r in res],
                "decisions": [{"action": d.action.value, "reason": d.reason, "memory_id": d.memory_id or d.record.id,
                               "target_id": d.target_id, "stored": d.stored} for d in res.decisions]}

    def human(c: Console) -> None:
        for d in res.decisions:
            colour = "green" if d.stored and d.action.value.startswith("store") else \
                "red" if d.action.value in ("reject", "quarantine") else "yellow"
            c.print(f"[{colour}]{d.action.value}[/] {escape(d.record.content)}  [dim]{escape(d.reason)}[/]")
            c.print(f"  [dim]id {d.memory_id or d.record.id}[/]")

    emit(opts, data, human)


# ---------------------------------------------------------------------------------------------------- import
@command(app, "import", tenants=True)
def import_cmd(
    opts: Opts,
    file: Annotated[Path, typer.Argument(help="The file to import ('-' reads stdin).", allow_dash=True)],
    fmt: Annotated[str, typer.Option("--format", "-f", help="auto, jsonl, chat or locomo.")] = "auto",
    verbatim: Annotated[bool, typer.Option("--verbatim", help="One memory per item, no splitting or type "
                                           "inference (what the LoCoMo benchmark does).")] = False,
    assistant: Annotated[str | None, typer.Option(help="Chat logs: this speaker is the assistant.")] = None,
    batch: Annotated[int, typer.Option(min=1, max=1000, help="Statements per write.")] = 256,
    trust_file_origin: Annotated[bool, typer.Option("--trust-file-origin", help="Keep the lines' own 'origin' "
                                                    "and 'confidence' (default: ignored; stored as origin "
                                                    "'import').")]
    = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Parse and count, write nothing.")] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr.")] = True,
) -> None:
    """Import JSONL, plain chat logs or LoCoMo JSON, with a progress bar and a summary. --user/--agent/--session
    win over the ids in the file; a file may name tenants only with --all-tenants."""
    if opts.all_tenants and opts.user is not None:
        raise InvalidInputError("pass either --user or --all-tenants")
    with opts.memory() as mem, progress_bar(opts, "importing", enabled=progress) as bar:
        report = mem.import_file(sys.stdin if str(file) == "-" else file, format=fmt, infer=not verbatim,
                                 batch=batch, assistant=assistant, trust_file_origin=trust_file_origin,
                                 dry_run=dry_run, all_tenants=opts.all_tenants, progress=bar,
                                 user_id=opts.user, agent_id=opts.agent, session_id=opts.session)

    def human(c: Console) -> None:
        verb = "would import" if dry_run else "imported"
        c.print(f"{verb} [bold]{report.items}[/] items from {escape(report.file)} ({report.format}): "
                f"{report.turns} turns, {report.statements} statements, {report.sessions} sessions, "
                f"{report.tenants} tenant(s)")
        if not dry_run:
            parts = ", ".join(f"{k} {v}" for k, v in report.decisions.items())
            c.print(f"stored [bold green]{report.stored}[/] memories ({parts}) in {report.seconds:.1f}s")
        if report.scope_overridden:
            c.print(f"[yellow]{report.scope_overridden} item(s) named other scope ids; the options won[/]")
        if report.trust_ignored:
            c.print(f"[yellow]{report.trust_ignored} item(s) named an origin or confidence; ignored, stored as "
                    "origin 'import' (--trust-file-origin keeps them)[/]")
        if report.ignored_fields:
            c.print(f"[yellow]ignored fields:[/] {', '.join(report.ignored_fields)}")

    emit(opts, report.as_dict(), human)


# ---------------------------------------------------------------------------------------------------- search
@command(app, "search", tenants=True)
def search_cmd(
    opts: Opts,
    query: Annotated[list[str], typer.Argument(help="What to look for.")],
    k: Annotated[int, typer.Option("--k", "-k", min=0, max=1000, help="How many results.")] = 10,
    explain: Annotated[bool, typer.Option("--explain", "-e", help="Show every score component and the graph "
                                          "path.")] = False,
    type_: Annotated[list[str] | None, typer.Option("--type", "-t", help=f"Memory type ({_MULTI}).")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help=f"Tag ({_MULTI}).")] = None,
    entity: Annotated[list[str] | None, typer.Option("--entity", help=f"Mentions this entity ({_MULTI}).")]
    = None,
    status: Annotated[list[str] | None, typer.Option("--status", help=f"Status ({_MULTI}; default active, "
                                                     "pending).")] = None,
    valid_at: Annotated[str | None, typer.Option("--valid-at", help="Point-in-time search.")] = None,
    time_from: Annotated[str | None, typer.Option("--from", help="Event time from.")] = None,
    time_to: Annotated[str | None, typer.Option("--to", help="Event time to.")] = None,
    min_score: Annotated[float | None, typer.Option("--min-score")] = None,
    recipe: Annotated[str | None, typer.Option(help="Retrieval recipe (e.g. hybrid_graph, dense_only).")] = None,
    touch: Annotated[bool, typer.Option("--touch/--no-touch", help="Count this read as an access (feeds "
                                        "decay); off so that looking does not change the memory.")] = False,
) -> None:
    """Two-stage retrieval (FAISS + BM25, then the graph), optionally explained."""
    with opts.memory() as mem:
        results = mem.search(
            " ".join(query), scope=opts.scope(mem), k=k, types=type_, tags=tag, entities=entity, statuses=status,
            valid_at=parse_time(valid_at, "--valid-at") if valid_at else None,
            time_from=parse_time(time_from, "--from") if time_from else None,
            time_to=parse_time(time_to, "--to") if time_to else None, min_score=min_score, recipe=recipe,
            all_tenants=opts.all_tenants, touch=touch)
    emit(opts, {"query": " ".join(query), "results": [result_json(r, explain) for r in results]},
         lambda c: print_results(c, results, explain=explain))


# ---------------------------------------------------------------------------------------------------- query
@command(app, "query", tenants=True)
def query_cmd(
    opts: Opts,
    entity: Annotated[list[str] | None, typer.Option("--entity", help=f"Mentions this entity ({_MULTI}).")]
    = None,
    predicate: Annotated[str | None, typer.Option(help="States this fact predicate (lives_in, likes, ...).")]
    = None,
    obj: Annotated[list[str] | None, typer.Option("--object", help=f"Fact object entity ({_MULTI}).")] = None,
    type_: Annotated[list[str] | None, typer.Option("--type", "-t", help=f"Memory type ({_MULTI}).")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help=f"Tag ({_MULTI}).")] = None,
    plan_state: Annotated[list[str] | None, typer.Option("--plan-state", help=f"open, done, cancelled "
                                                         f"({_MULTI}).")] = None,
    status: Annotated[list[str] | None, typer.Option("--status", help=f"Status ({_MULTI}; 'all' for every "
                                                     "status; default active, pending).")] = None,
    valid_at: Annotated[str | None, typer.Option("--valid-at", help="What was true at this time.")] = None,
    time_from: Annotated[str | None, typer.Option("--from", help="Event time from.")] = None,
    time_to: Annotated[str | None, typer.Option("--to", help="Event time to.")] = None,
    due_within: Annotated[str | None, typer.Option("--due-within", help="Plans due within e.g. 14d.")] = None,
    order: Annotated[str, typer.Option(help="recent, oldest, due or importance.")] = "recent",
    limit: Annotated[int, typer.Option(min=0, max=1000)] = 50,
    offset: Annotated[int, typer.Option(min=0)] = 0,
) -> None:
    """Symbolic retrieval: filters on the graph, no vectors (e.g. --type plan --plan-state open --due-within 14d)."""
    statuses = _all_statuses() if status and "all" in status else status
    with opts.memory() as mem:
        records = mem.query(
            scope=opts.scope(mem), entity=entity, predicate=predicate, object=obj, types=type_, tags=tag,
            plan_states=plan_state, statuses=statuses,
            valid_at=parse_time(valid_at, "--valid-at") if valid_at else None,
            time_from=parse_time(time_from, "--from") if time_from else None,
            time_to=parse_time(time_to, "--to") if time_to else None,
            due_within=parse_duration(due_within, "--due-within") if due_within else None, order=order,
            limit=limit, offset=offset, all_tenants=opts.all_tenants)
    emit(opts, {"count": len(records), "memories": [record_json(r) for r in records]},
         lambda c: print_records(c, records))


# ---------------------------------------------------------------------------------------------------- show
@command(app, "show", tenants=True)
def show_cmd(
    opts: Opts,
    memory_id: Annotated[str, typer.Argument(help="The memory id.")],
) -> None:
    """Every field of one memory and its links to other memories."""
    from neusym.symbolic.store import RELATIONS

    with opts.memory() as mem:
        rec = mem.get(memory_id, scope=opts.scope(mem), all_tenants=opts.all_tenants)
        sc = opts.scope(mem) if not opts.all_tenants else mem.scope_for(user_id=rec.scope.user_id)
        links = mem.store.relations_among([rec.id], RELATIONS, sc)
    rel = [{"from": s, "rel": r, "to": d} for s, r, d in sorted(set(links))]
    data = {"memory": record_json(rec), "links": rel}

    def human(c: Console) -> None:
        c.print(f"[bold]{escape(rec.content)}[/]")
        kv_table(c, {k: v for k, v in _fields(rec).items() if v not in (None, "", [], {})})
        if rel:
            c.print("[bold]links[/]")
            for x in rel:
                arrow = f"-[{x['rel']}]-> {x['to']}" if x["from"] == rec.id else f"<-[{x['rel']}]- {x['from']}"
                c.print(f"  {escape(arrow)}")

    emit(opts, data, human)


def _fields(rec: MemoryRecord) -> dict[str, Any]:
    return {
        "id": rec.id, "type": rec.type.value, "status": rec.status.value,
        "scope": {k: v for k, v in rec.scope.as_params().items() if v},
        "created": when(rec.created_at), "updated": when(rec.updated_at), "valid from": when(rec.valid_from),
        "valid to": when(rec.valid_to), "expires": when(rec.expires_at), "importance": rec.importance,
        "confidence": rec.confidence, "strength": round(rec.strength, 4), "version": rec.version,
        "accessed": f"{rec.access_count}x, last {when(rec.last_accessed_at) or 'never'}",
        "plan": f"{rec.plan_state.value} due {when(rec.plan_due) or '-'}" if rec.plan_state else None,
        "entities": rec.entities,
        "facts": [f"{t.subject} {'' if t.polarity else 'not '}{t.predicate} {t.object}" for t in rec.triples],
        "tags": rec.tags, "flags": rec.flags, "intent": rec.intent,
        "source": {k: v for k, v in rec.source.model_dump().items() if v is not None},
        "metadata": rec.metadata or None,
    }


# ---------------------------------------------------------------------------------------------------- history
@command(app, "history")
def history_cmd(
    opts: Opts,
    memory_id: Annotated[str, typer.Argument(help="The memory id.")],
) -> None:
    """The audit trail of one memory, oldest first (admission, edits, supersessions, reviews, forgets)."""
    with opts.memory() as mem:
        rows = mem.history(memory_id, scope=opts.scope(mem))
    for r in rows:
        r.pop("seq", None)

    def human(c: Console) -> None:
        if not rows:
            c.print(f"[dim](no audit entries for {escape(memory_id)} in this scope)[/]")
            return
        table = Table(header_style="bold")
        for col in ("at", "action", "actor", "reason", "details"):
            table.add_column(col, overflow="fold", no_wrap=col in ("at", "action"))
        from neusym.record import from_epoch

        for r in rows:
            details = ", ".join(f"{k}={v}" for k, v in (r.get("details") or {}).items())
            table.add_row(when(from_epoch(r.get("at"))), str(r.get("action")), str(r.get("actor") or ""),
                          escape(str(r.get("reason") or "")), escape(details))
        c.print(table)

    emit(opts, {"memory_id": memory_id, "history": rows}, human)


# ---------------------------------------------------------------------------------------------------- forget
@command(app, "forget")
def forget_cmd(
    opts: Opts,
    ids: Annotated[list[str] | None, typer.Argument(help="Memory ids to forget.")] = None,
    query: Annotated[str | None, typer.Option("--query", "-q", help="Forget by meaning (topic, entity, "
                                              "similarity), e.g. 'my health'.")] = None,
    everything: Annotated[bool, typer.Option("--everything", help="Forget the whole scope.")] = False,
    hard: Annotated[bool, typer.Option("--hard", help="Purge now from graph, indexes and caches (default: "
                                       "archive, purged later by the janitor).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Show what would be forgotten.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Confirm --hard / --everything.")] = False,
    reason: Annotated[str, typer.Option(help="Recorded in the audit trail.")] = "forgotten on request",
) -> None:
    """Forget memories by id, by meaning (--query) or a whole scope (--everything); --dry-run previews."""
    chosen = sum([bool(ids), query is not None, everything])
    if chosen != 1:
        raise InvalidInputError("give memory ids, --query or --everything (exactly one)")
    with opts.memory() as mem:
        sc = opts.scope(mem)
        if dry_run:
            data = _forget_preview(mem, sc, ids or [], query, everything)
        else:
            if hard or everything:
                _confirm(opts, yes, f"This {'purges' if hard else 'archives'} "
                         f"{'every memory in ' + str(sc.as_params()) if everything else 'memories'} "
                         f"{'irreversibly' if hard else ''}.".replace("  ", " "))
            if query is not None:
                report = mem.forget(query=query, scope=sc, hard=hard, confirm=True, reason=reason, actor="cli")
            else:
                report = mem.forget(ids or None, scope=sc, everything=everything, hard=hard, reason=reason,
                                    actor="cli")
            data = {"dry_run": False, "applied": report.applied, "hard": report.hard, "count": report.count,
                    "ids": report.ids}

    def human(c: Console) -> None:
        if dry_run:
            c.print(f"would forget [bold]{len(data['items'])}[/] memories ({'hard' if hard else 'soft'}):")
            for it in data["items"]:
                why = f"  [dim]{escape('; '.join(it.get('why') or []))}[/]" if it.get("why") else ""
                c.print(f"  {it['id']}  [magenta]{it['type']}[/] {it['status']}  {escape(it['content'])}{why}")
            if data.get("missing"):
                c.print(f"[yellow]not found in this scope:[/] {', '.join(data['missing'])}")
        else:
            c.print(f"forgot [bold]{data['count']}[/] memories ({'hard: purged' if hard else 'soft: archived'})")

    emit(opts, data, human)


def _forget_preview(mem: Any, sc: Any, ids: list[str], query: str | None, everything: bool) -> dict[str, Any]:
    if query is not None:
        preview = mem.forget_preview(query, scope=sc)
        items = [{"id": i.id, "content": i.content, "type": i.type, "status": i.status, "why": i.why,
                  "score": round(i.score, 4)} for i in preview.items]
        return {"dry_run": True, "query": query, "topic": preview.topic, "items": items}
    if everything:
        records: list[MemoryRecord] = []
        while True:
            page = mem.query(scope=sc, statuses=_all_statuses(), order="oldest", limit=1000, offset=len(records))
            records.extend(page)
            if len(page) < 1000:
                break
        found = records
    else:
        found = mem.get_many(ids, scope=sc)
    missing = sorted(set(ids) - {r.id for r in found})
    return {"dry_run": True, "items": [{"id": r.id, "content": r.content, "type": r.type.value,
                                        "status": r.status.value} for r in found], "missing": missing}
