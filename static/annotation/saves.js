/* Label saves on their way to the server, shared by the judge page and the logout guard.
 *
 * Every change is written to localStorage first and then sent, so a closed tab, a lost network or an
 * ended session keeps it until a later attempt stores it; retries back off. A save is a PATCH of only the
 * labels the assessor changed, with the revision the page last saw (base_revision): when the judgment was
 * changed elsewhere meanwhile, the server stores nothing and answers 409 with its version, and the item waits
 * for the assessor to choose (a conflict). Sending the same save twice is harmless (the server finds nothing
 * to change), so an item leaves storage only once the server has answered for exactly that version.
 *
 * The body of an attempt is kept apart (`sending`) until the server answers it. A save whose answer was lost
 * may have been stored: it goes out again unchanged, and changes made meanwhile follow over the revision that
 * answer names. Merged into it, they would change a label over the old base revision, and the server would
 * take the assessor's own save for a change made elsewhere.
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
// A save the server has not answered within this long is taken for one whose answer was lost, and sent again as
// it was (see above). Without it, one request hung on a dead connection keeps every later label waiting behind it.
const SAVE_TIMEOUT_MS = 20000;

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
  Object.assign(newest, { key, owner: TAB, changes: upgraded(newest.changes) });
  items[key] = newest;
  store(items);
  return newest;
}

/** Changes kept by a page from before labels were keyed by dimension ({relevance: 2, stance: ""}) in today's form
 * ({labels: {relevance: 2, stance: null}}): every field but the note and the flag was a dimension, "" none. */
function upgraded(changes) {
  const result = { labels: Object.assign({}, changes.labels) };
  for (const [field, value] of Object.entries(changes)) {
    if (field === "note" || field === "flagged") result[field] = value;
    else if (field !== "labels") result.labels[field] = value === "" ? null : value;
  }
  if (!Object.keys(result.labels).length) delete result.labels;
  return result;
}

let seq = Date.now();
/** Keep `changes` ({labels: {dimension: value or null}, note, flagged}, each optional) for the document at
 * `target.url` and send them; dimensions merge with those already waiting. `base` is the revision the
 * page saw; an item already waiting keeps its own (its changes were made first), and a body already sent stays
 * as it was sent. `time` is the running total of active time on the document. `shown` is the whole version the
 * page shows with these changes ({labels, note, flagged}): a conflict offers exactly that as the assessor's, even
 * after a reload, since the changes alone over the version saved elsewhere would mix in labels the page never
 * showed. */
export function record(target, changes, base, time, shown) {
  if (ended) return null;
  const items = load();
  const key = TAB + " " + target.url;
  const item = items[key] || { key, owner: TAB, url: target.url, page: target.page, base, changes: {}, time: 0 };
  const { labels, ...fields } = changes;
  Object.assign(item.changes, fields);
  if (labels) item.changes.labels = Object.assign({}, item.changes.labels, labels);
  item.shown = shown;
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

/** The assessor keeps their version: send `changes`, what turns the version stored at `revision` into the one the
 * page shows, over that revision (they replace the item's changes, which were made over an older one). */
export function keepMine(url, revision, changes) {
  const items = load();
  const item = items[TAB + " " + url];
  if (!item) return;
  item.base = revision;
  item.changes = changes;
  delete item.conflict;
  delete item.sending;
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

/** How many documents `items` are labels of: two pages (tabs) on one document keep an item each. */
export const documents = (items) => new Set(items.map((item) => item.url)).size;

/** Send everything of this user, whoever made it (logging out), waiting at most `ms`; the number of documents whose
 * labels are left unsent. */
export async function sendAll(ms) {
  status.attempt = 0;
  await Promise.race([flush({ everyone: true }), new Promise((resolve) => setTimeout(resolve, ms))]);
  return documents(all());
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
      let outcome = await send(item.key);
      while (outcome === "again") outcome = await send(item.key);
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

/** Send the item at `key`: the body of an attempt not yet answered if there is one, else its changes.
 * "again": answered, and changed since that body was made, so the rest goes out next; "retry": back off. */
async function send(key) {
  const item = load()[key];
  if (!item || item.error || item.conflict) return "done";
  if (!item.sending) {
    item.sending = { changes: upgraded(item.changes), base: item.base, time: item.time, seq: item.seq };
    settle(key, (items, current) => { current.sending = item.sending; });
  }
  const body = item.sending;
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), SAVE_TIMEOUT_MS);
  let response, text;
  try {
    response = await fetch(item.url, {
      method: "PATCH",
      credentials: "same-origin",
      keepalive: true, // a save started as the page is left still reaches the server
      signal: timeout.signal,
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify(Object.assign({}, body.changes, { time_spent_ms: body.time, base_revision: body.base })),
    });
    text = await response.text();
  } catch (e) {
    status.problem = timeout.signal.aborted
      ? "the server did not answer within " + SAVE_TIMEOUT_MS / 1000 + " s"
      : "no connection to the server";
    return "retry";
  } finally {
    clearTimeout(timer);
  }
  const answer = parsed(text);
  // Whatever the server answered, it answered this body; changes made since it was sent go out next.
  let rest = false;
  if (response.ok) {
    settle(key, (items, current) => {
      rest = current.seq !== body.seq;
      if (!rest) {
        delete items[key];
      } else { // the rest goes out over the revision just stored
        delete current.sending;
        current.base = answer.revision;
      }
    });
    emit("saved", { item, judgment: answer });
    return rest ? "again" : "done";
  }
  if (response.status === 409 && answer.code === "stale_revision") {
    settle(key, (items, current) => { delete current.sending; current.conflict = { judgment: answer.judgment }; });
    emit("conflict", { item, judgment: answer.judgment });
    return "done";
  }
  if (response.status === 401 || response.status === 403) {
    status.problem = "your session has ended: log in again in another tab, your labels are kept here";
    return "retry";
  }
  if ([400, 404, 409].includes(response.status)) {
    const detail = answer.detail || Object.entries(answer).map(([k, v]) => k + ": " + v).join("; ") || response.statusText;
    settle(key, (items, current) => {
      delete current.sending;
      rest = current.seq !== body.seq;
      if (!rest) current.error = detail;
    });
    return rest ? "again" : "done";
  }
  status.problem = "the server answered " + response.status;
  return "retry";
}

function parsed(text) {
  try {
    const value = JSON.parse(text);
    return value && typeof value === "object" ? value : {};
  } catch (e) {
    return {};
  }
}

function settle(key, change) {
  const items = load();
  if (items[key]) {
    change(items, items[key]);
    store(items);
  }
}

// The cookie, not the token the page was rendered with: logging in again (another tab, after the session
// ended) rotates it, and the waiting labels must go out with the new one.
function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : csrf;
}
