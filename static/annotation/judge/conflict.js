/* A label saved elsewhere meanwhile: both versions side by side, and the assessor keeps one (a or b). */

import * as labels from "./labels.js";
import * as saves from "../saves.js";
import { $, $$ } from "./util.js";

const dialog = $("#dlg-conflict");
let shown = null; // the stored judgment the dialog offers (null: there is none)

// The names the label buttons show: the scheme's ("Pro first object"), without the topic's object beside them.
function name(dimension, value) {
  const button = $$(`.label-btn[data-dimension="${dimension}"]`).find((b) => b.dataset.value === String(value));
  return button ? button.querySelector("span").textContent : String(value);
}

// One row per dimension of the scheme, then the note and the flag: [field, title, long form, short form].
const dimensionRows = () => labels.scheme.dimensions.map((d) => [
  d.name, d.title,
  (v) => (v === undefined ? "—" : d.kind === "graded" ? v + " · " + name(d.name, v) : name(d.name, v)),
  // The primary dimension by its grade ("2"), as the jump list shows it; the others by their names.
  (v) => (v === undefined ? "no " + d.name : d === labels.scheme.primary ? String(v) : name(d.name, v)),
]);
const OTHER_ROWS = [
  ["note", "Note", (v) => v || "—", (v) => (v ? "note “" + v + "”" : "no note")],
  ["flagged", "Unsure", (v) => (v ? "yes" : "no"), (v) => (v ? "unsure" : "not unsure")],
];

// A version as rows read it: every dimension's value (undefined: none), the note and the flag.
const flat = (state) => Object.assign({ note: state.note, flagged: state.flagged }, state.labels);

export function open(judgment) {
  const item = saves.own(labels.doc.data.saveUrl);
  if (!item) return;
  shown = judgment;
  const rows = [...dimensionRows(), ...OTHER_ROWS];
  const savedState = judgment ? labels.pick(judgment) : { labels: {}, note: "", flagged: false };
  const saved = flat(savedState);
  const yours = flat(labels.doc.state); // exactly what this page shows (labels.resolved keeps it as it is)
  const changed = rows.map(([field]) => field).filter((field) => yours[field] !== saved[field]);
  fill($("#conflict-saved"), rows, saved, []);
  fill($("#conflict-yours"), rows, yours, changed);
  const savedShort = judgment ? dimensionRows().filter(([field]) => saved[field] !== undefined)
    .map(([field, , , short]) => short(saved[field])).join(" / ") || "no labels" : "nothing (the label was removed)";
  $("#conflict-summary").textContent = "Saved elsewhere: " + savedShort + " — yours: " +
    (rows.filter(([field]) => changed.includes(field)).map(([field, , , short]) => short(yours[field])).join(" / ") || "the same");
  if (!dialog.open) dialog.showModal();
}

function fill(list, rows, values, changed) {
  list.replaceChildren();
  for (const [field, title, show] of rows) {
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
