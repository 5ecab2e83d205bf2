/* The judge page's windows: guidelines, keys, and the jump list. */

import * as labels from "./labels.js";
import * as navigation from "./navigation.js";
import { $, $$, prefs, savePrefs, toast } from "./util.js";

export function open(id) {
  const dialog = document.getElementById(id);
  if (!dialog.open) dialog.showModal();
  return dialog;
}
export const anyOpen = () => $$("dialog").some((d) => d.open);

$$("dialog [data-close]").forEach((button) => button.addEventListener("click", () => button.closest("dialog").close()));
$$("dialog:not(.conflict)").forEach((dialog) => dialog.addEventListener("click", (e) => { if (e.target === dialog) dialog.close(); }));

// ---------------------------------------------------------------- jump list
// Loaded from the queue API when asked for, so opening a document never pays for listing the whole topic.
let rows = null;

export function openJump() {
  const dialog = open("dlg-jump");
  const input = $("#jump-to", dialog);
  input.value = "";
  input.focus();
  loadRows();
}

async function loadRows() {
  const grid = $("#jump-grid");
  if (!rows) {
    grid.replaceChildren(message("Loading…"));
    try {
      const response = await fetch(labels.doc.data.queueUrl + "?page_size=10000", { credentials: "same-origin", headers: { "Accept": "application/json" } });
      if (!response.ok) throw new Error("the server answered " + response.status);
      rows = (await response.json()).results.map((item) => ({
        position: item.position,
        judged: item.judged,
        grade: item.judgment ? gradeOf(item.judgment.labels) : null,
        flagged: item.judgment ? item.judgment.flagged : false,
      }));
    } catch (e) {
      grid.replaceChildren(message("The list could not be loaded (" + e.message + "). Type a position above."));
      return;
    }
  }
  buildGrid();
}

// A cell shows the value of the scheme's primary dimension (relevance in Touché's), as the page counts progress by.
const gradeOf = (values) => (labels.scheme.primary.name in values ? values[labels.scheme.primary.name] : null);

/** Keep the list's entry for the document on screen up to date (its labels may be newer than the list). */
export function note(position, state) {
  const row = rows && rows[position - 1];
  if (row) Object.assign(row, { judged: labels.isJudged(), grade: gradeOf(state.labels), flagged: state.flagged });
}

function message(text) {
  const item = document.createElement("li");
  item.className = "jump-message muted";
  item.textContent = text;
  return item;
}

function buildGrid() {
  const grid = $("#jump-grid");
  const only = $("#jump-unjudged").checked;
  const data = labels.doc.data;
  note(data.position, labels.doc.state);
  grid.replaceChildren();
  rows.forEach((row) => {
    const current = row.position === data.position;
    if (only && row.judged && !current) return;
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = data.pageBase + row.position + "/";
    link.textContent = row.position;
    const primary = labels.scheme.primary.name;
    link.className = "cell " + (row.grade !== null ? "r-" + row.grade : row.judged ? "judged" : "r-none") + (row.flagged ? " flagged" : "") + (current ? " current" : "");
    link.title = "Document " + row.position + (row.grade === null ? "" : `, ${primary} ${row.grade}`) +
      (row.judged ? "" : ", not judged") + (row.flagged ? ", flagged" : "");
    link.addEventListener("click", (e) => { e.preventDefault(); $("#dlg-jump").close(); navigation.go(row.position); });
    item.append(link);
    grid.append(item);
  });
}

export function drawUnjudgedOnly() {
  $$('[data-action="unjudged-only"]').forEach((b) => b.setAttribute("aria-pressed", String(prefs.unjudgedOnly)));
  $("#jump-unjudged").checked = prefs.unjudgedOnly;
}

$("#jump-unjudged").addEventListener("change", () => {
  prefs.unjudgedOnly = $("#jump-unjudged").checked;
  savePrefs();
  drawUnjudgedOnly();
  if (rows) buildGrid();
});
$("#jump-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const position = parseInt($("#jump-to").value, 10);
  if (position >= 1 && position <= labels.doc.data.total) {
    $("#dlg-jump").close();
    navigation.go(position);
  } else {
    toast("Positions go from 1 to " + labels.doc.data.total + ".");
  }
});
