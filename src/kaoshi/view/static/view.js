// kaoshi view: the runs page's live numbers and the samples page's filters. Everything from the store is
// placed with textContent (never as markup); run names are compared as strings, never put in a selector.
"use strict";

(function () {
  const POLL_MS = 1500;
  // The runs table's cells the poll refreshes (data-field = a key of /api/runs' rows).
  const TEXT_FIELDS = [
    "benchmark", "model", "method", "settings", "done", "errors", "status", "holder", "accuracy_text",
    "points", "created",
  ];

  function cell(row, field) {
    const td = document.createElement("td");
    if (field) td.dataset.field = field;
    row.appendChild(td);
    return td;
  }

  function span(parent, field, className) {
    const element = document.createElement("span");
    element.dataset.field = field;
    if (className) element.className = className;
    parent.appendChild(element);
    return element;
  }

  // A row for a run that started after the page loaded, in the server's layout (runs.html).
  function newRow(run) {
    const row = document.createElement("tr");
    row.dataset.run = run.run;
    const tick = document.createElement("input");
    tick.type = "checkbox";
    tick.name = "run";
    tick.value = run.run;
    cell(row).appendChild(tick);
    const link = document.createElement("a");
    link.dataset.field = "run";
    link.href = run.href; // the server's /run/<percent-encoded name>
    link.textContent = run.run;
    cell(row).appendChild(link);
    for (const field of ["benchmark", "model", "method"]) cell(row, field);
    cell(row, "settings").className = "settings";
    const progress = cell(row);
    const bar = document.createElement("progress");
    bar.dataset.field = "progress";
    progress.appendChild(bar);
    progress.append(" ");
    span(progress, "done");
    cell(row, "errors").className = "num";
    const status = cell(row);
    span(status, "status");
    status.append(" ");
    span(status, "holder", "note");
    cell(row, "accuracy_text").className = "num";
    cell(row, "points").className = "num";
    cell(row, "created");
    return row;
  }

  function fill(row, run) {
    for (const field of TEXT_FIELDS) {
      const element = row.querySelector(`[data-field="${field}"]`);
      const text = String(run[field] ?? "");
      if (element && element.textContent !== text) element.textContent = text;
    }
    const status = row.querySelector('[data-field="status"]');
    if (status) status.className = `status-${run.status}`;
    const bar = row.querySelector('[data-field="progress"]');
    if (bar) {
      bar.max = Math.max(run.questions, 1);
      bar.value = run.progress;
    }
    row.classList.remove("removed");
  }

  function update(body, runs) {
    const rows = new Map();
    for (const row of body.querySelectorAll("tr[data-run]")) rows.set(row.dataset.run, row);
    const seen = new Set();
    for (const run of runs) {
      seen.add(run.run);
      let row = rows.get(run.run);
      if (!row) {
        row = newRow(run);
        body.appendChild(row);
      }
      fill(row, run);
    }
    for (const [name, row] of rows) {
      if (!seen.has(name)) row.classList.add("removed"); // removed or renamed since the page loaded
    }
    const empty = document.getElementById("no-runs");
    if (empty && runs.length) empty.remove();
  }

  function liveRuns() {
    const body = document.getElementById("run-rows");
    const live = document.getElementById("live");
    async function poll() {
      try {
        const response = await fetch("/api/runs", { cache: "no-store", headers: { accept: "application/json" } });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        const data = await response.json();
        update(body, data.runs);
        live.textContent = `live · updated ${new Date().toLocaleTimeString()}`;
        live.className = "";
      } catch (error) {
        live.textContent = `live updates paused (${error.message}); retrying`;
        live.className = "warning";
      }
      window.setTimeout(poll, POLL_MS);
    }
    window.setTimeout(poll, POLL_MS);
  }

  // A changed choice shows its first page at once (the form has no page field); choices left at "all"
  // stay out of the address.
  function submitOnChange() {
    const form = document.getElementById("filters");
    if (!form) return;
    for (const select of form.querySelectorAll("select")) {
      select.addEventListener("change", () => form.requestSubmit());
    }
    form.addEventListener("formdata", (event) => {
      for (const [name, value] of [...event.formData.entries()]) {
        if (value === "") event.formData.delete(name);
      }
    });
  }

  // The run's figure is drawn when the image is asked for; its caption then says what was noted while
  // drawing it (labels drawn in ASCII for a font without Chinese, and what they stand for).
  function plotCaption() {
    const figure = document.getElementById("plot");
    if (!figure) return;
    const image = figure.querySelector("img");
    async function caption() {
      try {
        const response = await fetch(figure.dataset.caption, { headers: { accept: "application/json" } });
        if (!response.ok) return;
        const data = await response.json();
        figure.querySelector("figcaption").textContent = data.caption;
        image.alt = data.caption;
      } catch (error) {
        // the caption the page came with stays
      }
    }
    if (image.complete) caption();
    else image.addEventListener("load", caption, { once: true });
  }

  const page = document.body.dataset.page;
  if (page === "runs") liveRuns();
  if (page === "samples") submitOnChange();
  if (page === "run") plotCaption();
})();
