/* The labels of the document on screen: the version the server has, the assessor's own, and the changes
 * between them, which go to the server through saves.js.
 *
 * `state` is what the page shows; `committed` is what has been handed to saves.js, so a change sends only
 * the fields that differ (a stance chosen never resends a relevance). Relevance comes first: until it is
 * chosen nothing is sent (the server needs it to create a judgment), and the first save carries everything.
 */

import * as saves from "../saves.js";
import { $, $$, capitalise, hideToast, toast } from "./util.js";

const FIELDS = ["relevance", "quality", "stance", "note", "flagged"];
const EMPTY = { relevance: null, quality: null, stance: "", note: "", flagged: false };
const IDLE_MS = 90000; // no input for this long: the assessor is away, the clock stops
const NOTE_DELAY_MS = 700; // save the note once typing pauses

export const events = new EventTarget(); // "changed" whenever the labels on screen change
export const doc = { data: null, server: null, state: null, committed: null, activeMs: 0, sentMs: 0 };
let byKey = new Map(); // key → {dimension, value, name}
let undo = null; // the labels before relevance cleared the details: {url, labels}
let noteTimer = null;

export function configure(keys) {
  byKey = new Map(keys.labels.map((l) => [l.key.toLowerCase(), l]));
}
export const labelForKey = (key) => byKey.get(key);

export function pick(labels) {
  return { relevance: labels.relevance, quality: labels.quality, stance: labels.stance || "",
           note: labels.note || "", flagged: Boolean(labels.flagged) };
}

/** Show the document described by the page data `data` (a new page, or one swapped in). */
export function show(data) {
  flushNote();
  doc.data = data;
  const judgment = data.judgment;
  doc.server = judgment ? { labels: pick(judgment), revision: judgment.revision, source: judgment.source }
                        : { labels: null, revision: 0, source: "" };
  doc.state = Object.assign({}, EMPTY, doc.server.labels);
  doc.activeMs = judgment ? judgment.time_spent_ms || 0 : 0;
  const item = saves.adopt(data.saveUrl); // an unsaved version from an earlier visit is newer than the server's
  if (item) {
    Object.assign(doc.state, item.changes);
    doc.activeMs = Math.max(doc.activeMs, item.time);
  }
  doc.committed = Object.assign({}, doc.state);
  doc.sentMs = doc.activeMs;
  if (undo) hideToast(); // its undo was for the document left
  undo = null;
  render();
  return item;
}

function refusedAsClosed() {
  if (doc.data.closed) toast("This campaign is closed: labels can no longer change.");
  return doc.data.closed;
}
export const detailsLocked = () => doc.data.askDetailsOnlyIfRelevant && !(doc.state.relevance > 0);

export function setLabel(label) {
  if (refusedAsClosed()) return;
  const { dimension, value } = label;
  const before = Object.assign({}, doc.state);
  undo = null;
  if (dimension === "relevance") {
    doc.state.relevance = value;
    if (detailsLocked() && (before.quality !== null || before.stance)) {
      doc.state.quality = null;
      doc.state.stance = "";
      undo = { url: doc.data.saveUrl, labels: before };
      const lost = [before.quality !== null && "quality", before.stance && "stance"].filter(Boolean).join(" and ");
      toast(`Relevance ${value} cleared ${lost}.`, { label: "Undo", key: "z", run: undoClear });
    }
  } else if (detailsLocked()) {
    return toast(capitalise(dimension) + " is asked only for relevant documents: give a relevance above 0 first.");
  } else if (dimension === "quality") {
    doc.state.quality = doc.state.quality === value ? null : value;
  } else {
    doc.state.stance = doc.state.stance === value ? "" : value;
  }
  commit();
}

/** Bring back what the last relevance 0 cleared (relevance, quality and stance as they were). */
export function undoClear() {
  if (!undo || undo.url !== doc.data.saveUrl) return toast("Nothing to undo.");
  const { relevance, quality, stance } = undo.labels;
  Object.assign(doc.state, { relevance, quality, stance });
  undo = null;
  hideToast();
  commit();
  toast("Quality and stance are back.");
}

export function toggleFlag() {
  if (refusedAsClosed()) return;
  undo = null;
  doc.state.flagged = !doc.state.flagged;
  commit();
}

export function typeNote(text) {
  doc.state.note = text;
  clearTimeout(noteTimer);
  noteTimer = setTimeout(flushNote, NOTE_DELAY_MS);
  renderStatus();
}
export function flushNote() {
  if (noteTimer === null) return;
  clearTimeout(noteTimer);
  noteTimer = null;
  if (!doc.data.closed) commit();
}

/** Hand the changed fields to saves.js; with `always`, also just the active time. */
function commit(always = false) {
  const changes = {};
  for (const field of FIELDS) if (doc.state[field] !== doc.committed[field]) changes[field] = doc.state[field];
  render();
  if (doc.state.relevance === null || !(always || Object.keys(changes).length)) return renderStatus();
  tick();
  saves.record({ url: doc.data.saveUrl, page: doc.data.pageBase + doc.data.position + "/" }, changes,
               doc.server.revision, doc.activeMs);
  doc.committed = Object.assign({}, doc.state);
  doc.sentMs = doc.activeMs;
}

/** Leaving the document (another one, or the page): the note being typed and the reading time go out. */
export function leaving() {
  tick();
  if (doc.data.closed || doc.state.relevance === null) return;
  if (noteTimer !== null || doc.activeMs - doc.sentMs >= 1000) {
    clearTimeout(noteTimer);
    noteTimer = null;
    commit(true);
  }
}

/** The server stored a save of this page (`judgment` is its answer). */
export function stored(judgment) {
  doc.server = { labels: pick(judgment), revision: judgment.revision, source: judgment.source };
  renderStatus();
}

/** The assessor settled a conflict: `judgment` is the version stored elsewhere, `keepMine` their choice. */
export function resolved(judgment, keepMine) {
  const changes = (saves.own(doc.data.saveUrl) || { changes: {} }).changes;
  doc.server = judgment ? { labels: pick(judgment), revision: judgment.revision, source: judgment.source }
                        : { labels: null, revision: 0, source: "" };
  doc.state = Object.assign({}, EMPTY, doc.server.labels, keepMine ? changes : {});
  doc.committed = Object.assign({}, doc.state);
  if (keepMine) saves.keepMine(doc.data.saveUrl, doc.server.revision); else saves.keepSaved(doc.data.saveUrl);
  render();
}

// ---------------------------------------------------------------- active time
let lastInput = performance.now();
let lastTick = performance.now();
export function tick() {
  const now = performance.now();
  if (document.visibilityState === "visible" && now - lastInput < IDLE_MS) doc.activeMs += Math.min(now - lastTick, 2000);
  lastTick = now;
  const seconds = Math.floor(doc.activeMs / 1000);
  $("#active-time").textContent = Math.floor(seconds / 60) + ":" + String(seconds % 60).padStart(2, "0");
}
["keydown", "pointerdown", "pointermove", "wheel"].forEach((type) =>
  window.addEventListener(type, () => { lastInput = performance.now(); }, { passive: true, capture: true }));
document.addEventListener("scroll", () => { lastInput = performance.now(); }, { passive: true, capture: true });
document.addEventListener("visibilitychange", () => { tick(); lastTick = performance.now(); });

// ---------------------------------------------------------------- drawing
export function render() {
  const state = doc.state;
  $$(".label-btn").forEach((button) => {
    const label = byKey.get(button.dataset.key.toLowerCase());
    button.setAttribute("aria-pressed", String(state[label.dimension] === label.value));
  });
  $$("fieldset.labels").forEach((fieldset) => {
    fieldset.classList.toggle("locked", fieldset.dataset.dimension !== "relevance" && detailsLocked());
  });
  $(".flag-btn").setAttribute("aria-pressed", String(state.flagged));
  const note = $("#note");
  if (document.activeElement !== note) note.value = state.note;
  $(".note-toggle").classList.toggle("has-note", Boolean(state.note));
  const judged = doc.data.judgedElsewhere + (state.relevance !== null ? 1 : 0);
  $("#judged-count").textContent = judged;
  $("#progress").value = judged;
  renderStatus();
  events.dispatchEvent(new Event("changed"));
}

export function renderStatus() {
  const item = saves.own(doc.data.saveUrl);
  const state = doc.state;
  let kind;
  let text;
  if (item && item.conflict) { kind = "error"; text = "Not saved: changed elsewhere. Choose a version"; }
  else if (item && item.error) { kind = "error"; text = "Not saved: " + item.error; }
  else if (item && saves.status.attempt > 0) { kind = "unsaved"; text = "Not saved yet, retrying"; }
  else if (item) { kind = "saving"; text = "Saving…"; }
  else if (state.relevance !== null && noteTimer === null) {
    kind = "saved";
    text = doc.server.source === "duplicate" ? "Saved (copied from an identical document)" : "Saved";
  } else if (state.relevance !== null) { kind = "saving"; text = "Saving…"; }
  else if (state.flagged || state.note || state.quality !== null || state.stance) { kind = "unsaved"; text = "Choose a relevance to save"; }
  else { kind = "idle"; text = "Not judged yet"; }
  const element = $("#save-state");
  element.dataset.state = kind;
  element.textContent = text;
}
