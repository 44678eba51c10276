// Renders one fair/test/bias run: used by the self-contained HTML report (report_main.ts) and by
// the app's Fairness and Testing workspaces, so each result is formatted in one place only.

import { h, append, type Child } from "./dom";
import { chartBox, drawChart, type Spec } from "./charts";
import { percent, seconds, count, scalar } from "./format";
import type {
  ReportEnvelope,
  RunKind,
  FairResult,
  TestResult,
  BiasResult,
  ExamplePair,
  ReportSchema,
  SchemaFeature,
  GroupMetrics,
  GroupRate,
  GroupTable,
  DataRows,
  Provenance,
} from "./types";

export interface RenderOptions {
  verdict?: boolean; // the verdict sentence at the top (the app shows its own)
  text?: boolean; // the CLI's full text output
  footer?: boolean; // command, version, created
  provenance?: boolean; // the provenance and the signature block (the report to hand on)
  maxRegions?: number;
  maxFlips?: number;
}

export function runKind(run: ReportEnvelope): RunKind {
  if (run.kind) return run.kind;
  // A plain CLI --json document (`witness report RUN.json`): recognise it by its fields.
  const r = run.result as unknown as Record<string, unknown>;
  if ("verdict" in r) return "fair";
  if ("bias_percent" in r) return "bias";
  return "test";
}

// The first word of the verdict: verified / witness / inconclusive for fair runs.
export function verdictWord(run: ReportEnvelope): string {
  const kind = runKind(run);
  if (kind === "fair") return (run.result as FairResult).verdict;
  if (kind === "test") return (run.result as TestResult).discriminatory > 0 ? "discriminatory" : "none";
  return "bias";
}

export function verdictSentence(run: ReportEnvelope): string {
  const first = run.text?.split("\n").find((line) => line.trim() !== "");
  if (first) return first.trim();
  const kind = runKind(run);
  if (kind === "fair") {
    const r = run.result as FairResult;
    const protectedList = (r.protected ?? []).join(", ");
    if (r.verdict === "witness")
      return `witness: ${r.model ?? "the model"} treats two inputs that differ only in ${protectedList} differently`;
    if (r.verdict === "verified")
      return `verified: no two inputs that differ only in ${protectedList} get different labels`;
    return `${r.verdict}: ${r.reason || "no verdict within the limits"}`;
  }
  if (kind === "test") {
    const r = run.result as TestResult;
    return `${r.method}: ${count(r.discriminatory)} of ${count(r.generated)} tests discriminatory (${percent(r.generated ? r.discriminatory / r.generated : 0)})`;
  }
  const r = run.result as BiasResult;
  return `Bias% for ${(r.protected ?? []).join(",")}: ${r.bias_percent}% (95% CI ${r.ci95_percent[0].toFixed(3)}% .. ${r.ci95_percent[1].toFixed(3)}%)`;
}

function section(title: string, name: string, ...children: Child[]): HTMLElement {
  return h("section", { class: "report-section", "data-section": name }, h("h2", {}, title), ...children);
}

// The two inputs side by side; rows whose values differ (the protected features) are marked.
export function pairTable(pair: ExamplePair, protectedNames: string[], caption: string): HTMLTableElement {
  const names = Object.keys(pair.x);
  for (const n of Object.keys(pair.x_prime)) if (!names.includes(n)) names.push(n);
  const body = h("tbody");
  for (const name of names) {
    const a = pair.x[name];
    const b = pair.x_prime[name];
    const changed = scalar(a) !== scalar(b);
    const cls = [changed ? "changed" : "", protectedNames.includes(name) ? "protected" : ""].join(" ").trim();
    body.appendChild(h("tr", { class: cls || null }, h("th", { scope: "row" }, name), h("td", {}, scalar(a)), h("td", {}, scalar(b))));
  }
  if (pair.label !== undefined || pair.label_prime !== undefined)
    body.appendChild(
      h("tr", { class: "decision" }, h("th", { scope: "row" }, "decision"), h("td", {}, scalar(pair.label)), h("td", {}, scalar(pair.label_prime))),
    );
  return h(
    "table",
    { class: "pair" },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "feature"), h("th", { scope: "col" }, "x"), h("th", { scope: "col" }, "x′"))),
    body,
  );
}

function examplePair(run: ReportEnvelope): ExamplePair | null {
  const kind = runKind(run);
  if (kind === "fair") {
    const w = (run.result as FairResult).witness;
    if (!w || !w.x_named || !w.x_prime_named) return null;
    return { x: w.x_named, x_prime: w.x_prime_named, label: w.label_name ?? w.label, label_prime: w.label_prime_name ?? w.label_prime };
  }
  const ex = (run.result as TestResult | BiasResult).example;
  if (ex && ex.x && ex.x_prime) return ex;
  return run.pairs && run.pairs.length > 0 ? run.pairs[0] : null;
}

function sharesSpec(r: FairResult): Spec {
  const values = [
    { part: "certified", share: r.certified ?? 0 },
    { part: "falsified", share: r.falsified ?? 0 },
    { part: "undecided", share: r.undecided ?? 0 },
  ];
  const parts = values.map((v) => v.part);
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    description: "Shares of the domain: certified fair, falsified (unfair), undecided",
    width: 420,
    data: { values },
    encoding: {
      y: { field: "part", type: "nominal", sort: parts, title: null },
      x: { field: "share", type: "quantitative", scale: { domain: [0, 1] }, axis: { format: "%" }, title: "share of the domain" },
    },
    layer: [
      {
        mark: { type: "bar", minBandSize: 2 } as unknown as "bar",
        encoding: {
          color: {
            field: "part",
            type: "nominal",
            scale: { domain: parts, range: ["#2e7d32", "#c62828", "#9e9e9e"] },
            legend: null,
          },
        },
      },
      {
        mark: { type: "text", align: "left", dx: 4 },
        encoding: { text: { field: "share", type: "quantitative", format: ".4~%" } },
      },
    ],
  } as Spec;
}

interface BinRow {
  feature: string;
  bin: string;
  order: number;
  share: number;
  domain: number;
}

function featureSpec(rows: BinRow[], features: string[], measure: string): Spec {
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    description: `Per feature: ${measure} in each range or category, and the range's share of the domain (tick)`,
    data: { values: rows },
    columns: 3,
    facet: { field: "feature", type: "nominal", sort: features, title: null, header: { labelFontWeight: "bold", labelFontSize: 12 } },
    spec: {
      width: 200,
      height: { step: 13 },
      encoding: {
        y: { field: "bin", type: "nominal", sort: { field: "order", op: "min" }, title: null, axis: { labelLimit: 110 } },
      },
      layer: [
        {
          mark: { type: "bar", color: "#c62828" },
          encoding: {
            x: { field: "share", type: "quantitative", axis: { format: "%" }, title: measure },
            tooltip: [
              { field: "bin", type: "nominal" },
              { field: "share", type: "quantitative", format: ".3~%", title: measure },
              { field: "domain", type: "quantitative", format: ".3~%", title: "share of the domain" },
            ],
          },
        },
        { mark: { type: "tick", color: "#333", thickness: 1 }, encoding: { x: { field: "domain", type: "quantitative" } } },
      ],
    },
    resolve: { scale: { y: "independent", x: "independent" } },
  } as Spec;
}

function fairBins(r: FairResult): BinRow[] {
  const rows: BinRow[] = [];
  for (const f of r.falsified_by_feature ?? [])
    f.bins.forEach((b, k) => rows.push({ feature: f.feature, bin: b.lo === b.hi ? b.lo : `${b.lo}..${b.hi}`, order: k, share: b.falsified, domain: b.domain }));
  return rows;
}

// Test runs carry no marginals: count the discriminatory inputs x of the pairs per range or
// category of each non-protected feature, with the schema's uniform share as the reference.
export function pairBins(pairs: ExamplePair[], schema: ReportSchema): BinRow[] {
  const rows: BinRow[] = [];
  const prot = schema.protected ?? [];
  for (const f of schema.features) {
    if (prot.includes(f.name)) continue;
    const bins = binsOf(f);
    if (bins.length === 0) continue;
    const counts = new Array<number>(bins.length).fill(0);
    let total = 0;
    for (const p of pairs) {
      const k = bins.findIndex((b) => b.holds(p.x[f.name]));
      if (k >= 0) {
        counts[k]++;
        total++;
      }
    }
    if (total === 0) continue;
    bins.forEach((b, k) => rows.push({ feature: f.name, bin: b.label, order: k, share: counts[k] / total, domain: b.domain }));
  }
  return rows;
}

interface Bin {
  label: string;
  domain: number;
  holds: (v: unknown) => boolean;
}

function binsOf(f: SchemaFeature): Bin[] {
  if (f.categories && f.categories.length > 0) {
    const cats = f.categories;
    // Up to 16 bins, as the CLI's own marginals; more categories are grouped by code.
    const per = Math.ceil(cats.length / 16);
    const bins: Bin[] = [];
    for (let i = 0; i < cats.length; i += per) {
      const group = cats.slice(i, i + per);
      const codes = group.map((_, j) => i + j);
      bins.push({
        label: group.length === 1 ? group[0] : `${group[0]}..${group[group.length - 1]}`,
        domain: group.length / cats.length,
        holds: (v) => group.includes(String(v)) || (typeof v === "number" && codes.includes(v)),
      });
    }
    return bins;
  }
  if (f.kind === "boolean")
    return [false, true].map((b) => ({ label: String(b), domain: 0.5, holds: (v) => v === b || v === Number(b) || v === String(b) }));
  if (f.min === undefined || f.max === undefined || !(f.max >= f.min)) return [];
  const lo = f.min;
  const hi = f.max;
  const integer = f.kind === "integer";
  const n = integer ? Math.min(16, hi - lo + 1) : 16;
  const bins: Bin[] = [];
  if (integer) {
    const values = hi - lo + 1;
    for (let k = 0; k < n; k++) {
      const a = lo + Math.floor((k * values) / n);
      const b = lo + Math.floor(((k + 1) * values) / n) - 1;
      bins.push({ label: a === b ? String(a) : `${a}..${b}`, domain: (b - a + 1) / values, holds: (v) => typeof v === "number" && v >= a && v <= b });
    }
  } else {
    const w = (hi - lo) / n || 1;
    for (let k = 0; k < n; k++) {
      const a = lo + k * w;
      const b = k === n - 1 ? hi : lo + (k + 1) * w;
      bins.push({
        label: `${Number(a.toPrecision(4))}..${Number(b.toPrecision(4))}`,
        domain: 1 / n,
        holds: (v) => typeof v === "number" && v >= a && (k === n - 1 ? v <= b : v < b),
      });
    }
  }
  return bins;
}

function biasSpec(r: BiasResult): Spec {
  const [lo, hi] = r.ci95_percent;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    description: "Bias% with its 95% confidence interval",
    width: 420,
    height: 40,
    data: { values: [{ what: "Bias%", estimate: r.bias_percent, lo, hi }] },
    encoding: { y: { field: "what", type: "nominal", title: null } },
    layer: [
      {
        mark: { type: "rule", strokeWidth: 2 },
        encoding: { x: { field: "lo", type: "quantitative", title: "Bias% (95% CI)", scale: { zero: true } }, x2: { field: "hi" } },
      },
      { mark: { type: "point", filled: true, size: 80, color: "#c62828" }, encoding: { x: { field: "estimate", type: "quantitative" } } },
    ],
  } as Spec;
}

// Per category of one group table, the rate with its 95% interval: the favourable rate, and the
// true/false positive rates when the rows carry true labels.
function groupsSpec(t: GroupTable, favorable: string): Spec {
  const values: { group: string; metric: string; rate: number; lo: number; hi: number }[] = [];
  const add = (group: string, metric: string, r: GroupRate | null) => {
    if (r && r.rate !== null && r.ci95) values.push({ group, metric, rate: r.rate, lo: r.ci95[0], hi: r.ci95[1] });
  };
  for (const row of t.groups) {
    add(row.group, "favourable rate", row.favorable_rate);
    add(row.group, "true positive rate", row.true_positive_rate);
    add(row.group, "false positive rate", row.false_positive_rate);
  }
  const metrics = ["favourable rate", "true positive rate", "false positive rate"].filter((m) => values.some((v) => v.metric === m));
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    description: `Per category of ${t.columns.join(" x ")}: ${metrics.join(", ")} (favourable: ${favorable}) with 95% intervals`,
    data: { values },
    facet: { column: { field: "metric", type: "nominal", sort: metrics, title: null } },
    spec: {
      width: 200,
      height: { step: 16 },
      encoding: { y: { field: "group", type: "nominal", title: null, sort: null, axis: { labelLimit: 180 } } },
      layer: [
        {
          mark: { type: "bar", color: "#5c6bc0" },
          encoding: {
            x: { field: "rate", type: "quantitative", scale: { domain: [0, 1] }, axis: { format: "%" }, title: null },
            tooltip: [
              { field: "group", type: "nominal" },
              { field: "rate", type: "quantitative", format: ".2~%" },
              { field: "lo", type: "quantitative", format: ".2~%", title: "95% low" },
              { field: "hi", type: "quantitative", format: ".2~%", title: "95% high" },
            ],
          },
        },
        { mark: { type: "rule", color: "#222" }, encoding: { x: { field: "lo", type: "quantitative" }, x2: { field: "hi" } } },
      ],
    },
  } as Spec;
}

function rateText(r: GroupRate | null): string {
  if (!r || r.rate === null || !r.ci95) return "–";
  return `${percent(r.rate)} [${percent(r.ci95[0])}, ${percent(r.ci95[1])}]`;
}

// The plain-language summary an auditor reads first: the verdict, the real people a protected
// change would decide otherwise (by group and direction), the impact ratios, and which numbers are
// proved and which estimated.
function summarySection(run: ReportEnvelope): HTMLElement | null {
  const kind = runKind(run);
  if (kind === "test") return null;
  const r = run.result as FairResult & BiasResult;
  const items: Child[] = [];
  const favorable = r.favorable ? `${r.favorable.class}${r.favorable.assumed ? " (assumed: the model's second class)" : ""}` : null;
  if (r.unread_protected && r.unread_protected.length > 0)
    items.push(h("li", {}, `The model does not read ${r.unread_protected.join(", ")}: no change of it changes a decision; its groups are compared below by their rates.`));
  const data = r.data as DataRows | undefined;
  if (data && data.by_group) {
    for (const g of data.by_group) if (g.to_favorable.k + g.to_unfavorable.k > 0) items.push(h("li", { class: "harm" }, `${g.sentence}.`));
    if ((data.flipped ?? 0) === 0) items.push(h("li", {}, `No row of ${data.file} (${count(data.rows)} rows) would have been decided otherwise with another ${(r.protected ?? []).join(" or ")}.`));
  }
  const groups = r.groups;
  if (groups)
    for (const t of groups.tables)
      if (t.most_favored)
        items.push(
          h("li", {}, `Impact ratio by ${t.columns.join(" x ")}: lowest ${t.impact_ratio_min.toFixed(3)} (against ${t.most_favored}, the most favoured)${t.impact_ratio_min < 0.8 ? ", under the four-fifths rule's 0.8" : ""}.`),
        );
  const proved: string[] = [];
  const estimated: string[] = [];
  if (kind === "fair") {
    if (data) proved.push("every data row decided with every other protected value (exact)");
    if (r.verdict === "verified") proved.push(r.vacuous ? "the verdict (vacuous: no pair to compare)" : "no two people in the domain differ only in the protected attributes and get different decisions");
    if (r.verdict === "witness") proved.push("each witness pair, replayed on the original model");
    if (typeof r.certified === "number") proved.push(`the certified (${percent(r.certified)}) and falsified (${percent(r.falsified)}) shares of the domain, sound bounds`);
    if (r.estimate) estimated.push(`the falsified share of the undecided regions (${percent(r.estimate.falsified)}, from ${count(r.estimate.samples)} points drawn)`);
  } else {
    estimated.push(`Bias% (${r.bias_percent}%, from ${count(r.samples)} ${r.inputs === "data" ? "data rows drawn" : "random inputs"})`);
  }
  if (groups) proved.push("the group rates (counts of the data rows; intervals are 95% Wilson)");
  if (proved.length > 0) items.push(h("li", {}, `Proved: ${proved.join("; ")}.`));
  if (estimated.length > 0) items.push(h("li", {}, `Estimated: ${estimated.join("; ")}.`));
  if (favorable) items.push(h("li", {}, `Favourable outcome: ${favorable}.`));
  if (items.length === 0) return null;
  return section("Summary", "summary", h("ul", { class: "summary" }, ...items));
}

// A data row as the user names it: a DataFrame's index label, else its number (from 1).
function rowName(r: { row: number; index?: string }): string {
  return r.index !== undefined ? `index ${r.index}` : `row ${r.row}`;
}

// The real people whose decision a protected change flips: row, group, both decisions and scores.
function flipsSection(data: DataRows | undefined, maxRows: number): HTMLElement | null {
  if (!data || !data.flips || data.flips.length === 0) return null;
  const shown = data.flips.slice(0, maxRows);
  return section(
    "Real people decided otherwise",
    "flips",
    h("p", { class: "note" }, `${count(data.flipped ?? data.flips.length)} of ${count(data.rows)} rows of ${data.file} flip; ${shown.length} listed (all with --flips-out). Score: ${data.score ?? "the model's output"}.`),
    h(
      "table",
      { class: "flips" },
      h("thead", {}, h("tr", {}, ...[shown[0].index !== undefined ? "index" : "row", "group", "decision", "score", "had the group been", "decision", "score"].map((t) => h("th", { scope: "col" }, t)))),
      h(
        "tbody",
        {},
        ...shown.flatMap((f) =>
          f.others.map((o, k) =>
            h(
              "tr",
              { class: k === 0 ? "first" : "more" },
              h("td", { class: "num" }, k === 0 ? (f.index ?? String(f.row)) : ""),
              h("td", {}, k === 0 ? f.group : ""),
              h("td", {}, k === 0 ? f.decision : ""),
              h("td", { class: "num" }, k === 0 ? score(f.score) : ""),
              h("td", {}, o.group),
              h("td", { class: "changed-decision" }, o.decision),
              h("td", { class: "num" }, score(o.score)),
            ),
          ),
        ),
      ),
    ),
  );
}

function score(v: number): string {
  return Number.isFinite(v) ? String(Number(v.toPrecision(4))) : scalar(v);
}

function rateCell(r: GroupRate | null): HTMLElement {
  return h("td", { class: "num" }, rateText(r));
}

// The group table in the layout of an NYC Local Law 144 bias-audit summary: per category, the
// number assessed, the favourable rate and the impact ratio against the most favoured category.
function groupsSection(groups: GroupMetrics | null | undefined, addChart: (name: string, label: string, spec: Spec) => HTMLElement): HTMLElement | null {
  if (!groups || groups.tables.length === 0) return null;
  const truth = groups.no_true_labels === null;
  const head = ["category", "number assessed", `favourable rate (${groups.favorable})`, "impact ratio", ...(truth ? ["true positive rate", "false positive rate"] : [])];
  const tables = groups.tables.map((t) =>
    h(
      "table",
      { class: "groups", "data-columns": t.columns.join(",") },
      h("caption", {}, `By ${t.columns.join(" x ")}${t.most_favored ? `; most favoured ${t.most_favored}` : ""}`),
      h("thead", {}, h("tr", {}, ...head.map((x) => h("th", { scope: "col" }, x)))),
      h(
        "tbody",
        {},
        ...t.groups.map((g) =>
          h(
            "tr",
            { class: g.unknown ? "unknown" : g.small ? "small" : null },
            h("td", {}, g.group),
            h("td", { class: "num" }, count(g.rows)),
            rateCell(g.favorable_rate),
            h("td", { class: "num" }, g.impact_ratio === null ? "–" : g.small ? `(${g.impact_ratio.toFixed(3)})` : g.impact_ratio.toFixed(3)),
            ...(truth ? [rateCell(g.true_positive_rate), rateCell(g.false_positive_rate)] : []),
          ),
        ),
      ),
    ),
  );
  const notes: string[] = [`${count(groups.rows)} data rows; rates with 95% Wilson intervals; impact ratio = the category's favourable rate / the most favoured category's.`];
  if (groups.tables.some((t) => t.small_rows > 0)) notes.push("Ratios in parentheses: categories under 2% of the rows, left out of the comparison as LL144 allows.");
  notes.push(truth ? `True labels from column '${groups.label}'${groups.accuracy ? `; accuracy ${rateText(groups.accuracy)}` : ""}.` : `No true/false positive rates: ${groups.no_true_labels}.`);
  return section(
    "Groups",
    "groups",
    h("p", { class: "note" }, notes.join(" ")),
    addChart("groups", "rates per category", groupsSpec(groups.tables[0], groups.favorable)),
    ...tables,
  );
}

// Where the answer came from: files with their SHA-256 (as sha256sum prints it), witness's build,
// the exact command, options, seed, limits, date and machine.
function provenanceSection(p: Provenance | undefined): HTMLElement | null {
  if (!p) return null;
  const files = h(
    "table",
    { class: "files" },
    h("thead", {}, h("tr", {}, ...["input", "file", "SHA-256", "bytes"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...p.files.map((f) => h("tr", {}, h("td", {}, f.role), h("td", {}, f.name), h("td", { class: "hash" }, h("code", {}, f.sha256)), h("td", { class: "num" }, count(f.bytes))))),
  );
  const options = Object.entries(p.options ?? {})
    .filter(([, v]) => v !== "")
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
  return section(
    "Provenance",
    "provenance",
    files,
    kv([
      ["command", h("code", {}, p.command)],
      ["witness", `${p.witness.version} (commit ${p.witness.commit})`],
      ["options", options || "–"],
      ["seed", scalar(p.seed)],
      ["time limit", p.time_limit > 0 ? seconds(p.time_limit) : "none"],
      ["threads", scalar(p.threads)],
      ["run at", h("time", { datetime: p.created }, p.created)],
      ["machine", `${p.machine.host}: ${p.machine.system}, ${p.machine.cpu}, ${p.machine.cores} cores`],
      ["label column", p.label ?? "none (no true labels)"],
      ["favourable outcome", p.favorable ? `${p.favorable.class}${p.favorable.assumed ? " (assumed)" : ""}` : "–"],
      ["accuracy on the labelled rows", p.accuracy ? rateText(p.accuracy) : "–"],
    ]),
  );
}

// A block for the person responsible to sign the printed report.
function signatureSection(): HTMLElement {
  const line = (label: string) => h("div", { class: "sign-line" }, h("span", { class: "sign-label" }, label), h("span", { class: "sign-blank" }, ""));
  return section("Reviewed by", "signature", h("div", { class: "signature" }, line("Name"), line("Role"), line("Date"), line("Signature")));
}

function kv(rows: [string, Child][]): HTMLTableElement {
  return h("table", { class: "kv" }, h("tbody", {}, ...rows.map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, v)))));
}

// Renders the run into container. Resolves when every chart has rendered; rejects with the first
// chart's error (the error is also shown inside that chart's container).
export async function renderRun(container: HTMLElement, run: ReportEnvelope, options: RenderOptions = {}): Promise<void> {
  const opts = { verdict: true, text: true, footer: true, provenance: true, maxRegions: 25, maxFlips: 50, ...options };
  const kind = runKind(run);
  const charts: Promise<unknown>[] = [];
  const addChart = (name: string, label: string, spec: Spec): HTMLElement => {
    const box = chartBox(name, label);
    charts.push(drawChart(box, spec));
    return box;
  };
  // The run's own protected attributes (the schema's list may be empty or longer).
  const ran = (run.result as { protected?: string[] }).protected;
  const protectedNames = ran && ran.length > 0 ? ran : (run.schema?.protected ?? []);

  if (opts.verdict) {
    append(container, h("p", { class: `verdict verdict-${verdictWord(run)}`, "data-verdict": verdictWord(run) }, verdictSentence(run)));
  }
  // Real people first: the summary, the rows that flip and the groups, then synthetic evidence.
  if (kind !== "test") {
    const r = run.result as FairResult & BiasResult;
    append(container, summarySection(run), flipsSection(r.data as DataRows | undefined, opts.maxFlips), groupsSection(r.groups, addChart));
  }

  const pair = examplePair(run);
  if (pair) {
    let caption = "Example: a discriminatory pair";
    if (kind === "fair") {
      const near = (run.result as FairResult).witness?.nearest_row;
      caption =
        near && near.differs.length === 0
          ? `Witness: data ${rowName(near)} and its twin, who differ only in the protected features and get different decisions`
          : `Witness (synthetic: a person the search constructed${near ? `; the nearest data row, ${rowName(near)}, differs in ${near.differs.join(", ")}` : ""}): two inputs that differ only in the protected features and get different decisions`;
    }
    append(container, section(kind === "fair" ? "Witness pair" : "Example pair", "pair", pairTable(pair, protectedNames, caption)));
  }

  if (kind === "fair") {
    const r = run.result as FairResult;
    if (typeof r.certified === "number") {
      append(
        container,
        section(
          "Shares of the domain",
          "shares",
          addChart("shares", "certified, falsified and undecided shares of the domain", sharesSpec(r)),
          kv([
            ["certified (fair)", percent(r.certified)],
            ["falsified (unfair)", percent(r.falsified)],
            ["undecided", percent(r.undecided)],
            ...(r.estimate
              ? ([[`falsified, estimated (${percent(r.estimate.confidence)} confidence)`, `${percent(r.estimate.falsified)} (${percent(r.estimate.lo)} to ${percent(r.estimate.hi)}; ${count(r.estimate.samples)} points drawn)`]] as [string, string][])
              : []),
            ...(r.domain?.points ? ([["points in the domain", count(r.domain.points)]] as [string, string][]) : []),
          ]),
        ),
      );
    }
    if (r.regions && r.regions.length > 0) {
      const shown = r.regions.slice(0, opts.maxRegions);
      append(
        container,
        section(
          "Falsified regions",
          "regions",
          h("p", { class: "note" }, `Largest falsified share first; ${shown.length} of ${r.regions.length} shown. "falsified" is at least that share of the region's points.`),
          h(
            "table",
            { class: "regions" },
            h("thead", {}, h("tr", {}, ...["rule", "share of the domain", "falsified", "undecided"].map((t) => h("th", { scope: "col" }, t)))),
            h(
              "tbody",
              {},
              ...shown.map((g) =>
                h(
                  "tr",
                  { class: g.all_falsified ? "all-falsified" : null },
                  h("td", { class: "rule" }, g.rule),
                  h("td", { class: "num" }, percent(g.share)),
                  h("td", { class: "num" }, percent(g.falsified)),
                  h("td", { class: "num" }, percent(g.undecided)),
                ),
              ),
            ),
          ),
        ),
      );
    }
    const bins = fairBins(r);
    if (bins.length > 0) {
      const features = (r.falsified_by_feature ?? []).map((f) => f.feature);
      append(
        container,
        section(
          "For whom",
          "features",
          h("p", { class: "note" }, "Share of the falsified individuals in each range or category (bars) and the range's share of the domain (ticks)."),
          addChart("features", "falsified individuals per feature", featureSpec(bins, features, "share of the falsified")),
        ),
      );
    }
  }

  if (kind === "test") {
    const r = run.result as TestResult;
    const phases = Object.entries(r.per_phase ?? {}).map(([k, v]): [string, Child] => [`phase ${k}`, `${count(v.discriminatory)} of ${count(v.generated)}`]);
    append(
      container,
      section(
        "Tests",
        "counts",
        kv([
          ["method", r.method],
          ["generated (unique)", count(r.generated)],
          ["discriminatory", `${count(r.discriminatory)} (${percent(r.generated ? r.discriminatory / r.generated : 0, 3)})`],
          ["duplicates", count(r.duplicates)],
          ["labels asked of the model", count(r.queries)],
          ["time", seconds(r.seconds)],
          ["stopped", r.stopped ?? "–"],
          ...phases,
        ]),
      ),
    );
    if (run.pairs && run.pairs.length > 0 && run.schema) {
      const bins = pairBins(run.pairs, run.schema);
      if (bins.length > 0) {
        const features = [...new Set(bins.map((b) => b.feature))];
        append(
          container,
          section(
            "Where the discriminatory tests are",
            "features",
            h("p", { class: "note" }, `Share of the ${count(run.pairs.length)} discriminatory inputs in each range or category (bars) and the range's share of the domain (ticks).`),
            addChart("features", "discriminatory tests per feature", featureSpec(bins, features, "share of the tests")),
          ),
        );
      }
    }
  }

  if (kind === "bias") {
    const r = run.result as BiasResult;
    append(
      container,
      section(
        "Bias estimate",
        "bias",
        addChart("bias", "Bias% with its 95% confidence interval", biasSpec(r)),
        kv([
          ["Bias%", `${r.bias_percent}%`],
          ["95% confidence interval", `${r.ci95_percent[0].toFixed(3)}% .. ${r.ci95_percent[1].toFixed(3)}%`],
          ["discriminatory", `${count(r.discriminatory)} of ${count(r.samples)} ${r.inputs === "data" ? "data rows" : "uniform random inputs"}`],
          ["seed", scalar(r.seed)],
          ["time", seconds(r.seconds)],
        ]),
      ),
    );
  }

  if (opts.text && run.text) append(container, section("Output", "text", h("pre", { class: "text-output" }, run.text)));
  if (opts.provenance) append(container, provenanceSection((run.result as FairResult).provenance), signatureSection());

  if (opts.footer && (run.command || run.version || run.created)) {
    append(
      container,
      h(
        "footer",
        { class: "report-footer" },
        run.command ? h("div", {}, h("span", { class: "label-text" }, "command "), h("code", {}, run.command)) : null,
        run.version ? h("div", {}, run.version) : null,
        run.created ? h("div", {}, h("time", { datetime: run.created }, run.created)) : null,
      ),
    );
  }

  const settled = await Promise.allSettled(charts);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
}
