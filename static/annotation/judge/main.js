/* Judge page: keyboard-first labelling that never stores a label the assessor did not mean.
 *
 *   saves.js       labels on their way to the server (kept in localStorage, PATCH with base_revision)
 *   labels.js      the labels of the document on screen, and the changes to send
 *   navigation.js  moving to another document without leaving the page
 *   conflict.js    a label saved elsewhere meanwhile: the assessor keeps one version
 *   dialogs.js     guidelines, keys and the jump list
 *   view.js        highlighting and plain text
 *
 * This module reads the keyboard and the buttons. While the next document loads, label and moving keys
 * wait for it, in order; keys that only make sense on the document being left (scrolling, views) are
 * refused with a note.
 */

import * as saves from "../saves.js";
import * as conflict from "./conflict.js";
import * as dialogs from "./dialogs.js";
import * as labels from "./labels.js";
import * as navigation from "./navigation.js";
import { $, $$, plural, prefs, savePrefs, toast } from "./util.js";
import * as view from "./view.js";

const first = JSON.parse(document.getElementById("judge-data").textContent); // the page as loaded
saves.start({ user: first.user, csrf: first.csrf, live: true });
labels.configure(first.keys, first.scheme);
view.configure(first.terms);

const commandKeys = new Map();
first.keys.commands.forEach((c) => c.keys.forEach((k) => commandKeys.set(k.length === 1 ? k.toLowerCase() : k, c.action)));
// Commands that can wait for the next document: they change labels or move on.
const QUEUEABLE = new Set(["next", "previous", "next-unjudged", "flag", "undo"]);
const MAX_QUEUED = 40;
const scroller = $("#doc-scroll");

const actions = {
  "next": () => navigation.step(1, prefs.unjudgedOnly),
  "previous": () => navigation.step(-1, prefs.unjudgedOnly),
  "next-unjudged": navigation.nextUnjudged,
  "jump": dialogs.openJump,
  "unjudged-only": () => {
    prefs.unjudgedOnly = !prefs.unjudgedOnly;
    savePrefs();
    dialogs.drawUnjudgedOnly();
    toast(prefs.unjudgedOnly ? "Previous and Next now skip judged documents." : "Previous and Next visit every document.");
  },
  "highlight": () => view.setHighlight(!prefs.highlight),
  "plain": () => view.setPlain(!prefs.plain),
  "translation": view.toggleTranslation,
  "zoom": view.toggleZoom,
  "sources": view.toggleSources,
  "flag": labels.toggleFlag,
  "undo": labels.undoClear,
  "note": openNote,
  "topic": toggleTopic,
  "guidelines": () => dialogs.open("dlg-guidelines"),
  "help": () => dialogs.open("dlg-help"),
  "scroll-down": (e) => scroller.scrollBy({ top: e && e.key === " " ? scroller.clientHeight * 0.9 : 80 }),
  "scroll-up": () => scroller.scrollBy({ top: -80 }),
};

// ---------------------------------------------------------------- keys
let queued = [];

function handle(key, event) {
  const label = labels.labelForKey(key);
  const action = commandKeys.get(key);
  if (navigation.loading()) {
    if ((label || QUEUEABLE.has(action)) && queued.length < MAX_QUEUED) {
      queued.push(key);
      navigation.drawLoading(queued);
    } else if (label || action) {
      toast("The next document is loading: that key waits for nothing, press it again once it shows.");
    }
    return Boolean(label || action);
  }
  if (label) { labels.setLabel(label); return true; }
  if (action && actions[action]) { actions[action](event); return true; }
  return false;
}

function replay() {
  while (queued.length && !navigation.loading() && !dialogs.anyOpen()) handle(queued.shift());
  if (queued.length && !navigation.loading()) dropQueued("a window opened");
  navigation.drawLoading(queued);
}

function dropQueued(why) {
  if (queued.length) toast(`${plural(queued.length, "key")} not applied (${why}): ${queued.join(" ")}`);
  queued = [];
}

document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
  const target = e.target;
  if (target.closest && target.closest("textarea, input, select, [contenteditable]")) {
    if (e.key === "Escape" && !dialogs.anyOpen()) { target.blur(); e.preventDefault(); }
    return;
  }
  const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  if (conflict.isOpen()) {
    if (key === "a" || key === "b") { e.preventDefault(); conflict.choose(key === "a" ? "saved" : "yours"); }
    return; // Esc closes it; the choice waits (the status and the banner offer it again)
  }
  if (dialogs.anyOpen()) {
    if (key === "?" && $("#dlg-help").open) { $("#dlg-help").close(); e.preventDefault(); }
    return; // a dialog keeps its own keys (Esc closes it)
  }
  if (!navigation.loading()) {
    if (key === " " && e.shiftKey) { e.preventDefault(); scroller.scrollBy({ top: -scroller.clientHeight * 0.9 }); return; }
    if (key === "PageDown" || key === "PageUp") { e.preventDefault(); scroller.scrollBy({ top: (key === "PageDown" ? 0.9 : -0.9) * scroller.clientHeight }); return; }
  }
  if (handle(key, e)) e.preventDefault();
});

// Buttons act on the document on screen, so they wait while another one loads.
function click(run) {
  return () => {
    if (navigation.loading()) return toast("The next document is loading: tap again once it shows.");
    run();
  };
}
$$("[data-action]").forEach((button) => button.addEventListener("click", click(() => actions[button.dataset.action]())));
$$(".label-btn").forEach((button) => button.addEventListener("click", click(() => labels.setLabel(labels.labelForKey(button.dataset.key.toLowerCase())))));

// ---------------------------------------------------------------- the note
const note = $("#note");
function openNote() {
  $(".label-pane").classList.add("note-open");
  $(".note-toggle").setAttribute("aria-expanded", "true");
  note.focus();
}
note.addEventListener("input", () => labels.typeNote(note.value));
note.addEventListener("blur", () => {
  labels.flushNote();
  if (!note.value) {
    $(".label-pane").classList.remove("note-open");
    $(".note-toggle").setAttribute("aria-expanded", "false");
  }
});

// ---------------------------------------------------------------- the topic panel
// A column on a desktop; below 1100 px it stands above the document until folded, and below 700 px it is folded
// until opened over the document (touchstone.css). Its toggle and `b` show or fold it; the toggle says which it is.
const topicPanel = $(".topic-panel");
const topicToggle = $(".topic-panel .panel-toggle");
const topicShown = () => getComputedStyle($("#topic-body")).display !== "none";

function toggleTopic() {
  if (getComputedStyle(topicToggle).display === "none") return; // a column: always shown
  const show = !topicShown();
  topicPanel.classList.toggle("open", show);
  topicPanel.classList.toggle("folded", !show);
  drawTopic();
}
function drawTopic() {
  topicToggle.setAttribute("aria-expanded", String(topicShown()));
}
["(max-width: 699px)", "(max-width: 1099px)"].forEach((query) => window.matchMedia(query).addEventListener("change", drawTopic));

// ---------------------------------------------------------------- saving, shown
function drawBanner() {
  const banner = $("#save-banner");
  banner.replaceChildren();
  const items = saves.all();
  const waiting = items.filter((i) => !i.error && !i.conflict);
  if (waiting.length && saves.status.attempt > 0) {
    const seconds = Math.max(0, Math.round((saves.status.retryAt - Date.now()) / 1000));
    banner.append(line("warn", `Labels of ${plural(saves.documents(waiting), "document")} not saved yet: ${saves.status.problem}. They are kept in this browser; ` +
      `retrying in ${seconds} s.`, "Retry now", () => { saves.status.attempt = 0; saves.flush(); }));
  }
  for (const item of items.filter((i) => i.conflict)) {
    if (item.url === labels.doc.data.saveUrl && item.owner === saves.TAB) {
      banner.append(line("bad", "This label was changed elsewhere meanwhile.", "Choose a version", () => conflict.open(item.conflict.judgment)));
    } else if (saves.answersFor(item)) {
      banner.append(line("bad", "A label of another document was changed elsewhere meanwhile.", "Open it", () => window.location.assign(item.page)));
    }
  }
  for (const item of items.filter((i) => i.error)) {
    banner.append(line("bad", `The server refused a label for ${item.url === labels.doc.data.saveUrl ? "this document" : "another document"}: ${item.error}`,
      "Dismiss", () => saves.dismiss(item.key)));
  }
  if (saves.status.storageBroken) {
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

saves.events.addEventListener("change", () => { labels.renderStatus(); drawBanner(); });
saves.events.addEventListener("saved", (e) => {
  if (e.detail.item.url === labels.doc.data.saveUrl) {
    if (e.detail.item.owner === saves.TAB) labels.stored(e.detail.judgment);
  } else {
    navigation.recount(); // another document's label, stored after this one came: the counts it came with are stale
  }
});
saves.events.addEventListener("conflict", (e) => {
  if (e.detail.item.url === labels.doc.data.saveUrl && e.detail.item.owner === saves.TAB) conflict.open(e.detail.judgment);
});
navigation.events.addEventListener("shown", (e) => {
  view.reset(labels.doc.data.hasText);
  drawBanner();
  if (e.detail && e.detail.conflict) conflict.open(e.detail.conflict.judgment);
});
navigation.events.addEventListener("arrived", replay);
navigation.events.addEventListener("failed", (e) => { dropQueued("the document did not load"); toast(e.detail); });
labels.events.addEventListener("changed", () => dialogs.note(labels.doc.data.position, labels.doc.state));

// Leaving the page sends the running total once more, so reading time after the last label counts; logging
// out (logout.js) first takes the note being typed.
window.addEventListener("pagehide", labels.leaving);
document.addEventListener("touchstone:logout", labels.leaving);

// ---------------------------------------------------------------- start
history.replaceState({ position: first.position }, "");
const left = labels.show(first);
navigation.drawPlace();
drawTopic();
view.reset(first.hasText);
dialogs.drawUnjudgedOnly();
drawBanner();
if (first.closed) { $$(".label-btn, .flag-btn").forEach((b) => { b.disabled = true; }); note.readOnly = true; }
if (left && left.conflict) conflict.open(left.conflict.judgment);
setInterval(labels.tick, 1000);
setInterval(() => { if (saves.status.attempt > 0) drawBanner(); }, 1000); // the retry countdown
saves.flush(); // labels left unsaved by earlier pages
// Keys scroll the document from the start; its focus ring is for those who reach it with Tab.
scroller.focus({ preventScroll: true, focusVisible: false });
