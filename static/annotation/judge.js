/* Judge page: keyboard-first labelling that never loses a label.
 *
 * Every label change is written to localStorage first and then PUT to the assessor API
 * (annotation/api.py). A save leaves the local queue only when the server has answered for
 * exactly that version, so a closed tab, a lost network or an expired session keeps the label
 * until a later attempt stores it; retries back off and the page says so. The server side is
 * idempotent (record_judgment), so sending the same label twice is harmless.
 *
 * Document text is untrusted: this script never assigns innerHTML. Highlighting splits text
 * nodes, and the plain-text view is set with textContent.
 */
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("judge-data").textContent);
  const $ = (selector, root = document) => root.querySelector(selector);
  const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));

  const IDLE_MS = 90000; // no input for this long: the assessor is away, the clock stops
  const NOTE_DELAY_MS = 700; // save the note once typing pauses
  const MAX_BACKOFF_MS = 30000;

  // ---------------------------------------------------------------- preferences
  const PREFS_KEY = "touchstone.prefs";
  const prefs = Object.assign({ highlight: true, plain: false, unjudgedOnly: false }, readJSON(PREFS_KEY));
  function savePrefs() { writeJSON(PREFS_KEY, prefs); }

  function readJSON(key) {
    try { return JSON.parse(window.localStorage.getItem(key)) || {}; } catch (e) { return {}; }
  }
  let storageBroken = false;
  function writeJSON(key, value) {
    try { window.localStorage.setItem(key, JSON.stringify(value)); storageBroken = false; }
    catch (e) { storageBroken = true; }
  }

  // ---------------------------------------------------------------- pending saves
  // { [saveUrl]: { url, assignment, entry, body, seq, error? } }, shared by all pages of this user.
  const PENDING_KEY = "touchstone.pending." + data.user;
  let memoryPending = {}; // used only if localStorage refuses to store (then we warn)
  function loadPending() {
    return storageBroken ? memoryPending : readJSON(PENDING_KEY);
  }
  function storePending(pending) {
    memoryPending = pending;
    writeJSON(PENDING_KEY, pending);
  }
  let seq = Date.now();

  // ---------------------------------------------------------------- the labels on this page
  const labelKeys = new Map(data.keys.labels.map((l) => [l.key.toLowerCase(), l]));
  const commandKeys = new Map();
  data.keys.commands.forEach((c) => c.keys.forEach((k) => commandKeys.set(k.length === 1 ? k.toLowerCase() : k, c.action)));

  const state = { relevance: null, quality: null, stance: "", note: "", flagged: false };
  let activeMs = 0;
  if (data.judgment) {
    Object.assign(state, pick(data.judgment));
    activeMs = data.judgment.time_spent_ms || 0;
  }
  const mine = loadPending()[data.saveUrl];
  if (mine) { // an unsaved version from an earlier visit is newer than what the server has
    Object.assign(state, pick(mine.body));
    activeMs = Math.max(activeMs, mine.body.time_spent_ms || 0);
  }
  let sentMs = activeMs;

  function pick(labels) {
    return { relevance: labels.relevance, quality: labels.quality, stance: labels.stance || "",
             note: labels.note || "", flagged: !!labels.flagged };
  }
  function body() {
    tick();
    return Object.assign(pick(state), { time_spent_ms: Math.round(activeMs) });
  }
  function detailsLocked() {
    return data.askDetailsOnlyIfRelevant && !(state.relevance > 0);
  }

  function setLabel(label) {
    if (data.closed) return toast("This campaign is closed: labels can no longer change.");
    const dimension = label.dimension;
    if (dimension === "relevance") {
      state.relevance = label.value;
      if (detailsLocked()) { state.quality = null; state.stance = ""; }
    } else if (detailsLocked()) {
      return toast(capitalise(dimension) + " is asked only for relevant documents: give a relevance above 0 first.");
    } else if (dimension === "quality") {
      state.quality = state.quality === label.value ? null : label.value;
    } else {
      state.stance = state.stance === label.value ? "" : label.value;
    }
    save();
  }

  function toggleFlag() {
    if (data.closed) return toast("This campaign is closed: labels can no longer change.");
    state.flagged = !state.flagged;
    save();
  }

  function save() {
    clearTimeout(noteTimer);
    noteTimer = null;
    render();
    if (state.relevance === null) { renderStatus(); return; } // a judgment starts with its relevance
    const pending = loadPending();
    seq += 1;
    pending[data.saveUrl] = { url: data.saveUrl, assignment: data.assignment, entry: data.entry, body: body(), seq: seq };
    storePending(pending);
    sentMs = activeMs;
    attempt = 0;
    flush();
  }

  // ---------------------------------------------------------------- sending
  let noteTimer = null;
  let flushing = false;
  let flushAgain = false;
  let attempt = 0;
  let retryTimer = null;
  let retryAt = 0;
  let lastProblem = "";

  async function flush() {
    if (flushing) { flushAgain = true; return; }
    flushing = true;
    clearTimeout(retryTimer);
    retryTimer = null;
    let failed = false;
    try {
      for (const item of Object.values(loadPending())) {
        if (item.error) continue; // refused by the server: waits for the assessor (banner)
        const outcome = await send(item);
        if (outcome.ok) { forget(item); continue; }
        if (outcome.refused) { markRefused(item, outcome.message); continue; }
        failed = true;
        lastProblem = outcome.message;
        break;
      }
    } finally {
      flushing = false;
    }
    if (failed) {
      attempt += 1;
      const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (attempt - 1)) + Math.random() * 250;
      retryAt = Date.now() + delay;
      retryTimer = setTimeout(flush, delay);
    } else {
      attempt = 0;
      if (flushAgain) { flushAgain = false; flush(); }
    }
    renderStatus();
  }

  async function send(item) {
    let response;
    try {
      response = await fetch(item.url, {
        method: "PUT",
        credentials: "same-origin",
        keepalive: true, // a save started as the page is left still reaches the server
        headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrfToken() },
        body: JSON.stringify(item.body),
      });
    } catch (e) {
      return { ok: false, message: "no connection to the server" };
    }
    if (response.ok) {
      if (item.url === data.saveUrl) {
        try { serverSource = (await response.json()).source; } catch (e) { /* the label is saved all the same */ }
      }
      return { ok: true };
    }
    const detail = await response.json().then((j) => j.detail || JSON.stringify(j)).catch(() => response.statusText);
    if (response.status === 401 || response.status === 403) {
      return { ok: false, message: "your session has ended: log in again in another tab, your labels are kept here" };
    }
    if (response.status === 400 || response.status === 404 || response.status === 409) {
      return { ok: false, refused: true, message: detail };
    }
    return { ok: false, message: "the server answered " + response.status };
  }

  // The cookie, not the token the page was rendered with: logging in again (another tab, after
  // the session ended) rotates it, and the waiting labels must go out with the new one.
  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : data.csrf;
  }

  function forget(item) {
    const pending = loadPending();
    if (pending[item.url] && pending[item.url].seq === item.seq) { // not changed again meanwhile
      delete pending[item.url];
      storePending(pending);
    }
  }

  function markRefused(item, message) {
    const pending = loadPending();
    if (pending[item.url] && pending[item.url].seq === item.seq) {
      pending[item.url].error = message;
      storePending(pending);
    }
  }

  function dismiss(url) {
    const pending = loadPending();
    delete pending[url];
    storePending(pending);
    renderStatus();
  }

  window.addEventListener("online", () => { attempt = 0; flush(); });

  // ---------------------------------------------------------------- active time
  let lastInput = performance.now();
  let lastTick = performance.now();
  function tick() {
    const now = performance.now();
    if (document.visibilityState === "visible" && now - lastInput < IDLE_MS) activeMs += Math.min(now - lastTick, 2000);
    lastTick = now;
    const seconds = Math.floor(activeMs / 1000);
    $("#active-time").textContent = Math.floor(seconds / 60) + ":" + String(seconds % 60).padStart(2, "0");
  }
  ["keydown", "pointerdown", "pointermove", "wheel"].forEach((type) =>
    window.addEventListener(type, () => { lastInput = performance.now(); }, { passive: true, capture: true }));
  document.addEventListener("scroll", () => { lastInput = performance.now(); }, { passive: true, capture: true });
  document.addEventListener("visibilitychange", () => { tick(); lastTick = performance.now(); });
  setInterval(tick, 1000);
  // Leaving the page sends the running total once more, so reading time after the last label counts.
  window.addEventListener("pagehide", leaving);
  function leaving() {
    tick();
    if (data.closed || state.relevance === null) return;
    if (noteTimer || activeMs - sentMs >= 1000) save();
  }

  // ---------------------------------------------------------------- rendering
  let serverSource = data.judgment ? data.judgment.source : "";

  function render() {
    $$(".label-btn").forEach((button) => {
      const label = labelKeys.get(button.dataset.key.toLowerCase());
      const on = state[label.dimension] === label.value;
      button.setAttribute("aria-pressed", String(on));
      button.classList.toggle("locked", label.dimension !== "relevance" && detailsLocked());
    });
    $$("fieldset.labels").forEach((fieldset) => {
      fieldset.classList.toggle("locked", fieldset.dataset.dimension !== "relevance" && detailsLocked());
    });
    $(".flag-btn").setAttribute("aria-pressed", String(state.flagged));
    const note = $("#note");
    if (document.activeElement !== note) note.value = state.note;
    const judged = data.judgedElsewhere + (state.relevance !== null ? 1 : 0);
    $("#judged-count").textContent = judged;
    $("#progress").value = judged;
  }

  function renderStatus() {
    const pending = loadPending();
    const items = Object.values(pending);
    const here = pending[data.saveUrl];
    const stateEl = $("#save-state");
    let text;
    let kind;
    if (here && here.error) { kind = "error"; text = "Not saved: " + here.error; }
    else if (here && attempt > 0) { kind = "unsaved"; text = "Not saved yet, retrying"; }
    else if (here) { kind = "saving"; text = "Saving…"; }
    else if (state.relevance !== null) {
      kind = "saved";
      text = serverSource === "duplicate" ? "Saved (copied from an identical document)" : "Saved";
    } else if (state.flagged || state.note || state.quality !== null || state.stance) {
      kind = "unsaved"; text = "Choose a relevance to save";
    } else { kind = "idle"; text = "Not judged yet"; }
    stateEl.dataset.state = kind;
    stateEl.textContent = text;

    const banner = $("#save-banner");
    banner.replaceChildren();
    const waiting = items.filter((i) => !i.error);
    const refused = items.filter((i) => i.error);
    if (waiting.length && attempt > 0) {
      const seconds = Math.max(0, Math.round((retryAt - Date.now()) / 1000));
      banner.append(line("warn",
        `${plural(waiting.length, "label")} not saved yet: ${lastProblem}. They are kept in this browser; ` +
        `retrying in ${seconds} s.`, "Retry now", () => { attempt = 0; flush(); }));
    }
    refused.forEach((item) => {
      banner.append(line("bad", `The server refused a label for ${positionOf(item)}: ${item.error}`,
        "Dismiss", () => dismiss(item.url)));
    });
    if (storageBroken) {
      banner.append(line("warn", "This browser does not let the page keep unsaved labels: do not close the tab while labels are unsaved."));
    }
    banner.hidden = !banner.childElementCount;
  }

  function line(kind, text, actionLabel, action) {
    const p = document.createElement("p");
    p.className = "banner-" + kind;
    p.append(document.createTextNode(text + " "));
    if (actionLabel) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = actionLabel;
      button.addEventListener("click", action);
      p.append(button);
    }
    return p;
  }

  function positionOf(item) {
    if (item.url === data.saveUrl) return "this document";
    return item.assignment === data.assignment ? "another document of this topic" : "a document of another topic";
  }

  let toastTimer = null;
  function toast(message) {
    const el = $("#toast");
    el.textContent = message;
    el.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { el.hidden = true; }, 3500);
  }

  const plural = (n, word) => n + " " + word + (n === 1 ? "" : "s");
  const capitalise = (s) => s.charAt(0).toUpperCase() + s.slice(1);

  // ---------------------------------------------------------------- moving
  // Moving on waits (briefly) for this document's save, so the next page counts it. A save that
  // fails or takes long stays queued and goes out from the next page.
  let moving = false;
  async function go(position) {
    if (position < 1 || position > data.total || moving) return;
    moving = true;
    leaving();
    const until = Date.now() + 2000;
    const waiting = () => { const item = loadPending()[data.saveUrl]; return item && !item.error && attempt === 0; };
    while (waiting() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 25));
    window.location.assign(data.pageBase + position + "/");
  }

  // Unjudged neighbours as the server counted them when the page was built.
  function step(direction) {
    if (prefs.unjudgedOnly) {
      const target = direction > 0 ? data.followingUnjudged : data.precedingUnjudged;
      if (target) return go(target);
      return toast("No unjudged document " + (direction > 0 ? "after" : "before") + " this one.");
    }
    const target = data.position + direction;
    if (target < 1 || target > data.total) return toast(direction > 0 ? "This is the last document." : "This is the first document.");
    go(target);
  }

  function nextUnjudged() {
    if (data.nextUnjudged) return go(data.nextUnjudged);
    toast(state.relevance !== null ? `All ${data.total} documents are judged.` : "This is the only unjudged document.");
  }

  // ---------------------------------------------------------------- document view
  const rich = $("#doc-rich");
  const plain = $("#doc-plain");
  const scroller = $("#doc-scroll");

  function visibleDoc() { return plain && !plain.hidden ? plain : rich; }

  function setPlain(on) {
    if (!rich) return;
    if (on && !plain.dataset.ready) {
      unhighlight(rich);
      plain.textContent = rich.innerText; // layout-aware text of the sanitised document, never parsed as HTML
      plain.dataset.ready = "1";
    }
    rich.hidden = on;
    plain.hidden = !on;
    prefs.plain = on;
    savePrefs();
    $('[data-action="plain"]').setAttribute("aria-pressed", String(on));
    applyHighlight();
  }

  function setHighlight(on) {
    prefs.highlight = on;
    savePrefs();
    $('[data-action="highlight"]').setAttribute("aria-pressed", String(on));
    applyHighlight();
  }

  function escapeRegExp(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }

  // One alternative per object (own colour), then the other title terms. Terms match at a word
  // start and may go on ("dog" marks "dogs"); multi-word objects allow any spacing.
  const patterns = [];
  data.terms.objects.forEach((o, i) => patterns.push({ source: o, cls: "hl hl-o" + (Math.min(i, 3) + 1) }));
  data.terms.terms.forEach((t) => patterns.push({ source: t, cls: "hl hl-t" }));
  const matcher = patterns.length ? new RegExp(
    "(?<![\\p{L}\\p{N}])(?:" + patterns.map((p) => "(" + escapeRegExp(p.source).replace(/\s+/g, "\\s+") + "[\\p{L}\\p{N}]*)").join("|") + ")",
    "giu") : null;

  function unhighlight(root) {
    $$("mark.hl", root).forEach((mark) => mark.replaceWith(document.createTextNode(mark.textContent)));
    root.normalize();
  }

  function applyHighlight() {
    const root = visibleDoc();
    if (!root) return;
    unhighlight(root);
    if (!prefs.highlight || !matcher) return;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    nodes.forEach((node) => {
      const text = node.nodeValue;
      matcher.lastIndex = 0;
      let match = matcher.exec(text);
      if (!match) return;
      const fragment = document.createDocumentFragment();
      let at = 0;
      while (match) {
        const group = match.slice(1).findIndex((g) => g !== undefined);
        fragment.append(document.createTextNode(text.slice(at, match.index)));
        const mark = document.createElement("mark");
        mark.className = patterns[group].cls;
        mark.textContent = match[0];
        fragment.append(mark);
        at = match.index + match[0].length;
        match = matcher.exec(text);
      }
      fragment.append(document.createTextNode(text.slice(at)));
      node.replaceWith(fragment);
    });
  }

  // ---------------------------------------------------------------- dialogs
  function openDialog(id) {
    const dialog = document.getElementById(id);
    if (!dialog.open) dialog.showModal();
    return dialog;
  }
  function anyDialogOpen() { return $$("dialog").some((d) => d.open); }
  $$("dialog [data-close]").forEach((button) => button.addEventListener("click", () => button.closest("dialog").close()));
  $$("dialog").forEach((dialog) => dialog.addEventListener("click", (e) => { if (e.target === dialog) dialog.close(); }));

  function openJump() {
    const dialog = openDialog("dlg-jump");
    const input = $("#jump-to", dialog);
    input.value = "";
    input.focus();
    loadJumpGrid();
  }

  // The jump list comes from the queue API when asked for, so opening a document never pays
  // for listing the whole topic.
  let jumpRows = null;
  async function loadJumpGrid() {
    const grid = $("#jump-grid");
    if (!jumpRows) {
      grid.replaceChildren(message("Loading…"));
      try {
        const response = await fetch(data.queueUrl + "?page_size=10000", { credentials: "same-origin", headers: { "Accept": "application/json" } });
        if (!response.ok) throw new Error("the server answered " + response.status);
        jumpRows = (await response.json()).results.map((item) => ({
          position: item.position,
          relevance: item.judgment ? item.judgment.relevance : null,
          flagged: item.judgment ? item.judgment.flagged : false,
        }));
      } catch (e) {
        grid.replaceChildren(message("The list could not be loaded (" + e.message + "). Type a position above."));
        return;
      }
    }
    buildJumpGrid();
  }

  function message(text) {
    const item = document.createElement("li");
    item.className = "jump-message muted";
    item.textContent = text;
    return item;
  }

  function buildJumpGrid() {
    const grid = $("#jump-grid");
    const only = $("#jump-unjudged").checked;
    grid.replaceChildren();
    jumpRows.forEach((row) => {
      const current = row.position === data.position;
      const relevance = current ? state.relevance : row.relevance; // this page's label may be newer
      const flagged = current ? state.flagged : row.flagged;
      if (only && relevance !== null && !current) return;
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = data.pageBase + row.position + "/";
      link.textContent = row.position;
      link.className = "cell " + (relevance === null ? "r-none" : "r-" + relevance) + (flagged ? " flagged" : "") + (current ? " current" : "");
      link.title = "Document " + row.position + (relevance === null ? ", not judged" : ", relevance " + relevance) + (flagged ? ", flagged" : "");
      item.append(link);
      grid.append(item);
    });
  }
  $("#jump-unjudged").addEventListener("change", () => {
    prefs.unjudgedOnly = $("#jump-unjudged").checked;
    savePrefs();
    renderUnjudgedOnly();
    if (jumpRows) buildJumpGrid();
  });
  $("#jump-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const position = parseInt($("#jump-to").value, 10);
    if (position >= 1 && position <= data.total) go(position);
    else toast("Positions go from 1 to " + data.total + ".");
  });

  function renderUnjudgedOnly() {
    $('[data-action="unjudged-only"]').setAttribute("aria-pressed", String(prefs.unjudgedOnly));
    $("#jump-unjudged").checked = prefs.unjudgedOnly;
  }

  // ---------------------------------------------------------------- commands
  const actions = {
    "next": () => step(1),
    "previous": () => step(-1),
    "next-unjudged": nextUnjudged,
    "jump": openJump,
    "unjudged-only": () => {
      prefs.unjudgedOnly = !prefs.unjudgedOnly;
      savePrefs();
      renderUnjudgedOnly();
      toast(prefs.unjudgedOnly ? "Previous and Next now skip judged documents." : "Previous and Next visit every document.");
    },
    "highlight": () => setHighlight(!prefs.highlight),
    "plain": () => setPlain(!prefs.plain),
    "flag": toggleFlag,
    "note": () => $("#note").focus(),
    "guidelines": () => openDialog("dlg-guidelines"),
    "help": () => openDialog("dlg-help"),
    "scroll-down": (e) => scroller.scrollBy({ top: e && e.key === " " ? scroller.clientHeight * 0.9 : 80 }),
    "scroll-up": () => scroller.scrollBy({ top: -80 }),
  };

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
    const target = e.target;
    if (target.closest && target.closest("textarea, input, select, [contenteditable]")) {
      if (e.key === "Escape" && !anyDialogOpen()) { target.blur(); e.preventDefault(); }
      return;
    }
    if (anyDialogOpen()) {
      if (e.key === "?" && $("#dlg-help").open) { $("#dlg-help").close(); e.preventDefault(); }
      return; // a dialog keeps its own keys (Esc closes it)
    }
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (key === " " && e.shiftKey) { e.preventDefault(); scroller.scrollBy({ top: -scroller.clientHeight * 0.9 }); return; }
    if (key === "PageDown" || key === "PageUp") { e.preventDefault(); scroller.scrollBy({ top: (key === "PageDown" ? 0.9 : -0.9) * scroller.clientHeight }); return; }
    const label = labelKeys.get(key);
    if (label) { e.preventDefault(); setLabel(label); return; }
    const action = commandKeys.get(key);
    if (action && actions[action]) { e.preventDefault(); actions[action](e); }
  });

  $$("[data-action]").forEach((button) => button.addEventListener("click", () => actions[button.dataset.action]()));
  $$(".label-btn").forEach((button) => button.addEventListener("click", () => setLabel(labelKeys.get(button.dataset.key.toLowerCase()))));

  const note = $("#note");
  function saveNote() {
    if (!data.closed) save();
  }
  note.addEventListener("input", () => {
    state.note = note.value;
    clearTimeout(noteTimer);
    noteTimer = setTimeout(saveNote, NOTE_DELAY_MS);
    renderStatus();
  });
  note.addEventListener("blur", () => { if (noteTimer) saveNote(); });
  if (data.closed) { $$(".label-btn, .flag-btn").forEach((b) => { b.disabled = true; }); note.readOnly = true; }

  // ---------------------------------------------------------------- start
  render();
  renderUnjudgedOnly();
  if (rich) {
    if (prefs.plain) setPlain(true); else applyHighlight();
    $('[data-action="highlight"]').setAttribute("aria-pressed", String(prefs.highlight));
  }
  renderStatus();
  setInterval(() => { if (attempt > 0) renderStatus(); }, 1000); // the retry countdown
  flush(); // labels left unsaved by earlier pages
  scroller.focus({ preventScroll: true });
})();
