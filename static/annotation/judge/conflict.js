/* A label saved elsewhere meanwhile: both versions side by side, and the assessor keeps one (a or b). */

import * as labels from "./labels.js";
import * as saves from "../saves.js";
import { $, $$ } from "./util.js";

const dialog = $("#dlg-conflict");
let shown = null; // the stored judgment the dialog offers (null: there is none)

// The names the label buttons show ("Pro cats" rather than "Pro first object").
function name(dimension, value) {
  const button = $$(`.label-btn[data-dimension="${dimension}"]`).find((b) => b.dataset.value === String(value));
  return button ? button.querySelector("span").textContent : String(value);
}

const ROWS = [
  ["relevance", "Relevance", (v) => (v === null ? "—" : v + " · " + name("relevance", v))],
  ["quality", "Quality", (v) => (v === null ? "—" : name("quality", v))],
  ["stance", "Stance", (v) => (v ? name("stance", v) : "—")],
  ["note", "Note", (v) => v || "—"],
  ["flagged", "Unsure", (v) => (v ? "yes" : "no")],
];
const SHORT = {
  relevance: (v) => String(v),
  quality: (v) => (v === null ? "no quality" : name("quality", v)),
  stance: (v) => (v ? name("stance", v) : "no stance"),
  note: (v) => (v ? "note “" + v + "”" : "no note"),
  flagged: (v) => (v ? "unsure" : "not unsure"),
};

export function open(judgment) {
  const item = saves.own(labels.doc.data.saveUrl);
  if (!item) return;
  shown = judgment;
  const saved = Object.assign({ relevance: null, quality: null, stance: "", note: "", flagged: false }, judgment && labels.pick(judgment));
  const yours = Object.assign({}, saved, item.changes);
  const changed = ROWS.map(([field]) => field).filter((field) => yours[field] !== saved[field]);
  fill($("#conflict-saved"), saved, []);
  fill($("#conflict-yours"), yours, changed);
  const savedShort = judgment ? [saved.relevance, saved.quality === null ? null : name("quality", saved.quality), saved.stance && name("stance", saved.stance)]
    .filter((v) => v !== null && v !== "").join(" / ") : "nothing (the label was removed)";
  $("#conflict-summary").textContent = "Saved elsewhere: " + savedShort +
    " — yours: " + (changed.map((field) => SHORT[field](yours[field])).join(" / ") || "the same");
  if (!dialog.open) dialog.showModal();
}

function fill(list, values, changed) {
  list.replaceChildren();
  for (const [field, title, show] of ROWS) {
    const term = document.createElement("dt");
    term.textContent = title;
    const value = document.createElement("dd");
    value.textContent = show(values[field]);
    if (changed.includes(field)) { value.className = "differs"; term.className = "differs"; }
    list.append(term, value);
  }
}

export const isOpen = () => dialog.open;

export function choose(which) {
  if (!dialog.open) return;
  dialog.close();
  labels.resolved(shown, which === "yours");
}

$$("#dlg-conflict [data-choice]").forEach((button) => button.addEventListener("click", () => choose(button.dataset.choice)));
