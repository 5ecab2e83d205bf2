/* Label saves on their way to the server, shared by the judge page and the logout guard.
 *
 * Every change is written to localStorage first and then sent, so a closed tab, a lost network or an
 * ended session keeps it until a later attempt stores it; retries back off. A save is a PATCH of only the
 * labels the assessor changed, with the revision the page last saw (base_revision): when the judgment was
 * changed elsewhere meanwhile, the server stores nothing and answers 409 with its version, and the item waits
 * for the assessor to choose (a conflict). Sending the same save twice is harmless (the server finds nothing
 * to change), so an item leaves storage only once the server has answered for exactly that version.
 *
 * Items belong to the page (tab) that made them. A page sends its own items, and those of pages that are
 * gone (closed, crashed: they stop beating) as orphans. It never sends another live page's item: that page's
 * assessor made those changes from what that page showed, and only that page can ask about a conflict.
 */

const BEAT_MS = 5000;
// A page that has not beaten for this long is gone. Long, because browsers slow the timers of hidden tabs to
// one a minute; a page that closes says so at once (pagehide), so only a crash waits this long.
const GONE_MS = 180000;
const MAX_BACKOFF_MS = 30000;

export const TAB = Math.random().toString(36).slice(2, 10) + Date.now().toString(36);
export const events = new EventTarget(); // "change" (anything to redraw), "saved" and "conflict" ({detail: {item, judgment}})
export const status = { attempt: 0, retryAt: 0, problem: "", storageBroken: false };

let user = null;
let csrf = "";
let ended = false; // logged out: nothing more is kept
let memory = {}; // the items, if localStorage refuses to store them (the page warns)

/** Begin for this user; `live` pages own items and beat, so other pages know they are still there. */
export function start(options) {
  if (user === null) {
    window.addEventListener("online", () => { status.attempt = 0; flush(); });
    window.addEventListener("storage", (e) => { if (e.key === itemsKey()) emit("change"); });
  }
  user = options.user;
  csrf = options.csrf || csrf;
  if (options.live && !beating) {
    beating = setInterval(beat, BEAT_MS);
    beat();
    window.addEventListener("pagehide", () => { shown = false; setBeat(null); });
    window.addEventListener("pageshow", () => { shown = true; beat(); });
    document.addEventListener("visibilitychange", beat); // a hidden tab's timer is slowed: beat when it shows
  }
}
let beating = null;
let shown = true; // false once the page is being left (pagehide), so nothing marks it alive again

const itemsKey = () => "touchstone.pending." + user;
const tabsKey = () => "touchstone.tabs." + user;

function readJSON(key) {
  try { return JSON.parse(window.localStorage.getItem(key)) || {}; } catch (e) { return {}; }
}
function writeJSON(key, value) {
  try { window.localStorage.setItem(key, JSON.stringify(value)); status.storageBroken = false; }
  catch (e) { status.storageBroken = true; }
}
function load() { return status.storageBroken ? memory : readJSON(itemsKey()); }
function store(items) { memory = items; writeJSON(itemsKey(), items); emit("change"); }
function emit(type, detail) { events.dispatchEvent(new CustomEvent(type, { detail })); }

function beat() { if (shown) setBeat(Date.now()); }
function setBeat(at) {
  if (ended) return;
  const tabs = readJSON(tabsKey());
  for (const [tab, seen] of Object.entries(tabs)) if (Date.now() - seen > GONE_MS) delete tabs[tab];
  if (at) tabs[TAB] = at; else delete tabs[TAB];
  writeJSON(tabsKey(), tabs);
}
function alive(owner) {
  if (owner === TAB) return true;
  const seen = readJSON(tabsKey())[owner];
  return Boolean(seen) && Date.now() - seen < GONE_MS;
}

export function all() { return Object.values(load()); }
/** Whether this page answers for `item`: it made it, or the page that did is gone. */
export const answersFor = (item) => item.owner === TAB || !alive(item.owner);
export function own(url) { return load()[TAB + " " + url] || null; }

/** This page's item for `url`, taking over the newest one left by a page that is gone (a reload, a closed tab). */
export function adopt(url) {
  const items = load();
  const key = TAB + " " + url;
  if (items[key]) return items[key];
  const orphans = Object.values(items).filter((item) => item.url === url && !alive(item.owner));
  if (!orphans.length) return null;
  const newest = orphans.reduce((a, b) => (a.seq > b.seq ? a : b));
  delete items[newest.key];
  Object.assign(newest, { key, owner: TAB });
  items[key] = newest;
  store(items);
  return newest;
}

let seq = Date.now();
/** Keep `changes` (label fields) for the document at `target.url` and send them. `base` is the revision the
 * page saw; an item already waiting keeps its own (its changes were made first). `time` is the running total
 * of active time on the document. */
export function record(target, changes, base, time) {
  if (ended) return null;
  const items = load();
  const key = TAB + " " + target.url;
  const item = items[key] || { key, owner: TAB, url: target.url, page: target.page, base, changes: {}, time: 0 };
  Object.assign(item.changes, changes);
  item.time = Math.max(item.time, Math.round(time));
  item.seq = ++seq;
  delete item.error;
  items[key] = item;
  store(items);
  status.attempt = 0;
  flush();
  return item;
}

/** The assessor keeps the version saved elsewhere: drop this page's changes. */
export function keepSaved(url) {
  const items = load();
  delete items[TAB + " " + url];
  store(items);
}

/** The assessor keeps their changes: send them again over the stored `revision`. */
export function keepMine(url, revision) {
  const items = load();
  const item = items[TAB + " " + url];
  if (!item) return;
  item.base = revision;
  delete item.conflict;
  store(items);
  status.attempt = 0;
  flush();
}

export function dismiss(key) {
  const items = load();
  delete items[key];
  store(items);
}

/** Forget every item of this user in this browser (logging out: nobody else using it may read them). */
export function forgetAll() {
  ended = true;
  memory = {};
  try { window.localStorage.removeItem(itemsKey()); window.localStorage.removeItem(tabsKey()); } catch (e) { /* nothing kept */ }
  emit("change");
}

/** Send everything of this user, whoever made it (logging out), waiting at most `ms`; the number left unsent. */
export async function sendAll(ms) {
  status.attempt = 0;
  await Promise.race([flush({ everyone: true }), new Promise((resolve) => setTimeout(resolve, ms))]);
  return all().length;
}

/** Wait (at most `ms`) until this page's item for `url` has been answered, refused or found in conflict. */
export async function settled(url, ms) {
  const until = Date.now() + ms;
  const waiting = () => { const item = own(url); return item && !item.error && !item.conflict && status.attempt === 0; };
  while (waiting() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
}

// ---------------------------------------------------------------- sending
let running = null;
let again = null;
let retryTimer = null;

export function flush(options = {}) {
  if (running) {
    again = { everyone: Boolean(options.everyone || (again && again.everyone)) };
    return running;
  }
  running = sendWaiting(options).finally(() => { running = null; });
  return running;
}

async function sendWaiting(options) {
  clearTimeout(retryTimer);
  let round = options;
  while (round) {
    const everyone = round.everyone;
    for (const item of all().filter((i) => !i.error && !i.conflict && (everyone || answersFor(i)))) {
      const outcome = await send(item);
      if (outcome === "retry") {
        status.attempt += 1;
        const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (status.attempt - 1)) + Math.random() * 250;
        status.retryAt = Date.now() + delay;
        retryTimer = setTimeout(flush, delay);
        again = null;
        emit("change");
        return;
      }
    }
    round = again;
    again = null;
  }
  status.attempt = 0;
  emit("change");
}

async function send(item) {
  let response;
  try {
    response = await fetch(item.url, {
      method: "PATCH",
      credentials: "same-origin",
      keepalive: true, // a save started as the page is left still reaches the server
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify(Object.assign({}, item.changes, { time_spent_ms: item.time, base_revision: item.base })),
    });
  } catch (e) {
    status.problem = "no connection to the server";
    return "retry";
  }
  const answer = await response.json().catch(() => ({}));
  if (response.ok) {
    settle(item, (items, current) => {
      // Changed again while this was on its way: the rest goes out over the revision just stored.
      if (current.seq === item.seq) delete items[item.key]; else current.base = answer.revision;
    });
    emit("saved", { item, judgment: answer });
    return "done";
  }
  if (response.status === 409 && answer.code === "stale_revision") {
    settle(item, (items, current) => { current.conflict = { judgment: answer.judgment }; });
    emit("conflict", { item, judgment: answer.judgment });
    return "done";
  }
  if (response.status === 401 || response.status === 403) {
    status.problem = "your session has ended: log in again in another tab, your labels are kept here";
    return "retry";
  }
  if ([400, 404, 409].includes(response.status)) {
    const detail = answer.detail || Object.entries(answer).map(([k, v]) => k + ": " + v).join("; ") || response.statusText;
    settle(item, (items, current) => { if (current.seq === item.seq) current.error = detail; });
    return "done";
  }
  status.problem = "the server answered " + response.status;
  return "retry";
}

function settle(item, change) {
  const items = load();
  if (items[item.key]) {
    change(items, items[item.key]);
    store(items);
  }
}

// The cookie, not the token the page was rendered with: logging in again (another tab, after the session
// ended) rotates it, and the waiting labels must go out with the new one.
function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : csrf;
}
