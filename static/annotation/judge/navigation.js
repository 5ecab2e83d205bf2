/* Moving between documents without leaving the page.
 *
 * The next document comes from the same URL as its own page, asked for with htmx's header, which answers
 * with the document partial (annotation/views.py). The page stays, so keys pressed while it loads are kept
 * in order and applied to it once it shows (main.js), never to the document being left. Moving on waits
 * (briefly) for this document's save, so the next one counts it as judged.
 */

import * as saves from "../saves.js";
import * as labels from "./labels.js";
import { $, $$, toast } from "./util.js";

export const events = new EventTarget(); // "arrived" once a document is on screen; "failed" if it could not come
let target = null; // the position being loaded

export const loading = () => target !== null;

export async function go(position, { push = true } = {}) {
  const data = labels.doc.data;
  if (target !== null || position < 1 || position > data.total) return;
  target = position;
  labels.leaving();
  drawLoading();
  await saves.settled(data.saveUrl, 2000);
  const left = saves.own(data.saveUrl);
  if (left && left.conflict) return stop("This document was changed elsewhere: choose a version first.");
  let parts;
  try {
    parts = await fetchDocument(data.pageBase + position + "/");
  } catch (error) {
    return stop(`Document ${position} could not be loaded (${error.message}).`);
  }
  swap(parts, push);
  target = null;
  drawLoading();
  events.dispatchEvent(new Event("arrived"));
}

function stop(message) {
  target = null;
  drawLoading();
  events.dispatchEvent(new CustomEvent("failed", { detail: message }));
}

async function fetchDocument(url) {
  const response = await fetch(url, { credentials: "same-origin", headers: { "HX-Request": "true", "Accept": "text/html" } });
  if (!response.ok) throw new Error("the server answered " + response.status);
  // Parsed, not run: the partial is the server's sanitised document under the page's script policy, and
  // scripts in a parsed document never run. Its data comes first, so nothing in the document precedes it.
  const parsed = new DOMParser().parseFromString(await response.text(), "text/html");
  const dataScript = parsed.getElementById("judge-data");
  const head = parsed.querySelector("body > #doc-head-main");
  const content = parsed.querySelector("body > #doc-content");
  if (!dataScript || !head || !content) throw new Error(response.redirected ? "your session has ended: log in again" : "not a document");
  return { data: JSON.parse(dataScript.textContent), head, content };
}

function swap({ data, head, content }, push) {
  document.getElementById("doc-head-main").replaceWith(document.adoptNode(head));
  document.getElementById("doc-content").replaceWith(document.adoptNode(content));
  document.title = data.title + " · Touchstone";
  if (push) history.pushState({ position: data.position }, "", data.pageBase + data.position + "/");
  const item = labels.show(data);
  drawPlace();
  events.dispatchEvent(new CustomEvent("shown", { detail: item }));
  const scroller = $("#doc-scroll");
  scroller.scrollTop = 0;
  if (!document.activeElement || document.activeElement === document.body || !document.activeElement.closest("dialog")) {
    scroller.focus({ preventScroll: true, focusVisible: false });
  }
}

/** Where this document is in the queue, and which ways the assessor can go from here. */
export function drawPlace() {
  const data = labels.doc.data;
  $("#pos").textContent = data.position;
  $$('[data-action="previous"]').forEach((b) => { b.disabled = data.position === 1; });
  $$('[data-action="next"]').forEach((b) => { b.disabled = data.position === data.total; });
}

let queuedKeys = [];
export function drawLoading(queued = queuedKeys) {
  queuedKeys = queued;
  const pane = $("#doc-pane");
  const note = $("#loading");
  pane.setAttribute("aria-busy", String(target !== null));
  note.hidden = target === null;
  if (target === null) return;
  note.textContent = `Loading document ${target}…` + (queued.length ? " Keys waiting for it: " + queued.join(" ") : "");
}

// Counts and unjudged neighbours come with each document, as the server had them then. A label of another document
// stored after that (saved late: offline, or retried) makes them stale, so they are asked for again, once a burst of
// such saves has settled; a document on its way brings its own.
let recountTimer = null;
export function recount() {
  clearTimeout(recountTimer);
  recountTimer = setTimeout(async () => {
    const data = labels.doc.data;
    if (target !== null) return;
    let parts;
    try {
      parts = await fetchDocument(data.pageBase + data.position + "/");
    } catch (error) {
      return; // the next document brings fresh counts
    }
    if (labels.doc.data !== data || target !== null) return;
    for (const field of ["total", "judgedElsewhere", "followingUnjudged", "precedingUnjudged", "nextUnjudged", "afterTopic"]) {
      data[field] = parts.data[field];
    }
    labels.render();
    drawPlace();
  }, 300);
}

// Unjudged neighbours as the server counted them when the document was loaded (or recounted).
export function step(direction, unjudgedOnly) {
  const data = labels.doc.data;
  if (unjudgedOnly) {
    const to = direction > 0 ? data.followingUnjudged : data.precedingUnjudged;
    if (to) return go(to);
    return toast("No unjudged document " + (direction > 0 ? "after" : "before") + " this one.");
  }
  const to = data.position + direction;
  if (to < 1 || to > data.total) return toast(direction > 0 ? "This is the last document." : "This is the first document.");
  go(to);
}

export function nextUnjudged() {
  const data = labels.doc.data;
  if (data.nextUnjudged) return go(data.nextUnjudged);
  toast(labels.isJudged() ? `All ${data.total} documents are judged.` : "This is the only unjudged document.");
}

window.addEventListener("popstate", (e) => {
  const position = e.state && e.state.position;
  if (position && position !== labels.doc.data.position) go(position, { push: false });
});
