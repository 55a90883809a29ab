// PushBench trajectory viewer: the index, episode pages and side-by-side comparisons.
// Data arrive as scripts (file:// blocks fetch): data/index.js calls PB.index, an episode's file
// calls PB.episode with its JSON gzip-compressed and base64-encoded. Trace text is always set as
// text content, never parsed as HTML.
"use strict";

const PB = (() => {
  const FILTERS = ["kind", "run", "family", "model", "controller", "memory", "backend", "outcome", "termination"];
  const DEFAULTS = { kind: "experiment" };  // forks replay an experiment's episode: shown apart unless asked for
  const CONDITION = ["family", "model", "backend", "memory", "controller"];
  const SHOWN = ["task_id", "model", "controller", "memory", "backend", "seed", "outcome", "termination",
    "valid_count", "target", "reported_count", "steps", "budget", "llm_calls", "input_tokens"];
  const NUMERIC = new Set(["seed", "valid_count", "target", "reported_count", "steps", "budget", "llm_calls",
    "input_tokens", "output_tokens", "fork_step"]);
  const PAGE = 1000;
  const state = { rows: [], byKey: new Map(), filters: {}, sort: { col: "episode_id", dir: 1 }, shown: PAGE,
    episodes: new Map(), waiting: new Map(), received: new Set() };

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") node.textContent = String(v);
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  const svgEl = (tag, attrs) => {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    return node;
  };
  const app = () => document.getElementById("app");
  const show = (...nodes) => app().replaceChildren(...nodes.flat().filter((n) => n !== null && n !== undefined && n !== false));
  const keyOf = (row) => row.run + "/" + row.episode_id;
  const fmt = (v) => (v === null || v === undefined ? "" : typeof v === "number" && !Number.isInteger(v) ? v.toFixed(3) : String(v));

  // ------------------------------------------------------------------ data
  function index(data) {
    state.rows = data.rows.map((values) => Object.fromEntries(data.columns.map((c, i) => [c, values[i]])));
    for (const row of state.rows) row.kind = row.parent ? "fork" : "experiment";
    for (const row of state.rows) state.byKey.set(keyOf(row), row);
    state.notes = data.notes || [];
    if (state.rows.some((r) => r.parent)) SHOWN.push("fork_step");
    document.getElementById("runs").textContent = data.runs.join(", ");
    window.addEventListener("hashchange", route);
    route();
  }

  async function inflate(b64) {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function episode(key, b64) {
    state.received.add(key);
    const resolve = state.waiting.get(key);
    inflate(b64).then((data) => { state.episodes.set(key, data); if (resolve) resolve(data); });
  }

  function load(key) {
    if (state.episodes.has(key)) return Promise.resolve(state.episodes.get(key));
    const row = state.byKey.get(key);
    if (!row || !row.file) return Promise.reject(new Error("no trace for " + key));
    return new Promise((resolve, reject) => {
      state.waiting.set(key, resolve);
      const tag = el("script", { src: row.file, onerror: () => reject(new Error("cannot load " + row.file)),
        onload: () => { if (!state.received.has(key)) reject(new Error(row.file + " does not hold " + key)); } });
      document.body.append(tag);
    });
  }

  // ------------------------------------------------------------------ routing
  function params() {
    return new URLSearchParams(location.hash.replace(/^#/, ""));
  }
  function route() {
    const p = params();
    window.scrollTo(0, 0);
    if (p.get("cmp") && p.get("with")) return showCompare(p.get("cmp"), p.get("with"));
    if (p.get("ep")) return showEpisode(p.get("ep"), p.get("step"));
    state.filters = {};
    for (const f of FILTERS) {
      const value = p.has(f) ? p.get(f) : DEFAULTS[f];
      if (value) state.filters[f] = value;
    }
    showIndex();
  }
  // The index's filters live in the URL (a link or a reload shows the same rows); a default is left out.
  function setFilter(f, value) {
    const p = new URLSearchParams();
    for (const g of FILTERS) {
      const v = g === f ? value : (state.filters[g] || "");
      if (v !== (DEFAULTS[g] || "")) p.set(g, v);
    }
    state.shown = PAGE;
    const hash = p.toString();
    if (location.hash.replace(/^#/, "") === hash) showIndex();
    else location.hash = hash;
  }
  const link = (hash, text) => el("a", { href: "#" + new URLSearchParams(hash).toString(), text });
  function failed(err) { app().replaceChildren(el("p", { class: "error", text: String(err.message || err) })); }

  // ------------------------------------------------------------------ index
  function matching() {
    const rows = state.rows.filter((r) => FILTERS.every((f) => !state.filters[f] || String(r[f]) === state.filters[f]));
    const { col, dir } = state.sort;
    const value = (r) => (NUMERIC.has(col) ? Number(r[col] ?? -Infinity) : String(r[col] ?? ""));
    return rows.sort((a, b) => (value(a) < value(b) ? -dir : value(a) > value(b) ? dir : 0));
  }

  function filterBar() {
    const bar = el("div", { class: "filters" });
    for (const f of FILTERS) {
      const values = [...new Set(state.rows.map((r) => String(r[f])))].sort();
      if ((f === "run" || f === "kind") && values.length < 2) continue;
      const select = el("select", { id: "filter-" + f, onchange: (e) => setFilter(f, e.target.value) },
        el("option", { value: "", text: "all" }), values.map((v) => el("option", { value: v, text: v, selected: state.filters[f] === v })));
      bar.append(el("label", {}, f, select));
    }
    return bar;
  }

  function summary(rows) {
    const groups = new Map();
    for (const r of rows) {
      const k = CONDITION.map((c) => r[c]).join(" \u00b7 ");
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(r);
    }
    const mean = (xs, f) => xs.reduce((s, x) => s + Number(x[f] || 0), 0) / xs.length;
    const body = [...groups.entries()].sort().map(([k, g]) => el("tr", {},
      el("td", { text: k }), el("td", { class: "num", text: g.length }),
      el("td", { class: "num", text: g[0].outcome === "unscored" ? "" : (100 * g.filter((r) => r.outcome === "success").length / g.length).toFixed(1) + "%" }),
      el("td", { class: "num", text: mean(g, "valid_count").toFixed(1) }), el("td", { class: "num", text: mean(g, "steps").toFixed(1) }),
      el("td", { class: "num", text: (100 * g.filter((r) => r.outcome === "false completion").length / g.length).toFixed(1) + "%" })));
    return el("table", { class: "summary", id: "summary" },
      el("thead", {}, el("tr", {}, ["condition", "episodes", "success", "mean valid", "mean steps", "false completion"].map((h) => el("th", { text: h })))),
      el("tbody", {}, body));
  }

  function header(col) {
    const cls = "sortable" + (state.sort.col === col ? (state.sort.dir > 0 ? " sorted-asc" : " sorted-desc") : "");
    return el("th", { class: cls, "data-col": col, text: col.replace(/_/g, " "), onclick: () => {
      state.sort = { col, dir: state.sort.col === col ? -state.sort.dir : 1 };
      showIndex();
    } });
  }

  function showIndex() {
    const rows = matching();
    const body = rows.slice(0, state.shown).map((r) => el("tr", { class: "episode-row", "data-key": keyOf(r) },
      el("td", {}, r.file ? link({ ep: keyOf(r) }, r.episode_id) : r.episode_id + " (no trace)"),
      SHOWN.map((c) => el("td", { class: (NUMERIC.has(c) ? "num " : "") + (c === "outcome" ? "outcome-" + String(r[c]).replace(/ /g, "-") : ""), text: fmt(r[c]) }))));
    const more = rows.length > state.shown ? el("button", { id: "more", text: `show all ${rows.length}`, onclick: () => { state.shown = Infinity; showIndex(); } }) : null;
    show(filterBar(), el("h3", { text: "Per condition" }), summary(rows),
      el("p", { class: "count", id: "count", text: `${rows.length} of ${state.rows.length} episodes` + (rows.length > state.shown ? `, first ${state.shown} shown` : "") }),
      state.notes.map((n) => el("p", { class: "count", text: n })),
      el("table", { id: "episodes" }, el("thead", {}, el("tr", {}, header("episode_id"), SHOWN.map(header))), el("tbody", {}, body)), more);
  }

  // ------------------------------------------------------------------ episode
  function showEpisode(key, step) {
    app().replaceChildren(el("p", { id: "loading", text: "Loading " + key + "..." }));
    load(key).then((data) => renderEpisode(key, data, step === null ? null : Number(step))).catch(failed);
  }

  function messageText(m) {
    const parts = [];
    if (m.content !== null && m.content !== undefined) parts.push(typeof m.content === "string" ? m.content : JSON.stringify(m.content));
    for (const call of m.tool_calls || []) parts.push(`\u2192 ${call.function.name}(${call.function.arguments})`);
    return parts.join("\n");
  }
  const shortArgs = (t) => (t.tool === null ? "(text reply)" : t.tool + " " + (typeof t.args === "string" ? t.args : JSON.stringify(t.args)));

  function turnRow(key, data, t, i) {
    const m = data.messages;
    const verdicts = {};
    for (const [, v] of t.verdicts) verdicts[v] = (verdicts[v] || 0) + 1;
    const action = el("td", { class: "action" },
      t.side.map((j) => el("div", {}, el("span", { class: "badge memory", text: m[j].name }), el("details", {}, el("summary", { text: "memory's own request" }), el("pre", { text: messageText(m[j]) })))),
      t.memory.map(([c, r]) => el("div", {}, el("span", { class: "badge memory", text: "memory call" }), messageText(m[c]).replace(/^\u2192 /, ""), el("pre", { text: messageText(m[r]) }))),
      el("code", { text: shortArgs(t) }), t.tool === null && m[t.action].content ? el("pre", { text: m[t.action].content }) : null);
    const control = [t.intercepted_by ? el("span", { class: "badge controller", text: "intercepted by " + t.intercepted_by }) : null,
      t.ok === false && !t.intercepted_by ? el("span", { class: "badge error", text: "invalid" }) : null,
      t.step === null ? el("span", { class: "badge ended", text: "episode ended" }) : null];
    const obs = t.reply === null ? el("td", {}) : el("td", { class: "observation" }, el("details", {},
      el("summary", { text: messageText(m[t.reply]).split("\n")[0].slice(0, 120) }), el("pre", { text: messageText(m[t.reply]) })));
    const verdictCell = el("td", { class: "verdicts" }, Object.entries(verdicts).map(([v, n]) => el("div", { class: "v-" + v, text: `${n} ${v}` })),
      t.verdicts.length ? el("details", {}, el("summary", { text: "items" }), el("pre", { text: t.verdicts.map(([item, v]) => `${v}  ${item}`).join("\n") })) : null);
    return el("tr", { class: "turn" + (t.intercepted_by ? " intercepted" : ""), id: "turn-" + (i + 1), "data-step": t.step ?? "" },
      el("td", { class: "num", text: i + 1 }), action, el("td", {}, control), obs, verdictCell,
      el("td", { class: "num", text: t.valid_count }),
      el("td", {}, data.views.length ? link({ ep: key, step: i + 1 }, "context") : ""));
  }

  function plot(data, width = 560, height = 220, id = "count-plot") {
    const row = data.row;
    const pad = { l: 48, r: 16, t: 12, b: 32 };
    const lastStep = data.curve[data.curve.length - 1][0];
    const xMax = Math.max(lastStep, 1);
    const reported = data.end && data.end.reported !== undefined ? data.end.reported : null;
    const yMax = Math.max(row.target || 1, ...data.curve.map((p) => p[1]), reported || 0) * 1.1;
    const x = (s) => pad.l + (s / xMax) * (width - pad.l - pad.r);
    const y = (c) => height - pad.b - (c / yMax) * (height - pad.t - pad.b);
    const svg = svgEl("svg", { id, width, height, viewBox: `0 0 ${width} ${height}`, role: "img" });
    svg.append(svgEl("line", { x1: pad.l, y1: y(0), x2: width - pad.r, y2: y(0), stroke: "#888" }),
      svgEl("line", { x1: pad.l, y1: pad.t, x2: pad.l, y2: y(0), stroke: "#888" }));
    for (const frac of [0, 0.5, 1]) {
      const s = Math.round(frac * xMax);
      const label = svgEl("text", { x: x(s), y: height - 14, "text-anchor": "middle" });
      label.textContent = String(s);
      svg.append(label);
    }
    const stepLabel = svgEl("text", { x: (pad.l + width - pad.r) / 2, y: height - 1, "text-anchor": "middle" });
    stepLabel.textContent = "step";
    svg.append(stepLabel);
    let d = "";
    data.curve.forEach(([s, c], i) => { d += i === 0 ? `M${x(s)},${y(c)}` : `H${x(s)}V${y(c)}`; });
    svg.append(svgEl("path", { class: "count-line", d, fill: "none", stroke: "#175cd3", "stroke-width": 2 }));
    if (row.target) {
      svg.append(svgEl("line", { class: "target-line", x1: pad.l, x2: width - pad.r, y1: y(row.target), y2: y(row.target), stroke: "#1a7f37", "stroke-dasharray": "5,4" }));
      const t = svgEl("text", { x: pad.l + 4, y: y(row.target) - 4 });
      t.textContent = "target " + row.target;
      svg.append(t);
    }
    if (reported !== null && reported !== undefined) {
      svg.append(svgEl("circle", { class: "reported", cx: x(lastStep), cy: y(reported), r: 5, fill: "#f79009" }));
      const t = svgEl("text", { x: x(lastStep) - 8, y: y(reported) - 8, "text-anchor": "end" });
      t.textContent = "reported " + reported;
      svg.append(t);
    }
    const finalCount = data.curve[data.curve.length - 1][1];
    const ticks = [...new Set([0, row.target || 0, finalCount].map(Math.round))].sort((a, b) => a - b);
    for (const c of ticks) {
      svg.append(svgEl("line", { x1: pad.l - 3, x2: pad.l, y1: y(c), y2: y(c), stroke: "#888" }));
      const tick = svgEl("text", { class: "y-tick", x: pad.l - 6, y: y(c) + 4, "text-anchor": "end" });
      tick.textContent = String(c);
      svg.append(tick);
    }
    const yLabel = svgEl("text", { class: "y-label", x: 10, y: (pad.t + y(0)) / 2, "text-anchor": "middle",
      transform: `rotate(-90 10 ${(pad.t + y(0)) / 2})` });
    yLabel.textContent = "verified";
    svg.append(yLabel);
    return svg;
  }

  function contextPanel(key, data, step) {
    const panel = el("section", { id: "context" }, el("h3", { text: "Context the model saw" }));
    if (!data.views.length) return panel.append(el("p", { text: data.views_note })), panel;
    const input = el("input", { id: "context-step", type: "number", min: 1, max: data.views.length, value: step || 1,
      onchange: (e) => { location.hash = new URLSearchParams({ ep: key, step: e.target.value }).toString(); } });
    panel.append(el("p", {}, "before turn ", input, ` of ${data.views.length} (${data.views_note})`));
    if (!step) return panel;
    const view = data.views[Math.min(Math.max(step, 1), data.views.length) - 1];
    const messages = [];
    for (const seg of view) {
      if (seg[0] === 0) for (let i = seg[1]; i <= seg[2]; i++) messages.push([data.messages[i], false]);
      else messages.push([data.pool[seg[1]], true]);
    }
    panel.append(el("p", { class: "count", id: "context-count", text: `${messages.length} messages` }),
      el("div", { id: "context-messages" }, messages.map(([m, pooled]) => el("div", { class: "msg" + (pooled ? " pooled" : "") },
        el("div", { class: "role", text: m.role + (m.name ? " (" + m.name + ")" : "") + (pooled ? " \u00b7 written by the memory" : "") }),
        el("pre", { text: messageText(m) })))));
    return panel;
  }

  function siblings(row) {
    return state.rows.filter((r) => r.task_id === row.task_id && r.seed === row.seed && keyOf(r) !== keyOf(row) && r.file);
  }
  const condition = (r) => CONDITION.slice(1).map((c) => r[c]).join(" \u00b7 ");

  function renderEpisode(key, data, step) {
    const row = data.row;
    const index = state.byKey.get(key) || {};
    const skip = new Set(["episode_id"]);
    const facts = el("dl", { class: "kv", id: "facts" }, Object.keys(row).sort().filter((k) => !skip.has(k)).flatMap((k) => [el("dt", { text: k }), el("dd", { text: fmt(row[k]) })]),
      Object.entries(data.extra).flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: typeof v === "object" ? JSON.stringify(v) : fmt(v) })]));
    const others = siblings(index);
    const compare = others.length ? el("ul", { id: "siblings" }, others.map((r) => el("li", {}, link({ cmp: key, with: keyOf(r) }, "compare with " + condition(r)), ` (${r.outcome})`))) : el("p", { text: "no other condition on this task and seed" });
    const parentRow = row.parent ? state.rows.find((r) => r.episode_id === row.parent) : null;
    const parent = row.parent ? el("p", { id: "parent" }, `forked at step ${row.fork_step} from `,
      parentRow ? link({ ep: keyOf(parentRow) }, row.parent) : row.parent,
      parentRow ? el("span", {}, " (", link({ cmp: keyOf(parentRow), with: key }, "side by side"), ")") : null) : null;
    show(el("h2", { text: row.episode_id }), parent,
      el("p", { class: "outcome-" + String(index.outcome).replace(/ /g, "-"), id: "outcome", text: `${index.outcome} \u00b7 termination ${row.termination ?? (data.end || {}).reason ?? "?"}` }),
      el("div", { class: "panels" }, el("div", {}, el("h3", { text: "Verified count vs step" }), plot(data)), el("div", {}, el("h3", { text: "Episode" }), facts)),
      el("h3", { text: "Same task and seed, other conditions" }), compare,
      contextPanel(key, data, step),
      el("h3", { text: "Timeline" }), el("p", { text: data.objective }),
      el("table", { id: "timeline" }, el("thead", {}, el("tr", {}, ["turn", "action", "controller", "observation", "verdicts", "verified", ""].map((h) => el("th", { text: h })))),
        el("tbody", {}, data.turns.map((t, i) => turnRow(key, data, t, i)))));
    if (step) document.getElementById("context").scrollIntoView();
  }

  // ------------------------------------------------------------------ compare
  function showCompare(a, b) {
    app().replaceChildren(el("p", { id: "loading", text: "Loading..." }));
    Promise.all([load(a), load(b)]).then(([da, db]) => renderCompare([a, b], [da, db])).catch(failed);
  }

  function firstDifference(ta, tb) {
    let i = 0;
    while (i < ta.length && i < tb.length && ta[i].signature === tb[i].signature) i++;
    return i;
  }

  function cell(data, t) {
    if (!t) return el("td", { text: "(ended)" });
    const reply = t.reply === null ? "" : messageText(data.messages[t.reply]).split("\n")[0].slice(0, 100);
    return el("td", {}, t.intercepted_by ? el("span", { class: "badge controller", text: "intercepted by " + t.intercepted_by }) : null,
      el("code", { text: shortArgs(t) }), el("div", { class: "count", text: reply + ` \u00b7 verified ${t.valid_count}` }));
  }

  function renderCompare(keys, datas) {
    const [ta, tb] = datas.map((d) => d.turns);
    const diff = firstDifference(ta, tb);
    const rows = [];
    for (let i = 0; i < Math.max(ta.length, tb.length); i++) {
      const cls = i < diff ? "same" : i === diff ? "first-diff" : "";
      rows.push(el("tr", { class: cls, id: "cmp-" + (i + 1) }, el("td", { class: "num", text: i + 1 }), cell(datas[0], ta[i]), cell(datas[1], tb[i])));
    }
    const differs = diff < Math.max(ta.length, tb.length);
    const same = el("tbody", { id: "same-steps", hidden: diff > 0 && differs }, rows.slice(0, diff));
    const head = (k, d) => el("th", {}, link({ ep: k }, condition(state.byKey.get(k) || d.row)),
      d.row.parent ? ` (fork at step ${d.row.fork_step})` : "", ` \u2014 ${(state.byKey.get(k) || {}).outcome}`);
    show(el("h2", { text: `${datas[0].row.task_id}, seed ${datas[0].row.seed}` }),
      el("p", { id: "first-diff", text: differs ? `identical for ${diff} turns; first different action at turn ${diff + 1}` : "identical actions throughout" }),
      diff > 0 && differs ? el("button", { text: `show the ${diff} identical turns`, onclick: () => { same.hidden = !same.hidden; } }) : null,
      el("div", { class: "panels" }, plot(datas[0], 420, 180, "plot-a"), plot(datas[1], 420, 180, "plot-b")),
      el("table", { class: "cmp", id: "compare" }, el("thead", {}, el("tr", {}, el("th", { text: "turn" }), head(keys[0], datas[0]), head(keys[1], datas[1]))),
        same, el("tbody", {}, rows.slice(diff))));
  }

  return { index, episode };
})();
