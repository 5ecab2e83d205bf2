// Refuse an upload above the server's limit before sending it (forms with data-max-bytes), with the message the
// server would give (assessments/upload_limit.py), so nobody waits for gigabytes to be sent only to be refused.
(() => {
  const size = (bytes) => {
    const units = ["bytes", "KB", "MB", "GB", "TB"];
    let value = bytes, unit = 0;
    while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
    return unit ? `${value.toFixed(1)} ${units[unit]}` : `${bytes} bytes`;
  };
  // Capture phase on the document: runs before htmx's own submit handler on the form.
  document.addEventListener("submit", (event) => {
    const form = event.target;
    const limit = Number(form.dataset && form.dataset.maxBytes);
    if (!limit) return;
    const total = [...form.querySelectorAll("input[type=file]")]
      .flatMap((input) => [...input.files]).reduce((sum, file) => sum + file.size, 0);
    let note = form.querySelector(".upload-refused");
    if (total <= limit) { if (note) note.remove(); return; }
    event.preventDefault();
    event.stopImmediatePropagation();
    if (!note) {
      note = document.createElement("p");
      note.className = "error upload-refused";
      note.setAttribute("role", "alert");
      form.prepend(note);
    }
    note.textContent = `This upload is ${size(total)}; uploads may be at most ${size(limit)}. Import a larger file ` +
      "from the command line (manage.py import_runs, import_documents, import_topics or import_qrels), which reads it where it is.";
  }, true);
})();
