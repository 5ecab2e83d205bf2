// htmx shows only 2xx answers. A 503 to a form that starts a job (the job queue is down) carries the message to
// show where the job would have appeared (assessments.middleware), so it is shown too. A file, not an inline
// script: pages with a strict Content-Security-Policy (the judge page) run no inline script.
document.addEventListener("htmx:beforeSwap", (event) => {
  const xhr = event.detail.xhr;
  if (xhr.status === 503 && xhr.getResponseHeader("Retry-After") && event.detail.requestConfig.verb !== "get") {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});
