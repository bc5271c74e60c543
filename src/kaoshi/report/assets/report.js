"use strict";
// The per-question browser. Model output is only ever placed with textContent, never parsed as HTML.
(function () {
  const data = JSON.parse(document.getElementById("kaoshi-data").textContent);
  const PAGE = 50;
  const $ = (id) => document.getElementById(id);
  const controls = { run: $("f-run"), result: $("f-result"), search: $("f-search") };
  // One filter per grouping the report's questions carry (domain, category, subject, type, ...).
  const groupings = data.groupings;
  const groupFilters = groupings.map((key) => [key, $(`f-${key}`)]);
  // A question without a value for a grouping is listed under data.none, as the summary tables list it.
  const groupOf = (sample, key) => sample.groups[key] ?? data.none;
  let page = 0;

  function node(tag, text, className) {
    const element = document.createElement(tag);
    if (text !== undefined && text !== null) element.textContent = String(text);
    if (className) element.className = className;
    return element;
  }

  function option(select, value, label) {
    const element = node("option", label);
    element.value = value;
    select.appendChild(element);
  }

  function refillChoices() {
    const run = currentRun();
    for (const [key, select] of groupFilters) {
      const previous = select.value;
      select.replaceChildren();
      option(select, "", "all");
      const values = run.choices[key].map(([value, count]) => {
        option(select, value, `${value} (${count})`);
        return value;
      });
      select.value = values.includes(previous) ? previous : "";
    }
  }

  function currentRun() {
    return data.runs[Number(controls.run.value) || 0];
  }

  function matches(sample) {
    const query = controls.search.value.trim().toLowerCase();
    for (const [key, select] of groupFilters) {
      if (select.value && groupOf(sample, key) !== select.value) return false;
    }
    const result = controls.result.value;
    if (result === "wrong" && !(sample.outcome === "wrong" || sample.outcome === "unparsed")) return false;
    if (result && result !== "wrong" && sample.outcome !== result) return false;
    if (query) {
      const haystack = [sample.id, sample.prompt, sample.response, sample.answer, sample.gold]
        .map((v) => String(v || "").toLowerCase()).join("\n");
      if (!haystack.includes(query)) return false;
    }
    return true;
  }

  // Text shown folded under a summary that says how long it is (a reasoning model's reasoning).
  function folded(label, text) {
    const details = node("details");
    details.appendChild(node("summary", `${label} (${Array.from(text).length} characters)`));
    details.appendChild(node("pre", text));
    return details;
  }

  function detailRow(sample, columns) {
    const row = node("tr", null, "detail");
    const cell = node("td");
    cell.colSpan = columns;
    const parts = [
      ["prompt", sample.prompt], ["raw output", sample.response], ["reasoning", sample.reasoning, true],
      ["extracted answer", sample.answer], ["gold answer", sample.gold], ["error", sample.error],
    ];
    if (sample.judge) {
      const judge = sample.judge;
      const final = judge.score === null ? `${judge.status}` : `${judge.score}/10`;
      parts.push([`grade by ${judge.grader}`, `${final}, ${sample.score ?? "—"} of ${sample.points} point(s)`]);
      judge.rounds.forEach((round, i) => {
        const score = round.score === null ? "unparsed" : `${round.score}/10`;
        parts.push([`judge round ${i + 1}: ${round.judge} (${score})`, round.reply]);
      });
    }
    for (const [label, value, fold] of parts) {
      if (value === null || value === undefined || value === "") continue;
      if (fold) {
        cell.appendChild(folded(label, String(value)));
        continue;
      }
      cell.appendChild(node("strong", label));
      cell.appendChild(node("pre", String(value)));
    }
    row.appendChild(cell);
    return row;
  }

  function render() {
    const body = $("question-rows");
    const selected = currentRun().samples.filter(matches);
    const pages = Math.max(1, Math.ceil(selected.length / PAGE));
    page = Math.min(page, pages - 1);
    $("count").textContent = `${selected.length} question(s)`;
    $("page").textContent = `page ${page + 1} of ${pages}`;
    $("prev").disabled = page === 0;
    $("next").disabled = page >= pages - 1;
    const rows = [];
    for (const sample of selected.slice(page * PAGE, (page + 1) * PAGE)) {
      const row = node("tr", null, "item");
      row.dataset.id = sample.id;
      const groups = groupings.map((key) => sample.groups[key] ?? "");
      const cells = [sample.id, ...groups, sample.gold, sample.answer, sample.outcome];
      const status = `status-${sample.outcome === "correct" ? "ok" : sample.outcome}`;
      cells.forEach((value, i) => row.appendChild(node("td", value, i === cells.length - 1 ? status : "")));
      row.addEventListener("click", () => {
        const next = row.nextElementSibling;
        if (next && next.classList.contains("detail")) next.remove();
        else row.after(detailRow(sample, cells.length));
      });
      rows.push(row);
    }
    body.replaceChildren(...rows);
  }

  data.runs.forEach((run, i) => option(controls.run, String(i), run.name));
  controls.run.addEventListener("change", () => { page = 0; refillChoices(); render(); });
  for (const select of [...groupFilters.map(([, filter]) => filter), controls.result]) {
    select.addEventListener("change", () => { page = 0; render(); });
  }
  controls.search.addEventListener("input", () => { page = 0; render(); });
  $("prev").addEventListener("click", () => { page -= 1; render(); });
  $("next").addEventListener("click", () => { page += 1; render(); });
  refillChoices();
  render();
})();
