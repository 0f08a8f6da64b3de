// The browser test of run.html (docs/reports.md, "Stepping through a run"): runs a shipped
// unsafe scenario with --plot and --trace, opens the page in headless Chromium over the
// DevTools protocol on a pipe (--remote-debugging-pipe: fds 3 and 4, NUL-delimited JSON; no
// npm package), and checks against the trace that the page opens at the first violation,
// shows it, and that the arrow keys step the cursor and the state panel as the trace says.
//
// Usage: node tests/browser/view.mjs BINARY [--gallery DIR]
// With --gallery, the screenshots go to DIR (docs/gallery/ keeps two), else to a temp folder.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, rmSync, existsSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const SCENARIO = "scenarios/raft-broken-forgets-vote.ron";
const STEPS_BACK = 5;
const TIMEOUT_MS = 60_000;

const args = process.argv.slice(2);
if (args.length < 1) {
  console.error("usage: node tests/browser/view.mjs BINARY [--gallery DIR]");
  process.exit(2);
}
const binary = resolve(args[0]);
const galleryAt = args.indexOf("--gallery");
const work = mkdtempSync(join(tmpdir(), "splitbrain-view-"));
const gallery = galleryAt >= 0 ? resolve(args[galleryAt + 1]) : work;

let passed = 0;
let failed = 0;
function check(ok, what) {
  if (ok) passed++;
  else failed++;
  console.log((ok ? "ok   " : "FAIL ") + what);
}

// ---------- the run and its trace ----------
const plotDir = join(work, "plot");
const tracePath = join(work, "trace.jsonl");
// Run from the temp folder, with the scenario library linked in, so that the command the page
// shows (and the gallery's screenshots) reads as a user would type it, without a temp path.
symlinkSync(resolve("scenarios"), join(work, "scenarios"));
const run = spawnSync(binary, ["run", SCENARIO, "--plot", "plot", "--trace", "trace.jsonl", "--quiet"], { encoding: "utf8", cwd: work });
check(run.status === 0, `${SCENARIO} runs as expected (exit ${run.status}) ${run.stderr.trim()}`);
const trace = readFileSync(tracePath, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const firstBad = trace.findIndex((e) => e.check !== "ok");
check(firstBad >= 0, `the trace has a violation (first at line ${firstBad + 1})`);
const writes = new Set(["write_accepted", "write_rejected"]);
const resources = new Set(trace.filter((e) => writes.has(e.ev)).map((e) => e.node));

// Each member's role and term after trace line `i` (0-based), straight from the trace.
function expectedState(i) {
  const out = new Map();
  for (let j = 0; j <= i; j++) {
    const e = trace[j];
    if (e.node === null || resources.has(e.node)) continue;
    const prev = out.get(e.node) || { term: "-" };
    out.set(e.node, { role: e.leader ? "leader" : "follower", term: e.term === null ? prev.term : String(e.term) });
  }
  return out;
}

// ---------- Chromium over a pipe ----------
const profile = join(work, "profile");
const chromium = spawn("chromium", [
  "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
  "--disable-extensions", "--disable-background-networking", "--remote-debugging-pipe",
  `--user-data-dir=${profile}`, "--window-size=1280,860", "about:blank",
], { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] });
let chromiumErr = "";
chromium.stderr.on("data", (d) => { chromiumErr += d; });
const toBrowser = chromium.stdio[3];
const fromBrowser = chromium.stdio[4];
let nextId = 1;
const waiting = new Map();
const listeners = [];
let pending = Buffer.alloc(0);
fromBrowser.on("data", (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  let end;
  while ((end = pending.indexOf(0)) >= 0) {
    const msg = JSON.parse(pending.subarray(0, end).toString("utf8"));
    pending = pending.subarray(end + 1);
    if (msg.id !== undefined && waiting.has(msg.id)) {
      const { ok, fail } = waiting.get(msg.id);
      waiting.delete(msg.id);
      if (msg.error) fail(new Error(JSON.stringify(msg.error)));
      else ok(msg.result);
    } else {
      for (const l of listeners) l(msg);
    }
  }
});
function send(method, params = {}, sessionId) {
  const id = nextId++;
  const msg = { id, method, params };
  if (sessionId) msg.sessionId = sessionId;
  toBrowser.write(JSON.stringify(msg) + "\0");
  return new Promise((ok, fail) => waiting.set(id, { ok, fail }));
}
function nextEvent(method, sessionId) {
  return new Promise((ok) => {
    const l = (msg) => {
      if (msg.method === method && msg.sessionId === sessionId) {
        listeners.splice(listeners.indexOf(l), 1);
        ok(msg.params);
      }
    };
    listeners.push(l);
  });
}
const requested = [];
listeners.push((msg) => { if (msg.method === "Network.requestWillBeSent") requested.push(msg.params.request.url); });

async function main() {
  const { targetId } = await send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
  const page = (method, params) => send(method, params, sessionId);
  await page("Page.enable");
  await page("Network.enable");
  await page("Emulation.setDeviceMetricsOverride", { width: 1280, height: 860, deviceScaleFactor: 1, mobile: false });
  const evaluate = async (expr) => {
    const r = await page("Runtime.evaluate", { expression: expr, returnByValue: true });
    if (r.exceptionDetails) throw new Error(`${expr}: ${JSON.stringify(r.exceptionDetails)}`);
    return r.result.value;
  };
  const open = async (url) => {
    const loaded = nextEvent("Page.loadEventFired", sessionId);
    await page("Page.navigate", { url });
    await loaded;
    for (let i = 0; url !== "about:blank" && i < 100 && !(await evaluate("document.body && document.body.dataset.ready === '1'")); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const cursor = () => evaluate("Number(document.body.dataset.cursor)");
  const panel = () => evaluate(`Array.from(document.querySelectorAll('#state tr[data-node]')).map((tr) => [
      Number(tr.dataset.node), tr.querySelector('td.role').textContent, tr.querySelector('td.term').textContent])`);
  const key = async (name, code) => {
    for (const type of ["keyDown", "keyUp"]) {
      await page("Input.dispatchKeyEvent", { type, key: name, code: name, windowsVirtualKeyCode: code, nativeVirtualKeyCode: code });
    }
  };
  const panelMatches = async (i, what) => {
    const want = expectedState(i);
    const rows = (await panel()).filter(([id]) => !resources.has(id));
    const wrong = rows.filter(([id, role, term]) => {
      const w = want.get(id) || { role: "-", term: "-" };
      return w.role !== role || w.term !== term;
    });
    check(rows.length > 0 && wrong.length === 0, `${what}: the state panel's roles and terms are the trace's after line ${i + 1}` +
      (wrong.length ? ` (differs: ${JSON.stringify(wrong)} vs ${JSON.stringify([...want])})` : ""));
  };
  const shot = async (name) => {
    const { data } = await page("Page.captureScreenshot", { format: "png" });
    writeFileSync(join(gallery, name), Buffer.from(data, "base64"));
    console.log(`screenshot: ${join(gallery, name)}`);
  };

  const url = pathToFileURL(join(plotDir, "run.html")).href;
  await open(url);
  check((await cursor()) === firstBad + 1, `the page opens at the first violation, event ${firstBad + 1} (cursor ${await cursor()})`);
  const verdict = await evaluate("document.getElementById('here-verdict').textContent");
  check(verdict.includes(trace[firstBad].check), `it shows the violation there: "${verdict}"`);
  const marked = await evaluate("Array.from(document.querySelectorAll('#violations li.at')).map((li) => li.dataset.event)");
  check(marked.length === 1 && marked[0] === String(firstBad + 1), `the violation list marks event ${firstBad + 1}: ${JSON.stringify(marked)}`);
  await panelMatches(firstBad, "at the violation");
  await shot("run-view-violation.png");

  for (let k = 1; k <= STEPS_BACK; k++) {
    await key("ArrowLeft", 37);
    const c = await cursor();
    check(c === firstBad + 1 - k, `← ${k}: the cursor is at event ${firstBad + 1 - k} (${c})`);
    await panelMatches(firstBad - k, `← ${k}`);
  }
  const before = await evaluate("document.getElementById('here-verdict').textContent");
  check(before.startsWith("no invariant broken"), `before the violation the page says none broke: "${before}"`);
  for (let k = 1; k <= STEPS_BACK; k++) await key("ArrowRight", 39);
  check((await cursor()) === firstBad + 1, `→ ${STEPS_BACK} times: back at the violation`);
  await panelMatches(firstBad, "back at the violation");

  const later = Math.min(trace.length, 40);
  await open("about:blank"); // a change of the hash alone is no load
  await open(`${url}#event=${later}`);
  check((await cursor()) === later, `#event=${later} opens at event ${later} (cursor ${await cursor()})`);
  await panelMatches(later - 1, `#event=${later}`);
  await evaluate("document.getElementById('zoom-all').click()");
  await shot("run-view-whole-run.png");

  const remote = requested.filter((u) => !u.startsWith("file:") && !u.startsWith("about:") && !u.startsWith("data:"));
  check(remote.length === 0, `the page fetched nothing but itself (${JSON.stringify(remote)})`);
}

const timer = setTimeout(() => { console.error("error: the browser test timed out"); finish(1); }, TIMEOUT_MS);
let finishing = false;
function finish(code) {
  if (finishing) return;
  finishing = true;
  clearTimeout(timer);
  const done = () => {
    rmSync(work, { recursive: true, force: true, maxRetries: 5 });
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(code || (failed ? 1 : 0));
  };
  if (chromium.exitCode !== null || chromium.signalCode !== null) return done();
  chromium.once("exit", done);
  chromium.kill("SIGTERM");
  setTimeout(() => { chromium.kill("SIGKILL"); }, 5000).unref();
}
chromium.on("exit", (code) => {
  if (!finishing) {
    console.error(`error: chromium exited (${code}): ${chromiumErr.slice(-2000)}`);
    finish(1);
  }
});
main().then(() => finish(0), (e) => { console.error(`error: ${e.stack || e}`); failed++; finish(1); });
