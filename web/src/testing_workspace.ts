// The Testing workspace: `witness test` as a job, with live counts and a chart of the
// discriminatory tests over time, then the result as in the HTML report.

import { changeset } from "vega";
import type { Result } from "vega-embed";
import { api, jobLink, type Job, type TestProgress } from "./api";
import { h, clear, labelled, showError } from "./dom";
import { JobRunner, RunForm } from "./run_form";
import { chartBox, drawChart } from "./charts";
import { renderRun } from "./report";
import { count, percent, seconds } from "./format";
import type { ReportEnvelope, TestResult } from "./types";

const METHODS = ["symbgen", "themis", "aequitas", "adf", "random-pairs"];

interface Point {
  seconds: number;
  series: "generated" | "discriminatory";
  tests: number;
}

function points(history: [number, number, number][]): Point[] {
  return history.flatMap(([s, g, d]): Point[] => [
    { seconds: s, series: "generated", tests: g },
    { seconds: s, series: "discriminatory", tests: d },
  ]);
}

// [seconds, generated, discriminatory] per progress report (docs/serve.md).
function historyOf(job: Job): [number, number, number][] {
  return job.history ?? [];
}

export class TestingWorkspace {
  readonly element: HTMLElement;
  private readonly errors = h("div", { class: "errors", id: "test-error" });
  private readonly form: RunForm;
  private readonly method = h("select", { id: "test-method" }, ...METHODS.map((m) => h("option", { value: m }, m)));
  private readonly budget = h("input", { id: "test-budget", type: "number", min: "0", step: "1", value: "20000" });
  private readonly timeLimit = h("input", { id: "test-time-limit", type: "number", min: "0", step: "any", value: "10" });
  private readonly seed = h("input", { id: "test-seed", type: "number", step: "1", value: "1" });
  private readonly start = h("button", { type: "button", id: "test-start", class: "primary" }, "Run");
  private readonly cancel = h("button", { type: "button", id: "test-cancel", class: "secondary", disabled: true }, "Cancel");
  private readonly counts = h("div", { id: "test-counts", class: "counts", "aria-live": "polite" });
  private readonly chartHolder = h("div", { id: "test-chart" });
  private readonly links = h("div", { id: "test-links", class: "links" });
  private readonly result = h("div", { id: "test-result" });
  private chart: Result | null = null;
  private readonly runner = new JobRunner(this.start, this.cancel, this.errors);

  constructor() {
    this.form = new RunForm("test", (m) => showError(this.errors, m), "seeds");
    this.start.addEventListener("click", () => void this.run());
    this.element = h(
      "div",
      { class: "workspace-body" },
      this.errors,
      this.form.fieldset(
        [
          labelled("Method", this.method),
          labelled("Budget (unique tests, 0 = until the time limit)", this.budget),
          labelled("Time limit (s)", this.timeLimit),
          labelled("Seed", this.seed),
        ],
        [this.start, this.cancel],
      ),
      h("section", {}, h("h2", {}, "Progress"), this.counts, this.chartHolder, this.links),
      this.result,
    );
  }

  private async run(): Promise<void> {
    const chosen = this.form.chosen(this.errors);
    if (!chosen) return;
    const options: Record<string, string> = { method: this.method.value };
    for (const [key, field] of [["budget", this.budget], ["time-limit", this.timeLimit], ["seed", this.seed]] as const)
      if (field.value.trim() !== "") options[key] = field.value.trim();
    clear(this.counts);
    clear(this.links);
    clear(this.result);
    await this.runner.run(
      async () => {
        await this.newChart();
        return api.start({ kind: "test", ...chosen, protected: this.form.protected, options });
      },
      (j) => this.update(j),
      (job) => this.finish(job),
    );
  }

  // One chart per run, updated in place through a changeset rather than embedded at every poll.
  private async newChart(): Promise<void> {
    this.chart?.finalize();
    this.chart = null;
    clear(this.chartHolder);
    const box = chartBox("test-history", "generated and discriminatory tests over time");
    this.chartHolder.appendChild(box);
    this.chart = await drawChart(box, {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      description: "Unique tests generated and discriminatory tests found, over time",
      width: 520,
      height: 200,
      data: { name: "history" },
      mark: { type: "line", point: true },
      encoding: {
        x: { field: "seconds", type: "quantitative", title: "seconds", scale: { zero: true } },
        y: { field: "tests", type: "quantitative", title: "tests" },
        color: { field: "series", type: "nominal", scale: { domain: ["generated", "discriminatory"], range: ["#607d8b", "#c62828"] }, title: null },
      },
    });
  }

  private setHistory(history: [number, number, number][]): void {
    if (!this.chart) return;
    const view = this.chart.view;
    void view.change("history", changeset().remove(() => true).insert(points(history))).runAsync();
  }

  private update(job: Job): void {
    const p = job.progress as TestProgress | null | undefined;
    if (!p) {
      this.counts.textContent = `${job.state}, ${seconds(job.seconds)}`;
      return;
    }
    this.showCounts(p.generated, p.discriminatory, p.seconds ?? job.seconds ?? 0, job.state);
    const history = historyOf(job);
    if (history.length > 0) this.setHistory(history);
  }

  private showCounts(generated: number, discriminatory: number, s: number, state: string): void {
    this.counts.dataset.generated = String(generated);
    this.counts.dataset.discriminatory = String(discriminatory);
    this.counts.textContent = `generated ${count(generated)} · discriminatory ${count(discriminatory)} (${percent(generated ? discriminatory / generated : 0, 3)}) · ${seconds(s)} · ${state}`;
  }

  private async finish(job: Job): Promise<void> {
    if (job.state === "failed") {
      showError(this.errors, job.error ?? "the run failed");
      return;
    }
    const result = job.result as TestResult | null;
    if (job.state === "cancelled" || !result) {
      this.update(job);
      return;
    }
    this.showCounts(result.generated, result.discriminatory, result.seconds ?? job.seconds ?? 0, job.state);
    // A run shorter than one progress report has no history: draw its start and its end.
    const history = historyOf(job);
    this.setHistory(history.length > 0 ? history : [[0, 0, 0], [result.seconds ?? job.seconds ?? 0, result.generated, result.discriminatory]]);
    this.links.append(
      h("a", { id: "test-pairs-link", href: jobLink(job.id, "pairs.csv"), download: `${job.id}-pairs.csv` }, "discriminatory pairs (CSV)"),
      h("a", { id: "test-report-link", href: jobLink(job.id, "report.html"), target: "_blank", rel: "noopener" }, "HTML report"),
    );
    const run: ReportEnvelope = job.report ?? { kind: "test", result, text: job.text ?? null };
    try {
      await renderRun(this.result, run, { footer: false });
    } catch {
      // shown in the chart's .chart-error element
    }
  }
}
