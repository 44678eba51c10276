// Entry of report.js, inlined into the self-contained HTML report written by `witness ... --html`.
// Reads the run envelope from <script type="application/json" id="witness-run"> and renders it.

import { renderRun } from "./report";
import { h } from "./dom";
import type { ReportEnvelope } from "./types";

function fail(root: HTMLElement, message: string): void {
  root.appendChild(h("div", { class: "chart-error error", role: "alert" }, message));
  document.body.dataset.rendered = "error";
}

async function main(): Promise<void> {
  const root = document.getElementById("report") ?? document.body.appendChild(h("div", { id: "report" }));
  const source = document.getElementById("witness-run");
  let run: ReportEnvelope;
  try {
    run = JSON.parse(source?.textContent ?? "") as ReportEnvelope;
    if (!run || typeof run !== "object" || !run.result) throw new Error("no result in the run");
  } catch (e) {
    fail(root, `report: cannot read the run (${e instanceof Error ? e.message : String(e)})`);
    return;
  }
  const title = h("h1", {}, run.kind === "test" ? "witness test" : run.kind === "bias" ? "witness bias" : "witness fair");
  root.appendChild(h("header", { class: "report-header" }, title));
  try {
    await renderRun(root, run);
    document.body.dataset.rendered = "yes";
  } catch (e) {
    // A chart's failure is already shown in its .chart-error element; anything else is shown here.
    if (!root.querySelector(".chart-error")) fail(root, `report: ${e instanceof Error ? e.message : String(e)}`);
    document.body.dataset.rendered = "error";
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => void main());
else void main();
