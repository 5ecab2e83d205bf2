/* The image grid: a screenful of thumbnails judged by keys (annotation/grid.py).
 *
 * A label key answers the selected image's dimension with that value, as on the judge page: a dimension asked only
 * under a condition answers the condition first when it is unanswered (p: on topic and supports pro), a change that
 * makes a condition fail clears what it asked (n: off topic clears the sides), and pressing a yes/no answer that an
 * optional question already has takes it back. Each change is a PATCH with the revision the grid showed, so a
 * label changed meanwhile elsewhere is refused (409) and shown, never overwritten. */

const data = JSON.parse(document.getElementById("grid-data").textContent);
const cells = Array.from(document.querySelectorAll(".grid-cell"));
const state = document.getElementById("grid-state");
const dims = new Map(data.scheme.dimensions.map((d) => [d.name, d]));
const byKey = new Map(data.keys.map((k) => [k.key.toLowerCase(), k]));
let selected = 0;
const judgedBefore = cells.filter((c) => c.classList.contains("judged")).length;
const judgedCount = document.getElementById("grid-judged");
const judgedElsewhere = Number(judgedCount.textContent) - judgedBefore;

function holds(condition, labels) {
  if (!condition) return true;
  const value = labels[condition.dimension];
  if (value === undefined || value === null) return false;
  return condition.min !== undefined && condition.min !== null ? value >= condition.min : (condition.in || []).includes(value);
}

function satisfying(condition) {
  const target = dims.get(condition.dimension);
  return target.values.map((v) => v.value).find((value) => holds(condition, { [condition.dimension]: value }));
}

/** The changes a key makes to `labels`: dimension -> value, or null to clear. */
function changesFor(key, labels) {
  const dim = dims.get(key.dimension);
  const changes = {};
  const next = { ...labels };
  if (dim.condition && !holds(dim.condition, next) && next[dim.condition.dimension] === undefined) {
    next[dim.condition.dimension] = changes[dim.condition.dimension] = satisfying(dim.condition);
  }
  const takeBack = dim.kind === "question" && !dim.required && labels[dim.name] === key.value;
  if (takeBack) { delete next[dim.name]; changes[dim.name] = null; } else { next[dim.name] = changes[dim.name] = key.value; }
  for (const other of data.scheme.dimensions) {  // clear what no longer asks (conditions are acyclic: one pass each)
    if (other.name in next && !holds(other.condition, next)) { delete next[other.name]; changes[other.name] = null; }
  }
  return changes;
}

function draw(index) {
  const cell = cells[index];
  const labels = data.cells[index].labels || {};
  const badges = cell.querySelector("[data-labels]");
  badges.replaceChildren(...(Object.keys(labels).length ? data.scheme.dimensions.filter((d) => d.name in labels).map((d) => {
    const badge = document.createElement("span");
    badge.className = "badge";
    badge.dataset.dimension = d.name;
    badge.textContent = (d.values.find((v) => v.value === labels[d.name]) || { name: String(labels[d.name]) }).name;
    return badge;
  }) : [Object.assign(document.createElement("span"), { className: "badge unjudged", textContent: "unjudged" })]));
  const complete = data.scheme.dimensions.every((d) => !d.required || !holds(d.condition, labels) || d.name in labels);
  cell.classList.toggle("judged", Object.keys(labels).length > 0 && complete);
  judgedCount.textContent = String(judgedElsewhere + cells.filter((c) => c.classList.contains("judged")).length);
}

function select(index) {
  if (!cells.length) return;
  selected = Math.max(0, Math.min(cells.length - 1, index));
  cells.forEach((c, i) => c.classList.toggle("selected", i === selected));
  cells[selected].focus({ preventScroll: false });
}

function columns() {
  const top = cells[0].offsetTop;
  const perRow = cells.findIndex((c) => c.offsetTop !== top);
  return perRow === -1 ? cells.length : perRow;
}

async function answer(key) {
  const index = selected;
  const item = data.cells[index];
  const changes = changesFor(key, item.labels || {});
  cells[index].classList.add("saving");
  try {
    const response = await fetch(item.save, {
      method: "PATCH",
      headers: { "Content-Type": "application/json", "X-CSRFToken": data.csrf },
      body: JSON.stringify({ labels: changes, base_revision: item.revision }),
    });
    const body = await response.json();
    if (response.status === 409 && body.code === "stale_revision") {
      item.labels = body.judgment ? body.judgment.labels : {};
      item.revision = body.judgment ? body.judgment.revision : 0;
      state.textContent = `Image ${index + 1} was changed elsewhere meanwhile: its labels there are shown; press the key again to change them.`;
    } else if (!response.ok) {
      state.textContent = `Not saved: ${body.detail || response.status}`;
    } else {
      item.labels = body.labels;
      item.revision = body.revision;
      state.textContent = "Saved";
    }
  } catch (error) {
    state.textContent = "Not saved: the server could not be reached. Press the key again.";
  } finally {
    cells[index].classList.remove("saving");
    draw(index);
  }
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const move = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: columns(), ArrowUp: -columns() }[event.key];
  if (move !== undefined) { event.preventDefault(); select(selected + move); return; }
  if (event.key === "Enter") { event.preventDefault(); window.location.href = data.cells[selected].open; return; }
  if (event.key === "PageDown" && data.next) { event.preventDefault(); window.location.href = data.next; return; }
  if (event.key === "PageUp" && data.previous) { event.preventDefault(); window.location.href = data.previous; return; }
  const key = byKey.get(event.key.toLowerCase());
  if (key) { event.preventDefault(); answer(key); }
});
cells.forEach((cell, i) => cell.addEventListener("click", (event) => {
  if (event.target.closest("a") && i !== selected) { event.preventDefault(); select(i); }
}));
select(0);
