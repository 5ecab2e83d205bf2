/* Small helpers of the judge page: element lookup, the assessor's view preferences, the toast. */

export const $ = (selector, root = document) => root.querySelector(selector);
export const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));
export const plural = (n, word) => n + " " + word + (n === 1 ? "" : "s");
export const capitalise = (s) => s.charAt(0).toUpperCase() + s.slice(1);
/** ["quality", "stance"] → "quality and stance"; three or more: "a, b and c". */
export const listed = (words) => (words.length < 2 ? words.join("") : words.slice(0, -1).join(", ") + " and " + words[words.length - 1]);

const PREFS_KEY = "touchstone.prefs";
export const prefs = Object.assign({ highlight: true, plain: false, unjudgedOnly: false }, readPrefs());

function readPrefs() {
  try { return JSON.parse(window.localStorage.getItem(PREFS_KEY)) || {}; } catch (e) { return {}; }
}
export function savePrefs() {
  try { window.localStorage.setItem(PREFS_KEY, JSON.stringify(prefs)); } catch (e) { /* a preference, not a label */ }
}

let toastTimer = null;
let toastRun = null;
/** Say something briefly; with `action` ({label, key, run}) the toast offers it as a button and a key, and
 * stays longer so there is time to use it. */
export function toast(message, action = null) {
  const box = $("#toast");
  const button = $("#toast-action");
  $("#toast-text").textContent = message;
  toastRun = action && action.run;
  button.hidden = !action;
  if (action) {
    button.replaceChildren(action.label + " ");
    const cap = document.createElement("kbd");
    cap.className = "key";
    cap.textContent = action.key;
    button.append(cap);
  }
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(hideToast, action ? 8000 : 3500);
}
/** Take the toast away if it still offers `run` (the action it offered is no longer possible). */
export function withdrawToast(run) {
  if (toastRun === run) hideToast();
}
export function hideToast() {
  $("#toast").hidden = true;
  toastRun = null;
}
$("#toast-action").addEventListener("click", () => { if (toastRun) toastRun(); });
