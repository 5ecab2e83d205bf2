// Keyboard moves between cases: a link with data-key="j" is followed when j is pressed, unless the key is typed
// into a field (the reason). Used by the adjudication page (j next open case, k previous).
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || event.target.closest("input, textarea, select, [contenteditable]")) return;
  const link = document.querySelector(`a[data-key="${CSS.escape(event.key)}"]`);
  if (link) {
    event.preventDefault();
    window.location.assign(link.href);
  }
});
