// The Fairness workspace: `witness fair` as a job, its shares live, then the verdict and result.

import { api, pollJob, jobLink, type FairProgress, type Job } from "./api";
import { h, clear, labelled, showError } from "./dom";
import { JobRunner, RunForm } from "./run_form";
import { renderRun, verdictSentence } from "./report";
import { percent, seconds, count } from "./format";
import type { FairResult, ReportEnvelope } from "./types";

const ENGINES = ["auto", "complete", "smt", "dual", "concolic"];

export class FairnessWorkspace {
  readonly element: HTMLElement;
  private readonly errors = h("div", { class: "errors", id: "fair-error" });
  private readonly form: RunForm;
  private readonly engine = h("select", { id: "fair-engine" }, ...ENGINES.map((e) => h("option", { value: e }, e)));
  private readonly quantify = h("input", { id: "fair-quantify", type: "checkbox", checked: true });
  private readonly timeLimit = h("input", { id: "fair-time-limit", type: "number", min: "0", step: "any", value: "30" });
  private readonly start = h("button", { type: "button", id: "fair-start", class: "primary" }, "Run");
  private readonly cancel = h("button", { type: "button", id: "cancel", class: "secondary", disabled: true }, "Cancel");
  private readonly state = h("span", { id: "fair-state", class: "state" });
  private readonly bar = {
    certified: h("div", { class: "seg certified" }),
    falsified: h("div", { class: "seg falsified" }),
    undecided: h("div", { class: "seg undecided" }),
  };
  private readonly progressText = h("div", { class: "note", id: "fair-progress-text" });
  private readonly verdict = h("div", { id: "fair-verdict", class: "verdict", "aria-live": "polite" });
  private readonly links = h("div", { id: "fair-links", class: "links" });
  private readonly result = h("div", { id: "fair-result" });
  private readonly biasStart = h("button", { type: "button", id: "bias-start", class: "secondary" }, "Estimate Bias%");
  private readonly biasResult = h("div", { id: "bias-result" });
  private readonly runner = new JobRunner(this.start, this.cancel, this.errors);

  constructor() {
    this.form = new RunForm("fair", (m) => showError(this.errors, m));
    this.start.addEventListener("click", () => void this.run());
    this.biasStart.addEventListener("click", () => void this.bias());
    this.element = h(
      "div",
      { class: "workspace-body" },
      this.errors,
      this.form.fieldset(
        [
          labelled("Engine", this.engine),
          h("label", { class: "check" }, this.quantify, " quantify (shares of the domain)"),
          labelled("Time limit (s, 0 = none)", this.timeLimit),
        ],
        [this.start, this.cancel, this.state, this.biasStart],
      ),
      h(
        "section",
        { class: "progress-pane" },
        h("h2", {}, "Progress"),
        h("div", { id: "fair-progress", class: "share-bar", role: "img", "aria-label": "certified, falsified and undecided shares" }, this.bar.certified, this.bar.falsified, this.bar.undecided),
        this.progressText,
      ),
      h("section", {}, h("h2", {}, "Verdict"), this.verdict, this.links),
      this.result,
      this.biasResult,
    );
  }

  // The sampled Bias% (`witness bias`) of the same model and attributes: quick, beside the verdict.
  private async bias(): Promise<void> {
    const chosen = this.form.chosen(this.errors);
    if (!chosen) return;
    clear(this.biasResult);
    this.biasStart.disabled = true;
    try {
      const { favorable, ...audit } = this.form.audit();
      const { id } = await api.start({ kind: "bias", ...chosen, ...audit, seeds: undefined, protected: this.form.protected, options: favorable ? { favorable } : {} });
      const job = await pollJob(id, () => {});
      if (job.state !== "done" || !job.result) {
        showError(this.errors, job.error ?? `Bias%: the job ${job.state}`);
        return;
      }
      const run: ReportEnvelope = job.report ?? { kind: "bias", result: job.result as ReportEnvelope["result"], text: job.text ?? null };
      this.biasResult.appendChild(h("h2", {}, "Bias%"));
      await renderRun(this.biasResult, run, { footer: false, text: false });
    } catch (e) {
      showError(this.errors, e instanceof Error ? e.message : String(e));
    } finally {
      this.biasStart.disabled = false;
    }
  }

  private async run(): Promise<void> {
    const chosen = this.form.chosen(this.errors);
    if (!chosen) return;
    const options: Record<string, string> = {};
    const { favorable, ...audit } = this.form.audit();
    if (favorable) options.favorable = favorable;
    if (this.quantify.checked) options.quantify = "true";
    const limit = this.timeLimit.value.trim();
    if (limit !== "") options["time-limit"] = limit;
    clear(this.verdict);
    clear(this.links);
    clear(this.result);
    this.showProgress(null, 0);
    await this.runner.run(
      () => api.start({ kind: "fair", ...chosen, ...audit, protected: this.form.protected, engine: this.engine.value, options }),
      (j) => this.update(j),
      (job) => this.finish(job),
    );
  }

  private update(job: Job): void {
    this.state.textContent = `${job.id}: ${job.state}, ${seconds(job.seconds)}`;
    this.state.dataset.state = job.state;
    this.showProgress((job.progress as FairProgress | null) ?? null, job.seconds ?? 0);
  }

  private showProgress(p: FairProgress | null, elapsed: number): void {
    const parts: (keyof typeof this.bar)[] = ["certified", "falsified", "undecided"];
    for (const k of parts) {
      const share = p ? p[k] : k === "undecided" ? 1 : 0;
      this.bar[k].style.width = `${Math.max(0, Math.min(1, share)) * 100}%`;
      this.bar[k].title = `${k} ${percent(share)}`;
    }
    this.progressText.textContent = p
      ? `certified ${percent(p.certified)} · falsified ${percent(p.falsified)} · undecided ${percent(p.undecided)} · ${count(p.leaves)} leaves · ${seconds(p.seconds ?? elapsed)}`
      : "";
  }

  private async finish(job: Job): Promise<void> {
    this.update(job);
    if (job.state === "failed") {
      this.verdict.textContent = "failed";
      showError(this.errors, job.error ?? "the run failed");
      return;
    }
    if (job.state === "cancelled") {
      this.verdict.textContent = "cancelled: the run was stopped before a verdict";
      this.verdict.className = "verdict verdict-cancelled";
      return;
    }
    const result = job.result as FairResult | null;
    if (!result) {
      showError(this.errors, "the server returned no result");
      return;
    }
    if (typeof result.certified === "number") {
      this.showProgress({ certified: result.certified, falsified: result.falsified ?? 0, undecided: result.undecided ?? 0, leaves: result.stats?.leaves, seconds: result.stats?.seconds }, job.seconds ?? 0);
      const e = result.estimate;
      if (e) this.progressText.textContent += ` · estimated falsified ${percent(e.falsified)} (${percent(e.lo)} to ${percent(e.hi)} at ${percent(e.confidence)})`;
    }
    const run: ReportEnvelope = job.report ?? { kind: "fair", result, text: job.text ?? null };
    // The verdict element starts with the verdict word, whatever the text's first line says.
    const sentence = verdictSentence(run);
    this.verdict.textContent = sentence.startsWith(result.verdict) ? sentence : `${result.verdict}: ${sentence}`;
    this.verdict.className = `verdict verdict-${result.verdict}`;
    this.links.append(
      h("a", { id: "fair-pairs-link", href: jobLink(job.id, "pairs.csv"), download: `${job.id}-pairs.csv` }, "witness pairs (CSV)"),
      h("a", { id: "fair-report-link", href: jobLink(job.id, "report.html"), target: "_blank", rel: "noopener" }, "HTML report"),
    );
    try {
      await renderRun(this.result, run, { verdict: false, footer: false });
    } catch {
      // The chart's own .chart-error element says what went wrong.
    }
  }
}
