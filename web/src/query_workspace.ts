// The Query workspace (soid's questions): a model or program, a logged decision, a family of
// scenarios built from that decision, might/would and a behavior -> a query file -> the answer.

import { api, pollJob, type Inputs } from "./api";
import { h, clear, labelled, showError } from "./dom";
import { FilePicker, } from "./files";
import { MODEL_EXTENSIONS } from "./run_form";
import { parseCsv, type Table } from "./csv";
import { queryToml, toBool, type InputDecl, type InputType, type Role, type QuerySpec } from "./toml";
import { scalar, seconds } from "./format";
import type { QueryAnswer, QueryResult, Scalar } from "./types";

const PROGRAM_EXTENSIONS = [".c", ".cc", ".cpp"];
const DECISION_COLUMNS = ["label", "decision", "action"];
const MAX_LOG_ROWS_SHOWN = 200;

type Mode = "keep" | "free" | "values";

interface InputRow {
  name: string;
  value: HTMLInputElement; // the logged value (from the log, or typed)
  mode: HTMLSelectElement;
  lo: HTMLInputElement;
  hi: HTMLInputElement;
  values: HTMLInputElement;
  role: HTMLSelectElement;
  type: HTMLSelectElement;
}

function isProgram(path: string): boolean {
  return PROGRAM_EXTENSIONS.some((x) => path.toLowerCase().endsWith(x));
}

function select(options: string[], value: string, attrs: Record<string, string>): HTMLSelectElement {
  const s = h("select", attrs, ...options.map((o) => h("option", { value: o }, o)));
  s.value = value;
  return s;
}

export class QueryWorkspace {
  readonly element: HTMLElement;
  private readonly errors = h("div", { class: "errors", id: "query-error" });
  private readonly source: FilePicker;
  private readonly fn = h("input", { id: "query-function", type: "text", placeholder: "decide", spellcheck: "false" });
  private readonly fnField: HTMLElement;
  private readonly log: FilePicker;
  private readonly slider = h("input", { id: "row-slider", type: "range", min: "0", max: "0", value: "0", disabled: true });
  private readonly rowLabel = h("output", { id: "row-index", for: "row-slider" }, "–");
  private readonly logTable = h("div", { id: "log-table", class: "log-table" });
  private readonly inputsBody = h("tbody");
  private readonly inputsTable = h(
    "table",
    { id: "inputs-table", class: "inputs" },
    h("thead", {}, h("tr", {}, ...["input", "logged", "scenario", "lo", "hi", "values", "role", "type"].map((t) => h("th", { scope: "col" }, t)))),
    this.inputsBody,
  );
  private readonly kind = select(["might", "would"], "might", { id: "query-kind" });
  private readonly semantics = select(["real", "float64", "float32"], "real", { id: "query-semantics" });
  private readonly behavior = h("input", { id: "behavior", type: "text", list: "behavior-suggestions", value: "label == 1", spellcheck: "false" });
  private readonly suggestions = h("datalist", { id: "behavior-suggestions" });
  private readonly nearest = h("input", { id: "query-nearest", type: "checkbox" });
  private readonly environment = h("input", { id: "query-environment", type: "text", spellcheck: "false" });
  private readonly state = h("input", { id: "query-state", type: "text", spellcheck: "false" });
  private readonly factual = h("input", { id: "query-factual", type: "text", spellcheck: "false" });
  private readonly toml = h("pre", { id: "query-toml", class: "toml", "aria-label": "the query file", tabindex: "0" });
  private readonly answer = h("div", { id: "query-answer", class: "answer", "aria-live": "polite" });
  private readonly answerDetail = h("div", { id: "query-detail" });
  private readonly askButton = h("button", { type: "button", id: "ask", class: "primary" }, "Ask");

  private info: Inputs | null = null;
  private rows: InputRow[] = [];
  private table: Table | null = null;
  private columnOf = new Map<string, number>();
  private decisionColumn: number | null = null;
  private currentToml = "";
  // Loads finish out of order (a program compiles slower than a model loads): only the latest
  // request of each kind may apply its answer.
  private inputsSeq = 0;
  private logSeq = 0;
  // The user's choices per input name survive reloading the agent or the log.
  private readonly choices = new Map<string, { mode: string; lo: string; hi: string; values: string; role: string; type: string }>();

  constructor() {
    const onError = (m: string) => this.error(m);
    this.source = new FilePicker({
      id: "query-source",
      label: "Model or program",
      extensions: [...MODEL_EXTENSIONS, ...PROGRAM_EXTENSIONS],
      onChange: (path) => {
        this.fnField.hidden = !isProgram(path);
        if (!isProgram(path)) void this.loadInputs();
      },
      onError,
    });
    this.fnField = labelled("Function", this.fn);
    this.fnField.hidden = true;
    this.fn.addEventListener("change", () => void this.loadInputs());
    this.log = new FilePicker({ id: "query-log", label: "Decision log (CSV)", extensions: [".csv"], onChange: () => void this.loadLog(), onError });
    this.slider.setAttribute("aria-label", "logged row");
    this.slider.addEventListener("input", () => this.pickRow(Number(this.slider.value)));
    for (const el of [this.kind, this.semantics, this.behavior, this.nearest, this.environment, this.state, this.factual])
      el.addEventListener("input", () => this.refreshToml());
    const save = h("button", { type: "button", id: "save-toml", class: "secondary" }, "Save TOML");
    save.addEventListener("click", () => this.save());
    this.askButton.addEventListener("click", () => void this.ask());

    this.element = h(
      "div",
      { class: "workspace-body" },
      this.errors,
      h(
        "fieldset",
        {},
        h("legend", {}, "Agent"),
        this.source.element,
        this.fnField,
      ),
      h(
        "fieldset",
        {},
        h("legend", {}, "Logged decision"),
        this.log.element,
        h("div", { class: "row" }, labelled("Row", this.slider, "field grow"), this.rowLabel),
        this.logTable,
      ),
      h(
        "fieldset",
        {},
        h("legend", {}, "Scenarios"),
        h("p", { class: "note" }, "keep: the logged value is a fact; free: the solver picks a value (within lo..hi if given); values: one of a comma-separated list."),
        this.inputsTable,
      ),
      h(
        "fieldset",
        {},
        h("legend", {}, "Question"),
        h(
          "div",
          { class: "row" },
          labelled("Kind", this.kind),
          labelled("Behavior", this.behavior, "field grow"),
          this.suggestions,
          labelled("Semantics", this.semantics),
          h("label", { class: "check" }, this.nearest, " nearest scenario"),
        ),
        h(
          "details",
          {},
          h("summary", {}, "More constraints"),
          h("div", { class: "row" }, labelled("environment", this.environment, "field grow"), labelled("state", this.state, "field grow"), labelled("factual (excluded)", this.factual, "field grow")),
        ),
        h("div", { class: "row actions" }, this.askButton, save),
      ),
      h("section", { class: "answer-pane" }, h("h2", {}, "Answer"), this.answer, this.answerDetail),
      h("details", { class: "toml-pane", open: true }, h("summary", {}, "TOML"), this.toml),
    );
  }

  private error(message: string | null): void {
    showError(this.errors, message);
  }

  private async loadInputs(): Promise<void> {
    const path = this.source.value;
    if (!path) return;
    if (isProgram(path) && !this.fn.value.trim()) return;
    this.error(null);
    const seq = ++this.inputsSeq;
    const fn = isProgram(path) ? this.fn.value.trim() : undefined;
    this.inputsTable.dataset.source = "";
    let info: Inputs;
    try {
      info = await api.inputs(path, fn);
    } catch (e) {
      if (seq !== this.inputsSeq) return;
      this.info = null;
      this.error(`inputs of ${path}: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    if (seq !== this.inputsSeq) return;
    this.info = info;
    this.matchColumns();
    this.buildInputs();
    // Lets a reader (and the browser test) see which agent the table shows.
    this.inputsTable.dataset.source = fn ? `${path}#${fn}` : path;
  }

  private async loadLog(): Promise<void> {
    const path = this.log.value;
    if (!path) return;
    this.error(null);
    const seq = ++this.logSeq;
    this.logTable.dataset.log = "";
    let table: Table;
    try {
      table = parseCsv(await api.file(path));
    } catch (e) {
      if (seq !== this.logSeq) return;
      this.table = null;
      this.error(`decision log ${path}: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    if (seq !== this.logSeq) return;
    this.table = table;
    const n = this.table.rows.length;
    this.slider.max = String(Math.max(0, n - 1));
    this.slider.disabled = n === 0;
    this.slider.value = "0";
    this.matchColumns();
    this.drawLogTable();
    this.buildInputs();
    this.logTable.dataset.log = path;
  }

  // Columns are matched by name, or by position when the model's inputs are unnamed (input[i]).
  // The decision is a column named label/decision/action, else the first column left over.
  private matchColumns(): void {
    this.columnOf.clear();
    this.decisionColumn = null;
    if (!this.table || !this.info) return;
    const header = this.table.header;
    const unnamed = this.info.inputs.every((x) => /^input\[\d+\]$/.test(x.name));
    // skl2onnx names a graph input after its column with every character but [A-Za-z0-9_+] made '_'.
    const onnxName = (c: string) => c.replace(/[^A-Za-z0-9_+]/g, "_").replace(/^([0-9])/, "_$1");
    this.info.inputs.forEach((x, i) => {
      let byName = header.indexOf(x.name);
      if (byName < 0) byName = header.findIndex((c) => onnxName(c) === x.name);
      if (byName >= 0) this.columnOf.set(x.name, byName);
      else if (unnamed && i < header.length) this.columnOf.set(x.name, i);
    });
    const used = new Set(this.columnOf.values());
    const named = header.findIndex((c, k) => !used.has(k) && DECISION_COLUMNS.includes(c.toLowerCase()));
    const extra = header.map((_, k) => k).filter((k) => !used.has(k));
    this.decisionColumn = named >= 0 ? named : extra.length > 0 ? extra[extra.length - 1] : null;
    const missing = this.info.inputs.filter((x) => !this.columnOf.has(x.name)).map((x) => x.name);
    if (missing.length > 0) this.error(`the log has no column for ${missing.join(", ")}: type their values`);
  }

  private drawLogTable(): void {
    clear(this.logTable);
    if (!this.table) return;
    const t = this.table;
    const shown = t.rows.slice(0, MAX_LOG_ROWS_SHOWN);
    const body = h("tbody");
    shown.forEach((r, k) => {
      const tr = h("tr", { "data-row": k, tabindex: "0" }, h("td", { class: "num" }, k + 1), ...r.map((v) => h("td", {}, v)));
      const pick = () => {
        this.slider.value = String(k);
        this.pickRow(k);
      };
      tr.addEventListener("click", pick);
      tr.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") pick();
      });
      body.appendChild(tr);
    });
    this.logTable.appendChild(
      h("table", { class: "log" }, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "#"), ...t.header.map((c) => h("th", { scope: "col" }, c)))), body),
    );
    if (t.rows.length > shown.length) this.logTable.appendChild(h("p", { class: "note" }, `first ${shown.length} of ${t.rows.length} rows shown; the slider reaches all`));
  }

  private currentRow(): string[] | null {
    if (!this.table || this.table.rows.length === 0) return null;
    return this.table.rows[Number(this.slider.value)] ?? null;
  }

  private loggedDecision(): string | null {
    const row = this.currentRow();
    return row && this.decisionColumn !== null ? row[this.decisionColumn].trim() : null;
  }

  private pickRow(k: number): void {
    this.rowLabel.textContent = this.table ? `${k + 1} of ${this.table.rows.length}` : "–";
    this.logTable.querySelectorAll("tr.selected").forEach((tr) => tr.classList.remove("selected"));
    this.logTable.querySelector(`tr[data-row="${k}"]`)?.classList.add("selected");
    const row = this.currentRow();
    if (row)
      for (const r of this.rows) {
        const c = this.columnOf.get(r.name);
        if (c !== undefined) r.value.value = row[c].trim();
      }
    this.updateSuggestions();
    this.refreshToml();
  }

  // Models report every input as real; a log column of true/false says the input is a bool.
  private defaultType(name: string, apiType: InputType): InputType {
    const c = this.columnOf.get(name);
    if (apiType !== "real" || !this.table || c === undefined || this.table.rows.length === 0) return apiType;
    const values = this.table.rows.map((r) => r[c].trim().toLowerCase());
    return values.every((v) => v === "true" || v === "false") ? "bool" : apiType;
  }

  private buildInputs(): void {
    clear(this.inputsBody);
    this.rows = [];
    if (!this.info) return;
    for (const x of this.info.inputs) {
      const label = (what: string) => ({ "aria-label": `${x.name}: ${what}` });
      const r: InputRow = {
        name: x.name,
        value: h("input", { type: "text", class: "value", ...label("logged value"), spellcheck: "false" }),
        mode: select(["keep", "free", "values"], "keep", { class: "mode", ...label("scenario") }),
        lo: h("input", { type: "text", class: "lo", size: 6, ...label("lowest value"), disabled: true }),
        hi: h("input", { type: "text", class: "hi", size: 6, ...label("highest value"), disabled: true }),
        values: h("input", { type: "text", class: "values", size: 10, ...label("allowed values"), placeholder: "a, b, c", disabled: true }),
        role: select(["environment", "state"], "environment", { class: "role", ...label("role") }),
        type: x.type === "category"
          ? select(["category"], "category", { class: "type", ...label("type") })
          : select(["real", "int", "bool"], this.defaultType(x.name, x.type), { class: "type", ...label("type") }),
      };
      if (x.categories && x.categories.length > 0) {
        // The categories as choices: the logged value's suggestions, the values' placeholder; free means any.
        const id = `categories-${this.rows.length}`;
        this.inputsBody.appendChild(h("datalist", { id }, ...x.categories.map((c) => h("option", { value: c }))));
        r.value.setAttribute("list", id);
        r.values.placeholder = x.categories.slice(0, 3).join(", ") + (x.categories.length > 3 ? ", …" : "");
        r.values.title = `categories: ${x.categories.join(", ")}`;
      }
      const kept = this.choices.get(x.name);
      if (kept) {
        r.mode.value = kept.mode;
        r.lo.value = kept.lo;
        r.hi.value = kept.hi;
        r.values.value = kept.values;
        r.role.value = kept.role;
        if (this.info.kind === "model") r.type.value = kept.type;
      }
      const remember = () =>
        this.choices.set(x.name, { mode: r.mode.value, lo: r.lo.value, hi: r.hi.value, values: r.values.value, role: r.role.value, type: r.type.value });
      const sync = () => {
        const m = r.mode.value as Mode;
        r.lo.disabled = r.hi.disabled = m !== "free" || x.type === "category";
        r.values.disabled = m !== "values";
      };
      sync();
      r.mode.addEventListener("change", () => {
        sync();
        remember();
        this.refreshToml();
      });
      for (const el of [r.lo, r.hi, r.values, r.role, r.type])
        el.addEventListener("input", () => {
          remember();
          this.refreshToml();
        });
      r.value.addEventListener("input", () => this.refreshToml());
      this.inputsBody.appendChild(
        h("tr", { "data-input": x.name }, h("th", { scope: "row" }, x.name), h("td", {}, r.value), h("td", {}, r.mode), h("td", {}, r.lo), h("td", {}, r.hi), h("td", {}, r.values), h("td", {}, r.role), h("td", {}, r.type)),
      );
      this.rows.push(r);
    }
    this.pickRow(Number(this.slider.value));
  }

  private updateSuggestions(): void {
    clear(this.suggestions);
    const classes = this.info?.classes ?? [];
    const options: string[] = [];
    const logged = this.loggedDecision();
    if (logged !== null && logged !== "") {
      const k = classes.indexOf(logged);
      options.push(`label != ${k >= 0 ? k : logged}`);
    }
    const n = Math.max(classes.length, 2);
    for (let k = 0; k < n; k++) options.push(`label == ${k}`);
    // The model's named outputs too (scores, probabilities): behaviours over a threshold.
    for (const out of this.info?.outputs ?? []) options.push(`${out} > 0.5`);
    for (const o of options) this.suggestions.appendChild(h("option", { value: o }));
  }

  private spec(): QuerySpec {
    const path = this.source.value;
    if (!path) throw new Error("choose a model or a program");
    const program = isProgram(path);
    if (program && !this.fn.value.trim()) throw new Error("name the program's decision function");
    if (this.rows.length === 0) throw new Error("load the agent's inputs first");
    const inputs: InputDecl[] = this.rows.map((r) => {
      const base = { name: r.name, role: r.role.value as Role, type: r.type.value as InputType };
      const mode = r.mode.value as Mode;
      if (mode === "keep") {
        if (r.value.value.trim() === "") throw new Error(`${r.name}: no logged value to keep`);
        return { ...base, mode, value: r.value.value };
      }
      if (mode === "free") return { ...base, mode, min: r.lo.value, max: r.hi.value, logged: this.nearest.checked ? r.value.value : undefined };
      return { ...base, mode, values: r.values.value.split(",").map((s) => s.trim()).filter((s) => s !== "") };
    });
    const row = Number(this.slider.value);
    return {
      name: "ui",
      description: this.table ? `${this.kind.value} ${this.behavior.value.trim()}, from row ${row + 1} of ${this.log.value}` : undefined,
      model: program ? undefined : path,
      program: program ? path : undefined,
      function: program ? this.fn.value.trim() : undefined,
      kind: this.kind.value as "might" | "would",
      semantics: this.semantics.value as QuerySpec["semantics"],
      behavior: this.behavior.value,
      environment: this.environment.value,
      state: this.state.value,
      factual: this.factual.value,
      nearest: this.nearest.checked,
      inputs,
    };
  }

  // The preview always shows the text Ask would send; while the choices are incomplete it says why.
  private refreshToml(): void {
    try {
      this.currentToml = queryToml(this.spec());
      this.toml.textContent = this.currentToml;
      this.toml.classList.remove("invalid");
    } catch (e) {
      this.currentToml = "";
      this.toml.textContent = `# incomplete: ${e instanceof Error ? e.message : String(e)}`;
      this.toml.classList.add("invalid");
    }
  }

  private save(): void {
    this.refreshToml();
    if (!this.currentToml) {
      this.error(this.toml.textContent ?? "the query is incomplete");
      return;
    }
    const url = URL.createObjectURL(new Blob([this.currentToml], { type: "application/toml" }));
    const a = h("a", { href: url, download: "query.toml" });
    document.body.appendChild(a);
    a.click();
    a.remove();
    window.setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  private async ask(): Promise<void> {
    this.error(null);
    let text: string;
    try {
      text = queryToml(this.spec());
    } catch (e) {
      this.error(e instanceof Error ? e.message : String(e));
      return;
    }
    this.currentToml = text;
    this.toml.textContent = text;
    clear(this.answer);
    clear(this.answerDetail);
    this.answer.className = "answer pending";
    this.answer.textContent = "asking…";
    this.askButton.disabled = true;
    const started = performance.now();
    try {
      const { id } = await api.start({ kind: "query", toml: text });
      const job = await pollJob(id, () => {}, 100);
      if (job.state !== "done") {
        this.answer.textContent = "";
        this.answer.className = "answer";
        this.error(job.error ?? `the query ${job.state}`);
        return;
      }
      const q = (job.result as QueryResult | null)?.queries?.[0];
      if (!q) throw new Error("the server returned no answer");
      this.showAnswer(q, performance.now() - started);
    } catch (e) {
      this.answer.textContent = "";
      this.answer.className = "answer";
      this.error(e instanceof Error ? e.message : String(e));
    } finally {
      this.askButton.disabled = false;
    }
  }

  private showAnswer(q: QueryAnswer, ms: number): void {
    const word = q.answer === true ? "yes" : q.answer === false ? "no" : "unknown";
    let why: string;
    if (q.answer === null) why = q.reason_unknown ?? "the solver gave up";
    else if (q.scenario) why = q.kind === "would" ? "a scenario where the behavior fails" : "a scenario shows the behavior";
    else why = q.kind === "would" ? "every scenario shows the behavior" : "no scenario shows the behavior";
    if (q.vacuous) why += " (vacuous: no scenario meets the premise at all)";
    this.answer.className = `answer answer-${word}`;
    this.answer.textContent = `${word}: ${why}`;
    this.answer.dataset.ms = ms.toFixed(1);
    clear(this.answerDetail);
    this.answerDetail.appendChild(h("p", { class: "note", id: "query-time" }, `${q.kind} ${q.behavior ?? ""} (${q.semantics ?? ""}) · solver ${seconds(q.seconds)} · answered in ${ms.toFixed(0)} ms`));
    if (q.scenario) this.answerDetail.appendChild(this.scenarioTable(q));
    if (q.note) this.answerDetail.appendChild(h("p", { class: "note" }, `note: ${q.note}`));
  }

  // The scenario beside the logged facts; inputs whose value differs are marked.
  private scenarioTable(q: QueryAnswer): HTMLTableElement {
    const scenario = q.scenario ?? {};
    const free = new Set(q.free_inputs ?? []);
    const body = h("tbody");
    const names = this.rows.length > 0 ? this.rows.map((r) => r.name) : Object.keys(scenario);
    for (const name of names) {
      const r = this.rows.find((x) => x.name === name);
      const logged = r ? r.value.value.trim() : "";
      const value = scenario[name];
      const changed = logged !== "" && !sameValue(logged, value);
      body.appendChild(
        h(
          "tr",
          { class: changed ? "changed" : null, "data-input": name },
          h("th", { scope: "row" }, name),
          h("td", {}, logged || "–"),
          h("td", {}, scalar(value), free.has(name) ? h("span", { class: "free" }, " (free)") : null),
        ),
      );
    }
    const d = q.decision;
    if (d) {
      const classes = this.info?.classes ?? [];
      const logged = this.loggedDecision();
      const loggedText = logged === null ? "–" : /^\d+$/.test(logged) && classes[Number(logged)] ? `${logged} (${classes[Number(logged)]})` : logged;
      body.appendChild(
        h("tr", { class: "decision" }, h("th", { scope: "row" }, "decision"), h("td", {}, loggedText), h("td", {}, `${scalar(d.label)}${d.label_name ? ` (${d.label_name})` : ""}`)),
      );
    }
    return h(
      "table",
      { id: "scenario", class: "scenario" },
      h("caption", {}, "The scenario beside the logged facts (changed inputs marked)"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "input"), h("th", { scope: "col" }, "logged"), h("th", { scope: "col" }, "scenario"))),
      body,
    );
  }
}

function sameValue(logged: string, value: Scalar | undefined): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === "boolean") {
    try {
      return toBool(logged) === value;
    } catch {
      return false;
    }
  }
  const a = Number(logged);
  if (typeof value === "number" && Number.isFinite(a)) return a === value;
  return logged === String(value);
}
