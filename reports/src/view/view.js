// splitbrain run.html: one run, stepped through event by event. The run's events are the
// JSON in #run-data (docs/reports.md, "Stepping through a run"); everything below reads them
// and draws only what is on screen, so that a run of 100,000 events steps as fast as a small one.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("run-data").textContent);
  const E = D.events;
  const S = D.strings;
  const N = E.length;
  // The columns of an event (docs/trace-format.md, in that order).
  const T = 0, NODE = 1, LOCAL = 2, EV = 3, WHAT = 4, FROM = 5, SENT = 6, TERM = 7, LEAD = 8, CHECK = 9;
  const KIND = {};
  D.kinds.forEach((k, i) => { KIND[k] = i; });
  const kindOf = (e) => D.kinds[e[EV]];
  const isWrite = (e) => e[EV] === KIND.write_accepted || e[EV] === KIND.write_rejected;
  const hasSender = (e) => e[FROM] !== null;
  // Checkpoints of the replayed state, every CHECK_EVERY events: stepping back replays at most
  // that many events.
  const CHECK_EVERY = 512;
  const LANE_PX = 34, AXIS_PX = 50, LABEL_PX = 96, MAX_ARROWS = 3000, MAX_SCAN = 40000;

  // ---------- processes and lanes ----------
  const idSet = new Set();
  const resources = new Set();
  for (const e of E) {
    if (e[NODE] !== null) idSet.add(e[NODE]);
    if (hasSender(e)) idSet.add(e[FROM]);
    if (isWrite(e)) resources.add(e[NODE]);
  }
  const ids = Array.from(idSet).sort((a, b) => a - b);
  const laneOf = new Map(ids.map((id, i) => [id, i]));
  const nameOf = (id) => (id === null || id === undefined) ? "-" :
    (D.names[id] !== undefined ? D.names[id] : (resources.has(id) ? "resource" : "n" + id));
  const tEnd = N ? E[N - 1][T] : 0;

  // ---------- the replayed state ----------
  function freshState() {
    return ids.map(() => ({
      seen: false, down: false, frozen: false, until: null, leader: false, term: null,
      known: null, timer: null, write: null, local: null, accepted: 0, rejected: 0, top: null,
    }));
  }
  function cloneState(st) { return st.map((s) => Object.assign({}, s)); }
  // Folds event `e` into `st` (one entry per lane). Known leader: the last process this one
  // handled a message from while that process led in this one's term; itself when it leads.
  function apply(st, e) {
    if (e[NODE] === null) return;
    const s = st[laneOf.get(e[NODE])];
    const k = e[EV];
    s.seen = true;
    if (e[LOCAL] !== null) s.local = e[LOCAL];
    if (k === KIND.crash) { s.down = true; s.frozen = false; s.until = null; }
    else if (k === KIND.restart) { s.down = false; }
    else if (k === KIND.freeze) { s.frozen = true; s.until = Number(S[e[WHAT]]); }
    else if (k === KIND.resume) { s.frozen = false; s.until = null; }
    else if (k === KIND.timer) { s.timer = [S[e[WHAT]], e[T]]; }
    if (isWrite(e)) {
      const token = Number(S[e[WHAT]]);
      const ok = k === KIND.write_accepted;
      const w = st[laneOf.get(e[FROM])];
      w.write = [token, ok, e[T]];
      s.write = [token, ok, e[T], e[FROM]];
      if (ok) { s.accepted++; s.top = s.top === null ? token : Math.max(s.top, token); }
      else s.rejected++;
      return; // the resource has no role or term
    }
    const oldTerm = s.term;
    if (e[TERM] !== null) s.term = e[TERM];
    s.leader = e[LEAD] === 1;
    if (s.leader) { s.known = [e[NODE], s.term]; }
    else if (k === KIND.deliver) {
      const from = st[laneOf.get(e[FROM])];
      if (from.leader && !from.down && from.term !== null && from.term === s.term) s.known = [e[FROM], s.term];
    }
    if (s.known !== null && s.term !== oldTerm && s.known[1] !== s.term) s.known = null;
    if (s.known !== null && s.known[0] === e[NODE] && !s.leader) s.known = null;
  }
  const checkpoints = [];
  {
    let st = freshState();
    for (let i = 0; i < N; i++) {
      if (i % CHECK_EVERY === 0) checkpoints.push(cloneState(st));
      apply(st, E[i]);
    }
  }
  // The state after event `i` (or before the first, i = -1).
  function stateAt(i) {
    if (i < 0) return freshState();
    const c = Math.floor(i / CHECK_EVERY);
    const st = cloneState(checkpoints[c]);
    for (let j = c * CHECK_EVERY; j <= i; j++) apply(st, E[j]);
    return st;
  }

  // ---------- spans per lane, fault bands, violations ----------
  const spans = ids.map(() => []); // [from, to, kind, term]; kind: down, frozen, leader, up
  const lastLatency = { max: 0 };
  {
    const st = freshState();
    const open = ids.map(() => null);
    const keyOf = (s) => s.down ? "down" : s.frozen ? "frozen" : s.leader ? "leader" : "up";
    for (const e of E) {
      if (hasSender(e)) lastLatency.max = Math.max(lastLatency.max, e[T] - e[SENT]);
      if (e[NODE] === null) continue;
      const lane = laneOf.get(e[NODE]);
      apply(st, e);
      const s = st[lane];
      const key = resources.has(e[NODE]) ? "resource" : keyOf(s);
      const o = open[lane];
      if (o === null || o[2] !== key || o[3] !== s.term) {
        if (o !== null) { o[1] = e[T]; spans[lane].push(o); }
        open[lane] = [e[T], null, key, s.term];
      }
    }
    open.forEach((o, lane) => { if (o !== null) { o[1] = tEnd; spans[lane].push(o); } });
  }
  const bands = []; // [from, to, text, healed]
  const marks = []; // run-wide instants: [t, text, kind]
  {
    const openFaults = [];
    for (const e of E) {
      if (e[NODE] !== null) continue;
      if (e[EV] === KIND.fault) openFaults.push([e[T], null, S[e[WHAT]], false]);
      else if (e[EV] === KIND.heal) {
        const i = openFaults.findIndex((f) => f[2] === S[e[WHAT]]);
        if (i >= 0) { const f = openFaults.splice(i, 1)[0]; f[1] = e[T]; f[3] = true; bands.push(f); }
        else marks.push([e[T], "heal " + S[e[WHAT]], "heal"]);
      } else marks.push([e[T], D.kinds[e[EV]].replace(/_/g, " "), "run"]);
    }
    for (const f of openFaults) { f[1] = f[0]; bands.push(f); }
    bands.sort((a, b) => a[0] - b[0]);
  }
  const violations = [];
  for (let i = 0; i < N; i++) if (E[i][CHECK] !== 0) violations.push(i);

  // ---------- formatting ----------
  function fmtNs(ns) {
    if (ns === null || ns === undefined) return "-";
    const neg = ns < 0; let a = Math.abs(ns);
    let out;
    if (a >= 1e9) out = (a / 1e9).toFixed(6).replace(/\.?0+$/, "") + "s";
    else if (a >= 1e6) out = (a / 1e6).toFixed(3).replace(/\.?0+$/, "") + "ms";
    else if (a >= 1e3) out = (a / 1e3).toFixed(3).replace(/\.?0+$/, "") + "µs";
    else out = a + "ns";
    return (neg ? "-" : "") + out;
  }
  function parseTime(text) {
    const m = /^\s*(-?[0-9.]+)\s*(ns|us|µs|ms|s|m)?\s*$/.exec(text);
    if (!m) return null;
    const scale = { ns: 1, us: 1e3, "µs": 1e3, ms: 1e6, s: 1e9, m: 6e10 }[m[2] || "s"];
    return Math.round(parseFloat(m[1]) * scale);
  }
  function describe(e) {
    const k = kindOf(e), w = S[e[WHAT]];
    if (e[NODE] === null) return k + (w ? ": " + w : "");
    if (k === "deliver" || k === "held" || k === "drop") return k + " " + w + " from " + nameOf(e[FROM]) + " (sent " + fmtNs(e[SENT]) + ")";
    if (isWrite(e)) return k.replace("_", " ") + ": token " + w + " from " + nameOf(e[FROM]);
    if (k === "freeze") return "freeze until " + fmtNs(Number(w));
    if (k === "persist") return "persist until " + fmtNs(Number(w));
    if (k === "disconnect") return "disconnect from " + nameOf(Number(w));
    return k + (w ? " " + w : "");
  }
  const el = (tag, attrs, text) => {
    const x = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) x.setAttribute(k, v);
    if (text !== undefined) x.textContent = text;
    return x;
  };

  // ---------- the page ----------
  const header = el("header");
  header.appendChild(el("h1", {}, D.title));
  const facts = el("div", { class: "facts" });
  for (const [k, v] of D.facts) { facts.appendChild(document.createTextNode(k + " ")); facts.appendChild(el("b", {}, v)); facts.appendChild(document.createTextNode(" · ")); }
  facts.appendChild(el("span", { class: "mono" }, D.command));
  header.appendChild(facts);
  const vlist = el("ul", { class: "verdicts" });
  for (const v of D.violations) vlist.appendChild(el("li", { class: "bad" }, "violated: " + v));
  if (!D.violations.length) vlist.appendChild(el("li", {}, "no invariant broke"));
  header.appendChild(vlist);
  if (D.total > N) header.appendChild(el("p", { class: "note" }, "The run had " + D.total + " events; this page holds the first " + N + "." + (D.first_violation !== null && D.first_violation >= N ? " Its first violation, event " + (D.first_violation + 1) + ", is past them: replay with --trace to see it." : "")));
  document.body.appendChild(header);

  const controls = el("div", { id: "controls" });
  const button = (id, text, title, fn) => { const b = el("button", { id: id, title: title }, text); b.addEventListener("click", fn); controls.appendChild(b); return b; };
  button("first", "|◀", "first event (Home)", () => go(0));
  button("prev", "◀", "previous event (←)", () => go(cur - 1));
  button("next", "▶", "next event (→)", () => go(cur + 1));
  button("last", "▶|", "last event (End)", () => go(N - 1));
  const position = el("span", { id: "position" });
  controls.appendChild(position);
  controls.appendChild(el("span", { class: "sep" }));
  controls.appendChild(document.createTextNode("event "));
  const eventInput = el("input", { id: "goto-event", type: "text", title: "jump to event number (line of the --trace file)" });
  controls.appendChild(eventInput);
  controls.appendChild(document.createTextNode(" time "));
  const timeInput = el("input", { id: "goto-time", type: "text", title: "jump to the first event at or after a time: 1.5s, 1500ms, ..." });
  controls.appendChild(timeInput);
  controls.appendChild(el("span", { class: "sep" }));
  button("prev-violation", "◀ violation", "previous violation (Shift+V)", () => { const v = violations.filter((i) => i < cur); if (v.length) go(v[v.length - 1]); });
  button("next-violation", "violation ▶", "next violation (V)", () => { const v = violations.find((i) => i > cur); if (v !== undefined) go(v); });
  controls.appendChild(el("span", { class: "sep" }));
  button("zoom-in", "+", "zoom in (+)", () => { spanNs = Math.max(1000, spanNs / 2); draw(); });
  button("zoom-out", "−", "zoom out (-)", () => { spanNs = Math.min(Math.max(tEnd, 1000) * 2, spanNs * 2); draw(); });
  button("zoom-all", "whole run", "show the whole run", () => { spanNs = Math.max(tEnd, 1000) * 1.02; centre = tEnd / 2; pinned = true; draw(); });
  controls.appendChild(el("span", { class: "keys" }, "← → step · Shift+← → 10 · V next violation · + − zoom"));
  document.body.appendChild(controls);

  const wrap = el("div", { id: "lanes-wrap" });
  const canvas = el("canvas", { id: "lanes" });
  wrap.appendChild(canvas);
  document.body.appendChild(wrap);
  const drawnNote = el("div", { id: "drawn", class: "note" });
  document.body.appendChild(drawnNote);

  const below = el("div", { id: "below" });
  const hereSec = el("section", { id: "here" });
  const stateSec = el("section", { id: "state" });
  stateSec.appendChild(el("h2", {}, "State at the cursor"));
  const stateTable = el("table");
  const head = el("tr");
  for (const h of ["process", "status", "role", "term", "known leader", "last write (token)", "last timer", "clock"]) head.appendChild(el("th", {}, h));
  stateTable.appendChild(head);
  const stateRows = ids.map((id) => {
    const tr = el("tr", { "data-node": String(id) });
    for (const c of ["name", "status", "role", "term", "known", "write", "timer", "clock"]) tr.appendChild(el("td", { class: c + (c === "term" || c === "clock" ? " num" : "") }));
    tr.children[0].textContent = nameOf(id);
    stateTable.appendChild(tr);
    return tr;
  });
  stateSec.appendChild(stateTable);
  stateSec.appendChild(el("p", { class: "note" }, "Replayed from the events up to and including the cursor's. Role and term are the process's own after its last event; known leader: the last process it handled a message from while that one led in its term. Highlighted: changed by the cursor's event."));

  const violSec = el("section", { id: "violations" });
  violSec.appendChild(el("h2", {}, violations.length ? "Invariant violations (" + violations.length + " events)" : "Invariant violations: none"));
  const violList = el("ol");
  const violItems = violations.slice(0, 2000).map((i) => {
    const e = E[i];
    const li = el("li", { "data-event": String(i + 1) }, "event " + (i + 1) + " at " + fmtNs(e[T]) + ", " + nameOf(e[NODE]) + ": " + S[e[CHECK]]);
    li.addEventListener("click", () => go(i));
    violList.appendChild(li);
    return li;
  });
  violSec.appendChild(violList);
  const eventsSec = el("section", { id: "events" });
  eventsSec.appendChild(el("h2", {}, "Events around the cursor"));
  const evTable = el("table");
  eventsSec.appendChild(evTable);
  // The cursor's event and the violations side by side; the state and the events below,
  // each the whole width.
  for (const sec of [hereSec, violSec, stateSec, eventsSec]) below.appendChild(sec);
  document.body.appendChild(below);

  // ---------- the cursor ----------
  let cur = 0;
  let state = freshState();
  let stateIndex = -1;
  let spanNs = 1e6;
  let centre = 0;
  let pinned = false; // the whole run is shown: the view does not follow the cursor
  function defaultSpan(i) {
    const a = E[Math.max(0, i - 40)][T], b = E[Math.min(N - 1, i + 40)][T];
    return Math.max(2e6, (b - a) * 1.3);
  }
  function go(i) {
    if (!N) return;
    i = Math.max(0, Math.min(N - 1, i | 0));
    if (i === stateIndex + 1) apply(state, E[i]);
    else if (i !== stateIndex) state = stateAt(i);
    stateIndex = i;
    cur = i;
    pinned = false;
    render();
  }
  function render() {
    const e = E[cur];
    document.body.dataset.cursor = String(cur + 1);
    position.textContent = "event " + (cur + 1) + " of " + N + " · " + fmtNs(e[T]);
    if (document.activeElement !== eventInput) eventInput.value = String(cur + 1);
    if (document.activeElement !== timeInput) timeInput.value = fmtNs(e[T]);
    history.replaceState(null, "", "#event=" + (cur + 1));
    renderHere(e);
    renderState(e);
    renderEvents();
    violItems.forEach((li, k) => {
      li.className = (violations[k] <= cur ? "seen" : "") + (violations[k] === cur ? " at" : "");
    });
    draw();
  }
  function renderHere(e) {
    hereSec.textContent = "";
    hereSec.appendChild(el("h2", {}, "Event " + (cur + 1) + " at " + fmtNs(e[T])));
    hereSec.appendChild(el("div", { id: "here-what" }, nameOf(e[NODE]) + ": " + describe(e)));
    const seen = violations.filter((i) => i <= cur);
    const v = el("div", { id: "here-verdict" });
    if (e[CHECK] !== 0) { v.className = "bad"; v.textContent = "this event broke " + S[e[CHECK]]; }
    else if (seen.length) { v.className = "bad"; v.textContent = seen.length + " violating event(s) at or before the cursor, the last at event " + (seen[seen.length - 1] + 1) + " (" + S[E[seen[seen.length - 1]][CHECK]] + ")"; }
    else v.textContent = "no invariant broken at or before the cursor";
    hereSec.appendChild(v);
  }
  function renderState(e) {
    ids.forEach((id, lane) => {
      const s = state[lane];
      const tr = stateRows[lane];
      const c = tr.children;
      const isRes = resources.has(id);
      c[1].textContent = isRes ? s.accepted + " accepted, " + s.rejected + " rejected" : !s.seen ? "-" : s.down ? "crashed" : s.frozen ? "paused until " + fmtNs(s.until) : "up";
      c[2].textContent = isRes ? "resource" : (!s.seen ? "-" : s.leader ? "leader" : "follower");
      c[3].textContent = isRes ? (s.top === null ? "-" : "top " + s.top) : (s.term === null ? "-" : String(s.term));
      c[4].textContent = isRes || s.known === null ? "-" : nameOf(s.known[0]) + " (term " + s.known[1] + ")";
      c[5].textContent = s.write === null ? "-" : s.write[0] + (s.write[1] ? " accepted" : " rejected") + (isRes ? " from " + nameOf(s.write[3]) : "") + " @ " + fmtNs(s.write[2]);
      c[6].textContent = s.timer === null ? "-" : s.timer[0] + " @ " + fmtNs(s.timer[1]);
      c[7].textContent = s.local === null ? "-" : fmtNs(s.local);
      const changed = e[NODE] === id || (isWrite(e) && e[FROM] === id);
      tr.className = [s.leader && !isRes ? "leader" : "", s.down ? "down" : "", s.frozen ? "frozen" : "", changed ? "changed" : ""].join(" ").trim();
    });
  }
  function renderEvents() {
    evTable.textContent = "";
    const head = el("tr");
    for (const h of ["#", "time", "process", "event", "term", "leads", "check"]) head.appendChild(el("th", {}, h));
    evTable.appendChild(head);
    for (let i = Math.max(0, cur - 10); i <= Math.min(N - 1, cur + 10); i++) {
      const e = E[i];
      const tr = el("tr", { "data-event": String(i + 1), class: (i === cur ? "current" : i > cur ? "future" : "") + (e[CHECK] !== 0 ? " bad" : "") });
      tr.appendChild(el("td", { class: "num" }, String(i + 1)));
      tr.appendChild(el("td", { class: "num" }, fmtNs(e[T])));
      tr.appendChild(el("td", {}, e[NODE] === null ? "run" : nameOf(e[NODE])));
      tr.appendChild(el("td", {}, describe(e)));
      tr.appendChild(el("td", { class: "num" }, e[TERM] === null ? "" : String(e[TERM])));
      tr.appendChild(el("td", {}, e[NODE] !== null && !resources.has(e[NODE]) && e[LEAD] ? "yes" : ""));
      tr.appendChild(el("td", { class: "check" }, e[CHECK] === 0 ? "ok" : S[e[CHECK]]));
      tr.addEventListener("click", () => go(i));
      evTable.appendChild(tr);
    }
  }

  // ---------- the lanes ----------
  const palette = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#ff7f0e", "#393b79"];
  const typeColour = new Map();
  const colourOf = (w) => { if (!typeColour.has(w)) typeColour.set(w, palette[typeColour.size % palette.length]); return typeColour.get(w); };
  function lowerBound(t) { let lo = 0, hi = N; while (lo < hi) { const m = (lo + hi) >> 1; if (E[m][T] < t) lo = m + 1; else hi = m; } return lo; }
  function draw() {
    if (!N) return;
    const dpr = window.devicePixelRatio || 1;
    const width = Math.max(600, canvas.clientWidth || wrap.clientWidth || 1200);
    const height = AXIS_PX + ids.length * LANE_PX + 8;
    canvas.style.height = height + "px";
    if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) { canvas.width = Math.round(width * dpr); canvas.height = Math.round(height * dpr); }
    const g = canvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, height);
    const tCur = E[cur][T];
    if (!pinned) centre = tCur;
    const t0 = centre - spanNs / 2, t1 = centre + spanNs / 2;
    const plotW = width - LABEL_PX - 10;
    const x = (t) => LABEL_PX + (t - t0) / (t1 - t0) * plotW;
    const laneY = (lane) => AXIS_PX + lane * LANE_PX + LANE_PX / 2;
    g.font = "12px 'DejaVu Sans', Verdana, sans-serif";
    g.textBaseline = "middle";
    // fault bands
    g.save();
    g.beginPath(); g.rect(LABEL_PX, 0, plotW, height); g.clip();
    const labelEnds = [-Infinity, -Infinity]; // two rows of fault labels, no overlaps
    for (const b of bands) {
      if (b[1] < t0 || b[0] > t1) continue;
      const xa = x(b[0]), xb = Math.max(x(b[1]), xa + 2);
      g.fillStyle = "rgba(229, 57, 53, 0.10)";
      g.fillRect(xa, AXIS_PX - 4, xb - xa, height - AXIS_PX);
      g.fillStyle = "#c62828";
      g.fillRect(xa, AXIS_PX - 4, 1.5, height - AXIS_PX);
      const lx = Math.max(xa, LABEL_PX) + 3, lw = g.measureText(b[2]).width;
      const row = labelEnds.findIndex((end) => end < lx);
      if (row >= 0) { g.fillText(b[2], lx, AXIS_PX - 30 + row * 14); labelEnds[row] = lx + lw + 6; }
    }
    for (const m of marks) {
      if (m[0] < t0 || m[0] > t1) continue;
      g.fillStyle = m[2] === "heal" ? "#2e7d32" : "#616161";
      g.fillRect(x(m[0]), AXIS_PX - 4, 1, height - AXIS_PX);
    }
    // lanes: role and term spans
    ids.forEach((id, lane) => {
      const y = laneY(lane);
      for (const s of spans[lane]) {
        if (s[1] < t0 || s[0] > t1) continue;
        const xa = Math.max(x(s[0]), LABEL_PX - 2), xb = Math.min(x(s[1]), width);
        if (s[2] === "leader") { g.fillStyle = "#ffb74d"; g.fillRect(xa, y - 9, xb - xa, 18); }
        else if (s[2] === "down") { g.fillStyle = "#bdbdbd"; g.fillRect(xa, y - 9, xb - xa, 18); }
        else if (s[2] === "frozen") { g.fillStyle = "#90caf9"; g.fillRect(xa, y - 9, xb - xa, 18); }
        else { g.fillStyle = s[2] === "resource" ? "#9e9e9e" : "#cfd8dc"; g.fillRect(xa, y - 1, xb - xa, 2); }
        if (xb - xa > 40 && s[2] !== "resource") {
          g.fillStyle = "#37474f";
          const label = s[2] === "down" ? "crashed" : s[2] === "frozen" ? "paused" : s[2] === "leader" ? "leader t" + s[3] : (s[3] === null ? "" : "t" + s[3]);
          g.fillText(label, xa + 4, s[2] === "up" ? y - 9 : y);
        }
      }
    });
    // message arrows
    let drawn = 0;
    const end = Math.min(N, lowerBound(t1 + lastLatency.max + 1));
    const start = lowerBound(t0);
    for (let i = start, scanned = 0; i < end && drawn < MAX_ARROWS && scanned < MAX_SCAN; i++, scanned++) {
      const e = E[i];
      if (!hasSender(e) || e[SENT] > t1) continue;
      const future = i > cur;
      const from = laneY(laneOf.get(e[FROM])), to = laneY(laneOf.get(e[NODE]));
      const k = e[EV];
      const colour = isWrite(e) ? (k === KIND.write_rejected ? "#d32f2f" : "#9e9e9e") : k === KIND.drop ? "#d32f2f" : colourOf(S[e[WHAT]]);
      g.globalAlpha = future ? 0.18 : 0.85;
      g.strokeStyle = colour; g.fillStyle = colour; g.lineWidth = 1.2;
      g.setLineDash(k === KIND.drop ? [4, 3] : k === KIND.held ? [1, 2] : []);
      const xa = x(e[SENT]), xb = x(e[T]);
      g.beginPath(); g.moveTo(xa, from); g.lineTo(xb, to); g.stroke();
      g.setLineDash([]);
      const ang = Math.atan2(to - from, xb - xa);
      g.beginPath(); g.moveTo(xb, to);
      g.lineTo(xb - 7 * Math.cos(ang - 0.4), to - 7 * Math.sin(ang - 0.4));
      g.lineTo(xb - 7 * Math.cos(ang + 0.4), to - 7 * Math.sin(ang + 0.4));
      g.closePath(); g.fill();
      drawn++;
    }
    g.globalAlpha = 1;
    // violations
    for (const i of violations) {
      const e = E[i];
      if (e[T] < t0 || e[T] > t1 || e[NODE] === null) {
        if (e[NODE] === null && e[T] >= t0 && e[T] <= t1) { g.fillStyle = "#b71c1c"; g.fillRect(x(e[T]) - 1, AXIS_PX, 3, height - AXIS_PX); }
        continue;
      }
      const xv = x(e[T]), yv = laneY(laneOf.get(e[NODE]));
      g.fillStyle = i <= cur ? "#b71c1c" : "rgba(183, 28, 28, 0.35)";
      g.beginPath(); g.moveTo(xv, yv - 8); g.lineTo(xv + 7, yv); g.lineTo(xv, yv + 8); g.lineTo(xv - 7, yv); g.closePath(); g.fill();
    }
    // the cursor and its event
    const xc = x(tCur);
    g.strokeStyle = "#0d47a1"; g.lineWidth = 2;
    g.beginPath(); g.moveTo(xc, AXIS_PX - 6); g.lineTo(xc, height); g.stroke();
    const ce = E[cur];
    if (ce[NODE] !== null) {
      g.strokeStyle = "#0d47a1"; g.lineWidth = 2.5;
      g.beginPath(); g.arc(xc, laneY(laneOf.get(ce[NODE])), 7, 0, 2 * Math.PI); g.stroke();
    }
    g.restore();
    // axis and lane names
    g.fillStyle = "#fff"; g.fillRect(0, 0, LABEL_PX - 2, height);
    g.fillStyle = "#212121"; g.font = "bold 12px 'DejaVu Sans', Verdana, sans-serif";
    ids.forEach((id, lane) => g.fillText(nameOf(id), 8, laneY(lane)));
    g.font = "11px 'DejaVu Sans', Verdana, sans-serif";
    const step = niceStep((t1 - t0) / 8);
    g.fillStyle = "#555"; g.strokeStyle = "#ddd"; g.lineWidth = 1;
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const xt = x(t);
      g.beginPath(); g.moveTo(xt, 2); g.lineTo(xt, 10); g.stroke();
      g.fillText(fmtNs(t), xt + 3, 7);
    }
    drawnNote.textContent = drawn + " message" + (drawn === 1 ? "" : "s") + " drawn, from " + fmtNs(Math.max(0, t0)) + " to " + fmtNs(t1) + " (click the lanes to jump there)";
  }
  function niceStep(raw) {
    const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  // ---------- input ----------
  document.addEventListener("keydown", (ev) => {
    if (ev.target === eventInput || ev.target === timeInput) return;
    const by = ev.shiftKey ? 10 : 1;
    if (ev.key === "ArrowRight") { go(cur + by); ev.preventDefault(); }
    else if (ev.key === "ArrowLeft") { go(cur - by); ev.preventDefault(); }
    else if (ev.key === "Home") { go(0); ev.preventDefault(); }
    else if (ev.key === "End") { go(N - 1); ev.preventDefault(); }
    else if (ev.key === "v") document.getElementById("next-violation").click();
    else if (ev.key === "V") document.getElementById("prev-violation").click();
    else if (ev.key === "+" || ev.key === "=") document.getElementById("zoom-in").click();
    else if (ev.key === "-") document.getElementById("zoom-out").click();
  });
  eventInput.addEventListener("change", () => { const n = parseInt(eventInput.value, 10); if (!isNaN(n)) go(n - 1); eventInput.blur(); });
  timeInput.addEventListener("change", () => { const t = parseTime(timeInput.value); if (t !== null) go(Math.min(N - 1, lowerBound(t))); timeInput.blur(); });
  canvas.addEventListener("click", (ev) => {
    const r = canvas.getBoundingClientRect();
    const t = centre - spanNs / 2 + (ev.clientX - r.left - LABEL_PX) / (r.width - LABEL_PX - 10) * spanNs;
    go(Math.min(N - 1, lowerBound(t)));
  });
  window.addEventListener("resize", draw);
  window.addEventListener("hashchange", () => { const n = fromHash(); if (n !== null && n !== cur) go(n); });
  function fromHash() {
    const m = /event=(\d+)/.exec(location.hash);
    return m ? Math.max(0, Math.min(N - 1, parseInt(m[1], 10) - 1)) : null;
  }

  // ---------- opening ----------
  if (!N) { position.textContent = "the run has no events"; return; }
  const asked = fromHash();
  const opening = asked !== null ? asked : (D.first_violation !== null && D.first_violation < N ? D.first_violation : 0);
  spanNs = defaultSpan(opening);
  go(opening);
  document.body.dataset.ready = "1";
})();
