/* Logging out on a shared computer leaves no labels or notes behind in the browser.
 *
 * Labels still on their way to the server (saves.js) are sent first; if some cannot be (no connection, a
 * refusal, a conflict waiting for a choice), the assessor is told and decides whether to stay. Then this
 * user's waiting labels are removed from the browser, and the logout goes ahead.
 */

import * as saves from "./saves.js";

const form = document.getElementById("logout-form");
const dialog = document.getElementById("dlg-logout");
const WAIT_MS = 8000;

if (form && dialog) {
  saves.start({ user: form.dataset.user });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const button = form.querySelector("button");
    button.disabled = true;
    button.textContent = "Saving labels…";
    document.dispatchEvent(new Event("touchstone:logout")); // the judge page hands over the note being typed
    const unsaved = await saves.sendAll(WAIT_MS);
    button.disabled = false;
    button.textContent = "Log out";
    if (!unsaved) return logOut();
    const items = saves.all();
    const why = items.some((i) => i.conflict) ? "changed elsewhere meanwhile, waiting for you to choose a version"
      : items.some((i) => i.error) ? "refused by the server" : saves.status.problem || "no answer from the server";
    document.getElementById("logout-unsaved").textContent = `Labels of ${unsaved} document${unsaved === 1 ? "" : "s"} are not saved: ${why}.`;
    dialog.showModal();
  });
  dialog.querySelector('[data-logout="stay"]').addEventListener("click", () => dialog.close());
  dialog.querySelector('[data-logout="anyway"]').addEventListener("click", () => { dialog.close(); logOut(); });
}

function logOut() {
  saves.forgetAll();
  form.submit();
}
