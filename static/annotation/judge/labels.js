/* The labels of the document on screen: the version the server has, the assessor's own, and the changes
 * between them, which go to the server through saves.js.
 *
 * The dimensions come from the campaign's label scheme (assessments/labels.py, in the first page's data): a
 * dimension is shown and asked only while its condition holds, and a change that makes a condition fail clears
 * what depended on it (with an undo). `state` is what the page shows ({labels: {dimension: value}, note,
 * flagged}); `committed` is what has been handed to saves.js, so a change sends only the dimensions and fields
 * that differ (a stance chosen never resends a relevance). Any change is saved at once: a flag or a note alone is
 * a judgment, which counts as judged once every required dimension the scheme asks has a value.
 */

import * as saves from "../saves.js";
import { $, $$, capitalise, hideToast, listed, toast, withdrawToast } from "./util.js";

const EMPTY = { labels: {}, note: "", flagged: false };
const IDLE_MS = 90000; // no input for this long: the assessor is away, the clock stops
const NOTE_DELAY_MS = 700; // save the note once typing pauses

export const events = new EventTarget(); // "changed" whenever the labels on screen change
export const doc = { data: null, server: null, state: null, committed: null, activeMs: 0, sentMs: 0 };
export const scheme = { dimensions: [], byName: new Map(), primary: null };
let byKey = new Map(); // key → {dimension, value, name}
let undo = null; // the labels before a change cleared the dimensions it no longer asks: {url, labels}
let noteTimer = null;

export function configure(keys, schemeData) {
  byKey = new Map(keys.labels.map((l) => [l.key.toLowerCase(), l]));
  scheme.dimensions = schemeData.dimensions;
  scheme.byName = new Map(schemeData.dimensions.map((d) => [d.name, d]));
  // As LabelScheme.primary: what the jump list shows of a judged document.
  scheme.primary = scheme.dimensions.find((d) => d.required && d.kind === "graded") || scheme.dimensions[0];
}
export const labelForKey = (key) => byKey.get(key);

// ---------------------------------------------------------------- the scheme's rules (as assessments/labels.py)
function holds(condition, labels) {
  const value = labels[condition.dimension];
  if (value === undefined) return false;
  return "min" in condition ? typeof value === "number" && value >= condition.min : condition.in.includes(value);
}
export const asked = (dimension, labels) => !dimension.condition || holds(dimension.condition, labels);

/** The labels without the dimensions their conditions no longer ask (followed through chains). */
function cleared(labels) {
  const kept = Object.assign({}, labels);
  for (;;) {
    const gone = scheme.dimensions.filter((d) => d.name in kept && !asked(d, kept));
    if (!gone.length) return kept;
    gone.forEach((d) => { delete kept[d.name]; });
  }
}

/** The required dimensions that these labels are asked and lack (none: the document counts as judged). */
export const missing = (labels) => scheme.dimensions.filter((d) => d.required && asked(d, labels) && !(d.name in labels));

export function nameOf(dimension, value) {
  const found = scheme.byName.get(dimension).values.find((v) => v.value === value);
  return found ? found.name : String(value);
}

/** "relevance is 1 or more", "direction is Cause → effect, as asked" */
function describe(condition) {
  const target = scheme.byName.get(condition.dimension);
  const title = target.title.charAt(0).toLowerCase() + target.title.slice(1);
  if ("min" in condition) return `${title} is ${condition.min} or more`;
  return `${title} is ${condition.in.map((v) => nameOf(target.name, v)).join(" or ")}`;
}

// ---------------------------------------------------------------- the labels on screen
export function pick(judgment) {
  return { labels: Object.assign({}, judgment.labels), note: judgment.note || "", flagged: Boolean(judgment.flagged) };
}
const copy = (state) => ({ labels: Object.assign({}, state.labels), note: state.note, flagged: state.flagged });
const isEmpty = (state) => !Object.keys(state.labels).length && !state.note && !state.flagged;

/** The state with the changes of a waiting save (see saves.js) applied: `labels` per dimension, null clearing one. */
function withChanges(state, changes) {
  const result = copy(state);
  for (const [name, value] of Object.entries(changes.labels || {})) {
    if (value === null) delete result.labels[name]; else result.labels[name] = value;
  }
  if ("note" in changes) result.note = changes.note;
  if ("flagged" in changes) result.flagged = changes.flagged;
  return result;
}

/** Show the document described by the page data `data` (a new page, or one swapped in). */
export function show(data) {
  flushNote();
  doc.data = data;
  const judgment = data.judgment;
  doc.server = judgment ? { labels: pick(judgment), revision: judgment.revision, source: judgment.source }
                        : { labels: null, revision: 0, source: "" };
  doc.state = copy(doc.server.labels || EMPTY);
  doc.activeMs = judgment ? judgment.time_spent_ms || 0 : 0;
  const item = saves.adopt(data.saveUrl); // an unsaved version from an earlier visit is newer than the server's
  if (item) {
    // As that visit showed it; an item kept by a page from before items held their version has only its changes.
    doc.state = item.shown ? copy(item.shown) : withChanges(doc.state, item.changes);
    doc.activeMs = Math.max(doc.activeMs, item.time);
  }
  doc.committed = copy(doc.state);
  doc.sentMs = doc.activeMs;
  dropUndo(); // its undo was for the document left
  render();
  return item;
}

/** Refuse a change on a read-only page, saying why (the campaign or the training round is closed). */
function refusedAsClosed() {
  if (doc.data.closed) toast(doc.data.closed);
  return Boolean(doc.data.closed);
}

/** Another change came after the one that cleared labels: there is nothing to undo any more, so no toast offers it. */
function dropUndo() {
  undo = null;
  withdrawToast(undoClear);
}

export function setLabel(label) {
  if (refusedAsClosed()) return;
  const { dimension, value } = label;
  const d = scheme.byName.get(dimension);
  const labels = doc.state.labels;
  if (!asked(d, labels)) {
    return toast(`${d.title} is asked only when ${describe(d.condition)}.`);
  }
  dropUndo();
  const before = Object.assign({}, labels);
  // A dimension that may stay empty is unset by choosing its value again; a required one only changes.
  if (labels[dimension] === value && !d.required) delete labels[dimension]; else labels[dimension] = value;
  doc.state.labels = cleared(labels);
  const lost = Object.keys(labels).filter((name) => !(name in doc.state.labels));
  if (lost.length) {
    undo = { url: doc.data.saveUrl, labels: before };
    toast(`${capitalise(dimension)} ${value} cleared ${listed(lost)}.`, { label: "Undo", key: "z", run: undoClear });
  }
  commit();
}

/** Bring back the labels as they were before a change cleared the dimensions it no longer asked. */
export function undoClear() {
  if (!undo || undo.url !== doc.data.saveUrl) return toast("Nothing to undo.");
  const back = Object.keys(undo.labels).filter((name) => doc.state.labels[name] !== undo.labels[name]);
  doc.state.labels = Object.assign({}, undo.labels);
  undo = null;
  hideToast();
  commit();
  toast(`${capitalise(listed(back))} ${back.length === 1 ? "is" : "are"} back.`);
}

export function toggleFlag() {
  if (refusedAsClosed()) return;
  dropUndo();
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

/** What differs between two states, as a save sends it: changed dimensions in `labels` (null: cleared). */
function changesBetween(from, to) {
  const changes = {};
  const labels = {};
  for (const name of new Set([...Object.keys(from.labels), ...Object.keys(to.labels)])) {
    if (from.labels[name] !== to.labels[name]) labels[name] = name in to.labels ? to.labels[name] : null;
  }
  if (Object.keys(labels).length) changes.labels = labels;
  if (from.note !== to.note) changes.note = to.note;
  if (from.flagged !== to.flagged) changes.flagged = to.flagged;
  return changes;
}

/** Hand the changed fields to saves.js; with `always`, also just the active time. */
function commit(always = false) {
  const changes = changesBetween(doc.committed, doc.state);
  render();
  if (!(always || Object.keys(changes).length)) return renderStatus();
  tick();
  saves.record({ url: doc.data.saveUrl, page: doc.data.pageBase + doc.data.position + "/" }, changes,
               doc.server.revision, doc.activeMs, copy(doc.state));
  doc.committed = copy(doc.state);
  doc.sentMs = doc.activeMs;
}

/** Leaving the document (another one, or the page): the note being typed and the reading time go out. Reading
 * time alone makes no judgment of a document the assessor left without one. */
export function leaving() {
  tick();
  if (doc.data.closed || (isEmpty(doc.state) && !doc.server.labels)) return;
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

/** The assessor settled a conflict: `judgment` is the version stored elsewhere, `keepMine` their choice.
 *
 * Theirs is exactly the version on screen, every dimension, the note and the flag: the changes they made, applied
 * over the version stored elsewhere, would mix in labels this page never showed (a quality beside their relevance 0,
 * which the server refuses, so the save would never go through). */
export function resolved(judgment, keepMine) {
  dropUndo();
  doc.server = judgment ? { labels: pick(judgment), revision: judgment.revision, source: judgment.source }
                        : { labels: null, revision: 0, source: "" };
  const stored = doc.server.labels || EMPTY;
  if (keepMine) {
    saves.keepMine(doc.data.saveUrl, doc.server.revision, changesBetween(stored, doc.state));
  } else {
    doc.state = copy(stored);
    saves.keepSaved(doc.data.saveUrl);
  }
  doc.committed = copy(doc.state);
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
    button.setAttribute("aria-pressed", String(state.labels[label.dimension] === label.value));
  });
  $$("fieldset.labels").forEach((fieldset) => {
    fieldset.hidden = !asked(scheme.byName.get(fieldset.dataset.dimension), state.labels);
  });
  $(".flag-btn").setAttribute("aria-pressed", String(state.flagged));
  const note = $("#note");
  if (document.activeElement !== note) note.value = state.note;
  $(".note-toggle").classList.toggle("has-note", Boolean(state.note));
  const judged = doc.data.judgedElsewhere + (isJudged() ? 1 : 0);
  $("#judged-count").textContent = judged;
  $("#progress").value = judged;
  drawTopicDone(judged === doc.data.total);
  renderStatus();
  events.dispatchEvent(new Event("changed"));
}

const myWork = $("#topic-next").getAttribute("href");

/** Once every document of the topic is judged: a link to the assessor's next topic with documents left (the page's
 * data has it while this is the last one left, annotation.views), or back to My work. */
function drawTopicDone(done) {
  const note = $("#topic-done");
  const after = doc.data.afterTopic;
  const link = $("#topic-next");
  note.hidden = !done;
  link.href = after ? after.url : myWork;
  link.textContent = after && after.topic ? "Next topic: " + after.topic : "Back to My work";
}

/** Whether the document on screen counts as judged: it has labels and none that the scheme asks is missing. */
export const isJudged = () => !isEmpty(doc.state) && !missing(doc.state.labels).length;

export function renderStatus() {
  const item = saves.own(doc.data.saveUrl);
  const state = doc.state;
  let kind;
  let text;
  if (item && item.conflict) { kind = "error"; text = "Not saved: changed elsewhere. Choose a version"; }
  else if (item && item.error) { kind = "error"; text = "Not saved: " + item.error; }
  else if (item && saves.status.attempt > 0) { kind = "unsaved"; text = "Not saved yet, retrying"; }
  else if (item || noteTimer !== null) { kind = "saving"; text = "Saving…"; }
  else if (!isEmpty(state)) {
    kind = "saved";
    const lacking = missing(state.labels).map((d) => d.name);
    text = doc.server.source === "duplicate" ? "Saved (copied from an identical document)"
      : lacking.length ? `Saved, without ${listed(lacking)} yet` : "Saved";
  } else { kind = "idle"; text = "Not judged yet"; }
  const element = $("#save-state");
  element.dataset.state = kind;
  element.textContent = text;
}
