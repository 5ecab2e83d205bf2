/* How the document is shown: topic terms highlighted, or plain text.
 *
 * Document text is untrusted: nothing here assigns innerHTML. Highlighting splits text nodes, and the
 * plain-text view is set with textContent.
 */

import { $, $$, prefs, savePrefs } from "./util.js";

let patterns = [];
let matcher = null;

/** The topic's objects (each its own colour), then its other title terms. Terms match at a word start and may
 * go on ("dog" marks "dogs"); multi-word objects allow any spacing. */
export function configure(terms) {
  patterns = [];
  terms.objects.forEach((o, i) => patterns.push({ source: o, cls: "hl hl-o" + (Math.min(i, 3) + 1) }));
  terms.terms.forEach((t) => patterns.push({ source: t, cls: "hl hl-t" }));
  const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  matcher = patterns.length ? new RegExp(
    "(?<![\\p{L}\\p{N}])(?:" + patterns.map((p) => "(" + escape(p.source).replace(/\s+/g, "\\s+") + "[\\p{L}\\p{N}]*)").join("|") + ")",
    "giu") : null;
}

const rich = () => $("#doc-rich");
const plain = () => $("#doc-plain");

/** A document was put on screen: show it the way the assessor last chose. */
export function reset(hasText) {
  $$('[data-action="highlight"], [data-action="plain"]').forEach((b) => { b.disabled = !hasText; });
  $$('[data-action="highlight"]').forEach((b) => b.setAttribute("aria-pressed", String(hasText && prefs.highlight)));
  if (!hasText) return $$('[data-action="plain"]').forEach((b) => b.setAttribute("aria-pressed", "false"));
  if (prefs.plain) setPlain(true); else { markPlain(false); apply(); }
}

export function setPlain(on) {
  const richDoc = rich();
  const plainDoc = plain();
  if (!richDoc) return;
  if (on && !plainDoc.dataset.ready) {
    unhighlight(richDoc);
    plainDoc.textContent = richDoc.innerText; // layout-aware text of the sanitised document, never parsed as HTML
    plainDoc.dataset.ready = "1";
  }
  richDoc.hidden = on;
  plainDoc.hidden = !on;
  prefs.plain = on;
  savePrefs();
  markPlain(on);
  apply();
}

function markPlain(on) {
  $$('[data-action="plain"]').forEach((b) => b.setAttribute("aria-pressed", String(on)));
}

export function setHighlight(on) {
  prefs.highlight = on;
  savePrefs();
  $$('[data-action="highlight"]').forEach((b) => b.setAttribute("aria-pressed", String(on)));
  apply();
}

function unhighlight(root) {
  $$("mark.hl", root).forEach((mark) => mark.replaceWith(document.createTextNode(mark.textContent)));
  root.normalize();
}

function apply() {
  const root = plain() && !plain().hidden ? plain() : rich();
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

// A classification item's proposal: as written or in the lab's English translation (the topic pane stays while
// the item beside it changes, so the choice holds for the proposal's next comments too).
export function toggleTranslation() {
  const original = $("#proposal-original");
  const english = $("#proposal-english");
  if (!original || !english) return;
  const showEnglish = english.hidden;
  english.hidden = !showEnglish;
  original.hidden = showEnglish;
  $$('[data-action="translation"]').forEach((b) => b.setAttribute("aria-pressed", String(showEnglish)));
}

// An image campaign's document: the image fitted to the pane or at its full size, and the drawer of the web pages
// it came from. Both are reset with each image (the part is swapped in anew).
export function toggleZoom() {
  const figure = $("#image-doc");
  if (!figure) return;
  const full = figure.classList.toggle("full-size");
  $$('[data-action="zoom"]').forEach((b) => b.setAttribute("aria-pressed", String(full)));
}

export function toggleSources() {
  const drawer = $("#image-sources");
  if (!drawer) return;
  drawer.hidden = !drawer.hidden;
  $$('[data-action="sources"]').forEach((b) => b.setAttribute("aria-pressed", String(!drawer.hidden)));
}
