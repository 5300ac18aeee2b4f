"""A self-contained, interactive HTML page of a :class:`GraphView`.

Everything is inline (CSS, a small vanilla-JS force layout, the data as JSON), so the page works offline and from
``file://``: no CDN, no fonts, no network request at all. Memory text is data, never markup: it travels in a
``<script type="application/json">`` block (with ``</`` escaped) and reaches the page only through ``textContent``,
so a memory holding ``<script>`` or an ``onerror=`` payload is shown, not run.

DOM contract (used by the tests and handy for scripting): every drawn node is an element with ``data-node`` (plus
``data-id``, ``data-kind``, ``data-type``, ``data-status``), every edge a ``<line data-edge data-rel=...>``, every
timeline bar ``data-bar``; when drawing is done ``<body>`` gets ``data-rendered="nodes/edges"``. Deep links:
``page.html#select=<node id>`` opens a node's details, ``#q=<text>`` pre-fills the search.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from neusym._version import __version__
from neusym.visual.mermaid import TYPE_FILL
from neusym.visual.model import GraphView

__all__ = ["STATUS_COLOURS", "to_html"]

STATUS_COLOURS = {
    "active": "#2e9d4f", "pending": "#ff9f1c", "superseded": "#8c8c8c", "archived": "#c4c4c4",
    "quarantined": "#d62728", "deleted": "#333333",
}
RELATION_STYLE = {
    "MENTIONS": {"colour": "#c9ced6", "dash": "", "arrow": False},
    "RELATES": {"colour": "#4e79a7", "dash": "", "arrow": True},
    "SUPERSEDES": {"colour": "#8c564b", "dash": "7 3", "arrow": True},
    "DERIVED_FROM": {"colour": "#b07aa1", "dash": "2 3", "arrow": True},
    "CONFLICTS_WITH": {"colour": "#d62728", "dash": "5 2", "arrow": False},
    "NEXT": {"colour": "#9a9a9a", "dash": "1 4", "arrow": True},
    "DUPLICATE_OF": {"colour": "#ff9f1c", "dash": "6 2", "arrow": True},
}
ENTITY_COLOUR = "#17becf"

_CSS = """
*{box-sizing:border-box}
html,body{margin:0;height:100%}
body{font:13px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1f2328;
  background:#f6f7f9;display:flex;flex-direction:column}
header{padding:10px 16px 8px;background:#fff;border-bottom:1px solid #dde1e6;display:flex;flex-wrap:wrap;
  align-items:center;gap:6px 18px}
h1{font-size:16px;margin:0;font-weight:600}
h2{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:#57606a;margin:0 0 6px}
.muted{color:#6e7781}
.tools{display:flex;gap:10px;align-items:center;margin-left:auto}
.tools input[type=search]{width:220px;padding:4px 8px;border:1px solid #c9ced6;border-radius:6px}
.tools select,.tools button{padding:3px 8px;border:1px solid #c9ced6;border-radius:6px;background:#fff}
main{flex:1;display:flex;min-height:380px}
#graph-wrap{flex:1;position:relative;background:#fff;margin:8px 0 0 8px;border:1px solid #dde1e6;border-radius:8px;
  overflow:hidden}
#graph{width:100%;height:100%;display:block;cursor:grab;user-select:none}
#graph.panning{cursor:grabbing}
aside{width:300px;padding:8px;overflow:auto;display:flex;flex-direction:column;gap:8px}
aside section{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:8px 10px}
.legend-item{display:flex;align-items:center;gap:6px;padding:1px 2px;cursor:pointer;border-radius:4px}
.legend-item:hover{background:#f0f3f6}
.legend-item.off{opacity:.35;text-decoration:line-through}
.legend-item .count{margin-left:auto;color:#6e7781;font-variant-numeric:tabular-nums}
.sw{width:12px;height:12px;border-radius:50%;flex:none;border:1.5px solid #444}
.sw.ent{border-radius:2px;transform:rotate(45deg) scale(.85)}
.ln{width:22px;height:0;border-top:2px solid;flex:none}
#details dl{margin:0;display:grid;grid-template-columns:auto 1fr;gap:2px 8px}
#details dt{color:#6e7781}
#details dd{margin:0;word-break:break-word}
#details .content{font-size:14px;margin:0 0 8px;white-space:pre-wrap;word-break:break-word}
#details a{color:#0969da;cursor:pointer}
#timeline-wrap{margin:8px;background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:8px 10px 4px}
#timeline{width:100%;display:block}
.node text{font-size:10px;fill:#24292f;pointer-events:none;paint-order:stroke;stroke:#fff;stroke-width:3px}
.node{cursor:pointer}
.node.memory .shape{stroke:#30363d;stroke-width:1.2}
.node.entity .shape{stroke:#0b6b75;stroke-width:1.2}
.node.status-superseded .shape,.bar.status-superseded{stroke-dasharray:3 2;opacity:.6}
.node.status-archived .shape,.bar.status-archived{opacity:.38}
.node.status-pending .shape{stroke:#ff9f1c;stroke-width:3}
.node.status-quarantined .shape{stroke:#d62728;stroke-width:3.5}
.bar.status-quarantined{stroke:#d62728;stroke-width:1.5}
.node.status-deleted .shape{opacity:.25}
.bar-label{font-size:9px;fill:#fff;pointer-events:none}
.edges line{stroke-width:1.3}
.edges line[data-rel=MENTIONS]{stroke-width:.9}
.edge-labels text{font-size:9px;fill:#4e79a7;paint-order:stroke;stroke:#fff;stroke-width:3px;pointer-events:none}
.hidden{display:none}
.dim{opacity:.12}
.hit .shape{stroke:#0969da !important;stroke-width:3.5 !important}
.sel .shape{stroke:#0969da !important;stroke-width:4 !important}
.no-labels .node.memory text,.no-labels .edge-labels{display:none}
.bar{cursor:pointer}
.axis text{font-size:10px;fill:#57606a}
.axis line{stroke:#d0d7de}
#error{color:#d62728;font-weight:600}
"""

_JS = r"""
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var DATA = JSON.parse(document.getElementById("neusym-data").textContent);
  var STYLE = JSON.parse(document.getElementById("neusym-style").textContent);
  var summary = document.getElementById("summary");

  function svg(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) { if (attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, attrs[k]); }
    if (parent) parent.appendChild(e);
    return e;
  }
  function tag(name, text, parent, cls) {
    var e = document.createElement(name);
    if (text !== null && text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    if (parent) parent.appendChild(e);
    return e;
  }
  function when(t) {
    if (typeof t !== "number") return "";
    return new Date(t * 1000).toISOString().replace("T", " ").slice(0, 16) + "Z";
  }
  function rng(seed) {
    return function () {
      seed = (seed + 0x6D2B79F5) | 0;
      var t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  var nodes = DATA.nodes.map(function (n, i) {
    return {i: i, id: n.id, kind: n.kind, label: n.label, type: n.type, status: n.status, data: n.data || {},
            x: 0, y: 0, dx: 0, dy: 0, deg: 0, nb: []};
  });
  var byId = {};
  nodes.forEach(function (n) { byId[n.id] = n; });
  var edges = [];
  DATA.edges.forEach(function (e) {
    var s = byId[e.source], t = byId[e.target];
    if (!s || !t) return;
    var x = {s: s, t: t, rel: e.rel, label: e.label || "", data: e.data || {}};
    s.deg++; t.deg++; s.nb.push(x); t.nb.push(x);
    edges.push(x);
  });
  function radius(n) {
    if (n.kind === "entity") return 5 + Math.min(9, Math.sqrt(n.deg) * 1.6);
    var imp = typeof n.data.importance === "number" ? n.data.importance : 0.5;
    return 6 + 7 * imp;
  }

  // ---------------------------------------------------------------- layout (seeded, synchronous, grid repulsion)
  function layout() {
    var n = nodes.length;
    if (!n) return;
    var rand = rng(7), L = 80, R = Math.sqrt(n) * L * 0.7 + 20, cell = L * 3, k2 = L * L;
    nodes.forEach(function (p) {
      var a = rand() * 2 * Math.PI, r = R * Math.sqrt(rand());
      p.x = Math.cos(a) * r; p.y = Math.sin(a) * r;
    });
    var iters = n > 1500 ? 90 : n > 400 ? 160 : 320;
    var temp = R / 3, cool = Math.pow(0.02, 1 / iters);
    for (var it = 0; it < iters; it++) {
      var grid = new Map();
      nodes.forEach(function (p) {
        p.dx = 0; p.dy = 0;
        var key = Math.floor(p.x / cell) + "," + Math.floor(p.y / cell);
        var b = grid.get(key);
        if (!b) { b = []; grid.set(key, b); }
        b.push(p);
      });
      nodes.forEach(function (p) {
        var cx = Math.floor(p.x / cell), cy = Math.floor(p.y / cell);
        for (var gx = cx - 1; gx <= cx + 1; gx++) {
          for (var gy = cy - 1; gy <= cy + 1; gy++) {
            var b = grid.get(gx + "," + gy);
            if (!b) continue;
            for (var j = 0; j < b.length; j++) {
              var q = b[j];
              if (q === p) continue;
              var ddx = p.x - q.x, ddy = p.y - q.y, d2 = ddx * ddx + ddy * ddy;
              if (d2 < 0.01) { ddx = rand() - 0.5; ddy = rand() - 0.5; d2 = ddx * ddx + ddy * ddy; }
              if (d2 > cell * cell) continue;
              var f = k2 / d2;
              p.dx += ddx * f; p.dy += ddy * f;
            }
          }
        }
      });
      edges.forEach(function (e) {
        var ddx = e.s.x - e.t.x, ddy = e.s.y - e.t.y, d = Math.sqrt(ddx * ddx + ddy * ddy) || 0.01;
        var f = (d / L) * (e.rel === "MENTIONS" ? 0.8 : e.rel === "NEXT" ? 0.5 : 1) / Math.sqrt(Math.min(e.s.deg, e.t.deg));
        e.s.dx -= ddx * f; e.s.dy -= ddy * f; e.t.dx += ddx * f; e.t.dy += ddy * f;
      });
      nodes.forEach(function (p) {
        p.dx -= p.x * 0.03; p.dy -= p.y * 0.03;
        var d = Math.sqrt(p.dx * p.dx + p.dy * p.dy) || 1, m = Math.min(d, temp);
        p.x += (p.dx / d) * m; p.y += (p.dy / d) * m;
      });
      temp *= cool;
    }
    // stretch to the drawing area's shape, so a round cluster uses a wide screen
    var box = root.getBoundingClientRect(), want = box.width > 0 && box.height > 0 ? box.width / box.height : 1.6;
    var x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    nodes.forEach(function (p) { x0 = Math.min(x0, p.x); x1 = Math.max(x1, p.x); y0 = Math.min(y0, p.y); y1 = Math.max(y1, p.y); });
    var have = (x1 - x0 + 1) / (y1 - y0 + 1), sx = Math.min(2.2, Math.max(1, want / have * 0.85));
    nodes.forEach(function (p) { p.x *= sx; });
  }

  // ---------------------------------------------------------------- drawing
  var root = document.getElementById("graph");
  var defs = svg("defs", {}, root);
  Object.keys(STYLE.relations).forEach(function (rel) {
    var m = svg("marker", {id: "arrow-" + rel, viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "7",
                           markerHeight: "7", orient: "auto-start-reverse"}, defs);
    svg("path", {d: "M0,0 L10,5 L0,10 z", fill: STYLE.relations[rel].colour}, m);
  });
  var viewport = svg("g", {id: "viewport"}, root);
  var gEdges = svg("g", {"class": "edges"}, viewport);
  var gLabels = svg("g", {"class": "edge-labels"}, viewport);
  var gNodes = svg("g", {"class": "nodes"}, viewport);

  function colour(n) {
    if (n.kind === "entity") return STYLE.entity;
    if (document.getElementById("colour-by").value === "status") return STYLE.statuses[n.status] || "#999";
    return STYLE.types[n.type] || "#999";
  }

  edges.forEach(function (e) {
    var st = STYLE.relations[e.rel] || {colour: "#999", dash: "", arrow: false};
    e.el = svg("line", {"data-edge": "", "data-rel": e.rel, "data-source": e.s.id, "data-target": e.t.id,
                        stroke: st.colour, "stroke-dasharray": st.dash || null,
                        "marker-end": st.arrow ? "url(#arrow-" + e.rel + ")" : null}, gEdges);
    svg("title", {}, e.el).textContent = e.rel + (e.label ? ": " + e.label : "");
    if (e.rel === "RELATES" && e.label) {
      e.text = svg("text", {"text-anchor": "middle", dy: "-2"}, gLabels);
      e.text.textContent = e.label;
    }
  });
  nodes.forEach(function (n) {
    var g = svg("g", {"data-node": "", "data-id": n.id, "data-kind": n.kind, "data-type": n.type,
                      "data-status": n.status, "class": "node " + n.kind + " status-" + n.status,
                      tabindex: "0"}, gNodes);
    var r = radius(n);
    if (n.kind === "entity") {
      n.shape = svg("rect", {"class": "shape", x: -r * 0.8, y: -r * 0.8, width: r * 1.6, height: r * 1.6,
                             rx: 2, transform: "rotate(45)"}, g);
    } else {
      n.shape = svg("circle", {"class": "shape", r: r}, g);
    }
    var label = n.kind === "entity" ? n.label : (n.label.length > 30 ? n.label.slice(0, 29) + "\u2026" : n.label);
    var t = svg("text", {x: r + 3, y: 3}, g);
    t.textContent = label;
    var tip = n.kind === "entity" ? "entity: " + n.label
      : "[" + n.type + ", " + n.status + "] " + (n.data.content || n.label);
    svg("title", {}, g).textContent = tip;
    n.el = g;
    g.addEventListener("click", function (ev) { ev.stopPropagation(); select(n); });
    g.addEventListener("keydown", function (ev) { if (ev.key === "Enter") select(n); });
    g.addEventListener("pointerdown", function (ev) { startDrag(ev, n); });
  });

  function place() {
    nodes.forEach(function (n) { n.el.setAttribute("transform", "translate(" + n.x.toFixed(1) + "," + n.y.toFixed(1) + ")"); });
    edges.forEach(placeEdge);
  }
  function placeEdge(e) {
    var dx = e.t.x - e.s.x, dy = e.t.y - e.s.y, d = Math.sqrt(dx * dx + dy * dy) || 1;
    var rs = radius(e.s), rt = radius(e.t) + (STYLE.relations[e.rel] && STYLE.relations[e.rel].arrow ? 2 : 0);
    var x1 = e.s.x + dx / d * rs, y1 = e.s.y + dy / d * rs, x2 = e.t.x - dx / d * rt, y2 = e.t.y - dy / d * rt;
    e.el.setAttribute("x1", x1.toFixed(1)); e.el.setAttribute("y1", y1.toFixed(1));
    e.el.setAttribute("x2", x2.toFixed(1)); e.el.setAttribute("y2", y2.toFixed(1));
    if (e.text) { e.text.setAttribute("x", ((x1 + x2) / 2).toFixed(1)); e.text.setAttribute("y", ((y1 + y2) / 2).toFixed(1)); }
  }
  function paint() {
    nodes.forEach(function (n) { n.shape.setAttribute("fill", colour(n)); });
    bars.forEach(function (b) { b.el.setAttribute("fill", colour(b.n)); });
    buildLegend();
  }

  // ---------------------------------------------------------------- view box: fit, zoom, pan, drag
  var vb = {x: -400, y: -300, w: 800, h: 600};
  function setView() { root.setAttribute("viewBox", [vb.x, vb.y, vb.w, vb.h].map(function (v) { return v.toFixed(1); }).join(" ")); }
  function fit() {
    var shown = nodes.filter(function (n) { return !n.el.classList.contains("hidden"); });
    if (!shown.length) shown = nodes;
    if (!shown.length) { setView(); return; }
    var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    shown.forEach(function (n) { x0 = Math.min(x0, n.x); y0 = Math.min(y0, n.y); x1 = Math.max(x1, n.x); y1 = Math.max(y1, n.y); });
    var pad = 60, w = x1 - x0 + 2 * pad, h = y1 - y0 + 2 * pad;
    var box = root.getBoundingClientRect(), aspect = box.width > 0 && box.height > 0 ? box.width / box.height : 1.6;
    if (w / h < aspect) { var nw = h * aspect; x0 -= (nw - w) / 2; w = nw; } else { var nh = w / aspect; y0 -= (nh - h) / 2; h = nh; }
    vb = {x: x0 - pad, y: y0 - pad, w: w, h: h};
    setView();
  }
  function toGraph(ev) {
    var box = root.getBoundingClientRect();
    return {x: vb.x + (ev.clientX - box.left) / box.width * vb.w, y: vb.y + (ev.clientY - box.top) / box.height * vb.h};
  }
  root.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var p = toGraph(ev), k = ev.deltaY > 0 ? 1.15 : 1 / 1.15;
    vb = {x: p.x - (p.x - vb.x) * k, y: p.y - (p.y - vb.y) * k, w: vb.w * k, h: vb.h * k};
    setView();
  }, {passive: false});
  var drag = null;
  function startDrag(ev, n) { ev.stopPropagation(); drag = {node: n, moved: false}; root.setPointerCapture(ev.pointerId); }
  root.addEventListener("pointerdown", function (ev) {
    drag = {pan: true, cx: ev.clientX, cy: ev.clientY, vx: vb.x, vy: vb.y};
    root.classList.add("panning");
    root.setPointerCapture(ev.pointerId);
  });
  root.addEventListener("pointermove", function (ev) {
    if (!drag) return;
    if (drag.node) {
      var p = toGraph(ev);
      drag.node.x = p.x; drag.node.y = p.y; drag.moved = true;
      drag.node.el.setAttribute("transform", "translate(" + p.x.toFixed(1) + "," + p.y.toFixed(1) + ")");
      drag.node.nb.forEach(placeEdge);
    } else if (drag.pan) {
      var box = root.getBoundingClientRect();
      vb.x = drag.vx - (ev.clientX - drag.cx) / box.width * vb.w;
      vb.y = drag.vy - (ev.clientY - drag.cy) / box.height * vb.h;
      setView();
    }
  });
  root.addEventListener("pointerup", function () { root.classList.remove("panning"); drag = null; });
  root.addEventListener("click", function () { select(null); });

  // ---------------------------------------------------------------- selection, search, details
  var selected = null;
  function select(n) {
    if (selected) selected.el.classList.remove("sel");
    selected = n;
    nodes.forEach(function (m) { m.el.classList.remove("dim"); });
    edges.forEach(function (e) { e.el.classList.remove("dim"); if (e.text) e.text.classList.remove("dim"); });
    bars.forEach(function (b) { b.el.classList.remove("dim"); });
    if (n) {
      n.el.classList.add("sel");
      var keep = {}; keep[n.id] = true;
      n.nb.forEach(function (e) { keep[e.s.id] = true; keep[e.t.id] = true; });
      nodes.forEach(function (m) { if (!keep[m.id]) m.el.classList.add("dim"); });
      edges.forEach(function (e) {
        if (e.s !== n && e.t !== n) { e.el.classList.add("dim"); if (e.text) e.text.classList.add("dim"); }
      });
      bars.forEach(function (b) { if (!keep[b.n.id]) b.el.classList.add("dim"); });
    }
    showDetails(n);
  }
  function showDetails(n) {
    var box = document.getElementById("details");
    box.textContent = "";
    tag("h2", "Details", box);
    if (!n) { tag("p", "Click a node or a timeline bar.", box, "muted"); return; }
    var d = n.data;
    tag("p", n.kind === "entity" ? "Entity \u201c" + n.label + "\u201d" : (d.content || n.label), box, "content");
    var dl = tag("dl", null, box);
    function row(k, v) {
      if (v === undefined || v === null || v === "" || (Array.isArray(v) && !v.length)) return;
      tag("dt", k, dl); tag("dd", Array.isArray(v) ? v.join(", ") : String(v), dl);
    }
    if (n.kind === "memory") {
      row("type", n.type); row("status", n.status); row("id", d.id);
      row("user", d.user_id); row("agent", d.agent_id); row("session", d.session_id);
      row("created", when(d.created_at)); row("valid from", when(d.valid_from)); row("valid to", when(d.valid_to));
      row("expires", when(d.expires_at)); row("importance", d.importance); row("confidence", d.confidence);
      row("strength", d.strength); row("version", d.version); row("speaker", d.speaker); row("origin", d.origin);
      row("plan", d.plan_state); row("due", when(d.plan_due)); row("tags", d.tags); row("flags", d.flags);
      row("facts", d.triples);
    } else {
      row("key", d.key); row("user", d.user_id); row("mentions", d.mentions);
    }
    if (n.nb.length) {
      tag("h2", "Links (" + n.nb.length + ")", box).style.marginTop = "8px";
      var ul = tag("ul", null, box);
      ul.style.margin = "0"; ul.style.paddingLeft = "16px";
      n.nb.slice(0, 60).forEach(function (e) {
        var other = e.s === n ? e.t : e.s, li = tag("li", null, ul);
        tag("span", (e.s === n ? "\u2192 " : "\u2190 ") + e.rel + (e.label ? " (" + e.label + ")" : "") + ": ", li, "muted");
        var a = tag("a", other.label, li);
        a.addEventListener("click", function () { select(other); });
      });
    }
  }
  document.getElementById("search").addEventListener("input", function (ev) {
    var q = ev.target.value.trim().toLowerCase();
    nodes.forEach(function (n) {
      var text = (n.label + " " + (n.data.content || "") + " " + (n.data.name || "")).toLowerCase();
      var hit = q !== "" && text.indexOf(q) >= 0;
      n.el.classList.toggle("hit", hit);
      n.el.classList.toggle("dim", q !== "" && !hit);
    });
  });
  document.getElementById("colour-by").addEventListener("change", paint);
  document.getElementById("show-labels").addEventListener("change", function (ev) {
    root.classList.toggle("no-labels", !ev.target.checked);
  });
  document.getElementById("fit").addEventListener("click", fit);

  // ---------------------------------------------------------------- legend with filters
  var off = {type: {}, status: {}, rel: {}, entity: {}};
  function applyFilters() {
    nodes.forEach(function (n) {
      var hide = n.kind === "entity" ? !!off.entity.entity : (off.type[n.type] || off.status[n.status]);
      n.el.classList.toggle("hidden", !!hide);
    });
    edges.forEach(function (e) {
      var hide = off.rel[e.rel] || e.s.el.classList.contains("hidden") || e.t.el.classList.contains("hidden");
      e.el.classList.toggle("hidden", !!hide);
      if (e.text) e.text.classList.toggle("hidden", !!hide);
    });
    bars.forEach(function (b) { b.el.classList.toggle("hidden", b.n.el.classList.contains("hidden")); });
  }
  function buildLegend() {
    var box = document.getElementById("legend");
    box.textContent = "";
    var mode = document.getElementById("colour-by").value;
    function section(title, group, entries, swatch) {
      if (!entries.length) return;
      tag("h2", title, box).style.marginTop = box.children.length ? "8px" : "0";
      entries.forEach(function (en) {
        var item = tag("div", null, box, "legend-item" + (off[group][en.key] ? " off" : ""));
        item.setAttribute("data-legend", group + ":" + en.key);
        item.appendChild(swatch(en));
        tag("span", en.key, item);
        tag("span", String(en.count), item, "count");
        item.addEventListener("click", function () {
          off[group][en.key] = !off[group][en.key];
          applyFilters(); buildLegend();
        });
      });
    }
    function count(list, f) {
      var c = {};
      list.forEach(function (x) { var k = f(x); if (k !== null) c[k] = (c[k] || 0) + 1; });
      return c;
    }
    var mems = nodes.filter(function (n) { return n.kind === "memory"; });
    var types = count(mems, function (n) { return n.type; }), statuses = count(mems, function (n) { return n.status; });
    var rels = count(edges, function (e) { return e.rel; });
    function dot(fill, border) {
      return function () { var s = document.createElement("span"); s.className = "sw"; s.style.background = fill;
        if (border) s.style.borderColor = border; return s; };
    }
    var typeEntries = Object.keys(STYLE.types).filter(function (k) { return types[k]; })
      .map(function (k) { return {key: k, count: types[k]}; });
    var statusEntries = Object.keys(STYLE.statuses).filter(function (k) { return statuses[k]; })
      .map(function (k) { return {key: k, count: statuses[k]}; });
    section(mode === "type" ? "Memory type (fill)" : "Memory type", "type", typeEntries, function (en) {
      return dot(mode === "type" ? STYLE.types[en.key] : "#fff", mode === "type" ? null : STYLE.types[en.key])();
    });
    section(mode === "status" ? "Status (fill)" : "Status (outline)", "status", statusEntries, function (en) {
      return dot(mode === "status" ? STYLE.statuses[en.key] : "#fff", STYLE.statuses[en.key])();
    });
    var ents = nodes.length - mems.length;
    section("Entities", "entity", ents ? [{key: "entity", count: ents}] : [], function () {
      var s = dot(STYLE.entity)(); s.className = "sw ent"; return s;
    });
    section("Relations", "rel", Object.keys(STYLE.relations).filter(function (k) { return rels[k]; })
      .map(function (k) { return {key: k, count: rels[k]}; }), function (en) {
        var s = document.createElement("span"), st = STYLE.relations[en.key];
        s.className = "ln"; s.style.borderTopColor = st.colour;
        if (st.dash) s.style.borderTopStyle = "dashed";
        return s;
      });
  }

  // ---------------------------------------------------------------- timeline of valid_from .. valid_to
  var bars = [];
  function ticks(t0, t1) {
    // calendar-aligned ticks (hours, days, weeks, months, quarters, years), at most ~10
    var H = 3600, D = 86400, span = t1 - t0, out = [];
    var units = [["h", 1], ["h", 6], ["d", 1], ["d", 7], ["m", 1], ["m", 3], ["y", 1], ["y", 5], ["y", 25]];
    var approx = {h: H, d: D, m: 30.44 * D, y: 365.25 * D}, u = units[units.length - 1];
    for (var i = 0; i < units.length; i++) { if (span / (approx[units[i][0]] * units[i][1]) <= 10) { u = units[i]; break; } }
    var s = new Date(t0 * 1000), k = 0, t;
    function label(d) {
      var iso = d.toISOString();
      return u[0] === "h" ? iso.slice(5, 13).replace("T", " ") + "h" : u[0] === "d" ? iso.slice(0, 10)
        : u[0] === "m" ? iso.slice(0, 7) : iso.slice(0, 4);
    }
    for (;;) {
      var d;
      if (u[0] === "h" || u[0] === "d") {
        var step = approx[u[0]] * u[1];
        d = new Date((Math.ceil(t0 / step) + k) * step * 1000);
      } else if (u[0] === "m") {
        var m0 = s.getUTCFullYear() * 12 + s.getUTCMonth() + 1;
        m0 = Math.ceil(m0 / u[1]) * u[1] + k * u[1];
        d = new Date(Date.UTC(Math.floor(m0 / 12), m0 % 12, 1));
      } else {
        var y0 = Math.ceil((s.getUTCFullYear() + 1) / u[1]) * u[1] + k * u[1];
        d = new Date(Date.UTC(y0, 0, 1));
      }
      t = d.getTime() / 1000;
      if (t > t1 || k > 60) break;
      if (t >= t0) out.push({t: t, label: label(d)});
      k++;
    }
    return out;
  }
  function timeline() {
    var tl = document.getElementById("timeline");
    var items = nodes.filter(function (n) { return n.kind === "memory"; }).map(function (n) {
      var s = typeof n.data.valid_from === "number" ? n.data.valid_from : n.data.created_at;
      var e = typeof n.data.valid_to === "number" ? n.data.valid_to : null;
      return {n: n, s: s, e: e};
    }).filter(function (b) { return typeof b.s === "number"; });
    if (!items.length) { tl.setAttribute("height", "20"); return; }
    var t0 = Infinity, t1 = -Infinity;
    items.forEach(function (b) { t0 = Math.min(t0, b.s); t1 = Math.max(t1, b.s, b.e === null ? b.s : b.e); });
    var now = DATA.generated_at;
    if (items.some(function (b) { return b.e === null; }) && now > t1) t1 = now;
    if (t1 - t0 < 3600) { t0 -= 1800; t1 += 1800; }
    var span = t1 - t0; t0 -= span * 0.02; t1 += span * 0.03;
    var W = Math.max(600, tl.getBoundingClientRect().width || 1200), left = 8, right = 8;
    function X(t) { return left + (t - t0) / (t1 - t0) * (W - left - right); }
    items.sort(function (a, b) { return a.s - b.s; });
    var lanes = [], MAXL = 14;
    items.forEach(function (b) {
      var x0 = X(b.s), x1 = Math.max(x0 + 4, X(b.e === null ? t1 : b.e));
      var lane = -1;
      for (var i = 0; i < lanes.length; i++) { if (lanes[i] + 3 <= x0) { lane = i; break; } }
      if (lane < 0) {
        if (lanes.length < MAXL) { lanes.push(0); lane = lanes.length - 1; }
        else { lane = 0; for (var j = 1; j < lanes.length; j++) if (lanes[j] < lanes[lane]) lane = j; }
      }
      lanes[lane] = Math.max(lanes[lane], x1);
      b.x0 = x0; b.x1 = x1; b.lane = lane;
    });
    var top = 4, LH = 14, H = top + lanes.length * LH + 24;
    tl.setAttribute("viewBox", "0 0 " + W + " " + H);
    tl.setAttribute("height", String(H));
    var axis = svg("g", {"class": "axis"}, tl);
    var y = top + lanes.length * LH + 4;
    svg("line", {x1: left, x2: W - right, y1: y, y2: y}, axis);
    ticks(t0, t1).forEach(function (tk) {
      svg("line", {x1: X(tk.t), x2: X(tk.t), y1: top, y2: y + 3}, axis);
      svg("text", {x: X(tk.t) + 2, y: y + 14}, axis).textContent = tk.label;
    });
    if (now >= t0 && now <= t1) {
      svg("line", {x1: X(now), x2: X(now), y1: top, y2: y, stroke: "#0969da", "stroke-dasharray": "3 3"}, tl);
      svg("text", {x: X(now) + 3, y: top + 8, fill: "#0969da", "font-size": "10"}, tl).textContent = "now";
    }
    items.forEach(function (b) {
      var r = svg("rect", {"data-bar": "", "data-id": b.n.id, "class": "bar status-" + b.n.status, x: b.x0,
                           y: top + b.lane * LH, width: Math.max(4, b.x1 - b.x0), height: LH - 3, rx: 2}, tl);
      svg("title", {}, r).textContent = (b.n.data.content || b.n.label) + "\n" + when(b.s) + " \u2192 " +
        (b.e === null ? "open" : when(b.e)) + " (" + b.n.status + ")";
      r.addEventListener("click", function () { select(b.n); });
      bars.push({n: b.n, el: r});
      var room = Math.floor((b.x1 - b.x0 - 8) / 5.6), words = b.n.data.content || b.n.label;
      if (room >= 8) {
        svg("text", {"class": "bar-label", x: b.x0 + 4, y: top + b.lane * LH + 8.5}, tl).textContent =
          words.length > room ? words.slice(0, room - 1) + "\u2026" : words;
      }
    });
  }

  try {
    if (nodes.length > 200) {  // a big graph: memory labels only on demand (checkbox, hover, details)
      document.getElementById("show-labels").checked = false;
      root.classList.add("no-labels");
    }
    layout();
    place();
    timeline();
    paint();
    fit();
    var c = DATA.counts;
    var scope = Object.keys(DATA.scope || {}).filter(function (k) { return DATA.scope[k]; })
      .map(function (k) { return k + "=" + DATA.scope[k]; }).join(", ");
    summary.textContent = c.memories + " memories \u00b7 " + c.entities + " entities \u00b7 " + c.edges +
      " edges" + (scope ? " \u00b7 " + scope : " \u00b7 all tenants") + " \u00b7 generated " + DATA.generated +
      (DATA.truncated ? " \u00b7 showing the newest memories only (raise --limit)" : "");
    showDetails(null);
    // deep links: page.html#select=<node id> opens a node's details, #q=<text> pre-fills the search
    var hash = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (hash.get("q")) {
      var box = document.getElementById("search");
      box.value = hash.get("q");
      box.dispatchEvent(new Event("input"));
    }
    if (hash.get("select") && byId[hash.get("select")]) select(byId[hash.get("select")]);
    window.addEventListener("resize", fit);
    document.body.setAttribute("data-rendered", nodes.length + "/" + edges.length);
  } catch (err) {
    var e = document.getElementById("error");
    e.textContent = "Could not draw the graph: " + err;
    document.body.setAttribute("data-error", String(err));
  }
})();
"""

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="NeuSym @VERSION@">
<title>@TITLE@</title>
<style>@CSS@</style>
</head>
<body>
<header>
  <h1>@TITLE@</h1>
  <span id="summary" class="muted">@SUMMARY@</span>
  <span id="error"></span>
  <div class="tools">
    <label>Colour by <select id="colour-by"><option value="type">type</option>
      <option value="status">status</option></select></label>
    <input id="search" type="search" placeholder="Search memories and entities" aria-label="search">
    <label><input type="checkbox" id="show-labels" checked> labels</label>
    <button id="fit" type="button">Fit</button>
  </div>
</header>
<main>
  <div id="graph-wrap"><svg id="graph" role="img" aria-label="memory graph"></svg></div>
  <aside>
    <section id="legend"><h2>Legend</h2></section>
    <section id="details"><h2>Details</h2></section>
  </aside>
</main>
<section id="timeline-wrap"><h2>Timeline: valid_from &#8594; valid_to (open bars are still true)</h2>
  <svg id="timeline" height="40"></svg></section>
<noscript><p>This page draws the graph with JavaScript (inline, no network access). Enable it, or use
  <code>neusym graph --graphml</code> / <code>--mermaid</code>.</p></noscript>
<script type="application/json" id="neusym-style">@STYLE@</script>
<script type="application/json" id="neusym-data">@DATA@</script>
<script>@JS@</script>
</body>
</html>
"""


def _script_json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element: ``</`` and ``<!--`` can never close or comment it out."""
    text = json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def to_html(view: GraphView) -> str:
    """The page as one string (write it with UTF-8)."""
    data = view.as_dict()
    data["counts"] = view.counts()
    style = {"types": TYPE_FILL, "statuses": STATUS_COLOURS, "entity": ENTITY_COLOUR, "relations": RELATION_STYLE}
    counts = view.counts()
    summary = f"{counts['memories']} memories, {counts['entities']} entities, {counts['edges']} edges"
    parts = {"CSS": _CSS, "JS": _JS, "VERSION": html.escape(__version__), "SUMMARY": html.escape(summary),
             "TITLE": html.escape(view.title), "STYLE": _script_json(style), "DATA": _script_json(data)}
    # one pass, so a placeholder-looking string inside the title or a memory is never substituted again
    return re.sub(r"@([A-Z]+)@", lambda m: parts.get(m.group(1), m.group(0)), _PAGE)
