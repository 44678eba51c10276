// The part the Fairness and Testing workspaces share: model, schema and protected attributes, and
// the Run / Cancel buttons of a job.

import { api, pollJob, type Job } from "./api";
import { h, labelled, showError } from "./dom";
import { FilePicker } from "./files";

export const MODEL_EXTENSIONS = [".onnx", ".h5", ".json", ".nnet"];

// The schema's top-level `protected = ["sex", "race"]` (possibly over several lines).
export function schemaProtected(toml: string): string[] | null {
  const m = /^\s*protected\s*=\s*\[([^\]]*)\]/m.exec(toml);
  if (!m) return null;
  return [...m[1].matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'/g)].map((x) => x[1] ?? x[2]);
}

export class RunForm {
  readonly model: FilePicker;
  readonly schema: FilePicker;
  readonly rows: FilePicker;
  readonly protectedInput: HTMLInputElement;
  // With data rows: the true-label column, the favourable class and the group columns.
  readonly labelInput: HTMLInputElement;
  readonly favorableInput: HTMLInputElement;
  readonly groupsInput: HTMLInputElement;
  readonly element: HTMLElement;
  private protectedTouched = false;

  // `rows` names the CSV field: "data" (fair and bias: rows measured, group metrics, the
  // schema of a model that carries its preprocessing) or "seeds" (test: where the search starts).
  constructor(
    prefix: string,
    onError: (message: string) => void,
    readonly rowsKind: "data" | "seeds" = "data",
  ) {
    this.model = new FilePicker({ id: `${prefix}-model`, label: "Model", extensions: MODEL_EXTENSIONS, onChange: () => {}, onError });
    this.schema = new FilePicker({
      id: `${prefix}-schema`,
      label: "Schema",
      extensions: [".toml"],
      onChange: (path) => void this.prefillProtected(path, onError),
      onError,
    });
    this.rows = new FilePicker({
      id: `${prefix}-${rowsKind}`,
      label: rowsKind === "data" ? "Data rows (CSV, optional)" : "Seed rows (CSV, optional)",
      extensions: [".csv"],
      onChange: () => {},
      onError,
    });
    this.protectedInput = h("input", { id: `${prefix}-protected`, type: "text", placeholder: "e.g. sex,race", spellcheck: "false" });
    this.protectedInput.addEventListener("input", () => (this.protectedTouched = true));
    this.labelInput = h("input", { id: `${prefix}-label`, type: "text", placeholder: "e.g. income (none: no TPR/FPR)", spellcheck: "false" });
    this.favorableInput = h("input", { id: `${prefix}-favorable`, type: "text", placeholder: "e.g. >50K (default: the second class)", spellcheck: "false" });
    this.groupsInput = h("input", { id: `${prefix}-groups`, type: "text", placeholder: "e.g. sex,race (default: the protected)", spellcheck: "false" });
    this.element = h(
      "div",
      { class: "run-form" },
      this.model.element,
      this.schema.element,
      this.rows.element,
      labelled("Protected attributes (comma-separated)", this.protectedInput),
      ...(rowsKind === "data"
        ? [
            labelled("True-label column of the data", this.labelInput),
            labelled("Favourable outcome (class people want)", this.favorableInput),
            labelled("Group columns (comma-separated)", this.groupsInput),
          ]
        : []),
    );
  }

  // The Run fieldset: this form, a row of the command's own settings, then the action buttons.
  fieldset(settings: Node[], actions: Node[]): HTMLFieldSetElement {
    return h("fieldset", {}, h("legend", {}, "Run"), this.element, h("div", { class: "row" }, ...settings), h("div", { class: "row actions" }, ...actions));
  }

  // The model, schema and rows chosen (as a request's fields), or null (and a message in
  // `errors`) if something is missing. A model that carries its preprocessing (a skl2onnx
  // pipeline) needs no schema when rows are given: the server reads its schema off them.
  chosen(errors: Element): { model: string; schema?: string; data?: string; seeds?: string } | null {
    showError(errors, null);
    const model = this.model.value;
    const schema = this.schema.value;
    const rows = this.rows.value;
    if (!model || (!schema && !rows)) {
      showError(errors, "choose a model and a schema (or, for a pipeline over raw columns, its data rows)");
      return null;
    }
    return { model, ...(schema ? { schema } : {}), ...(rows ? { [this.rowsKind]: rows } : {}) };
  }

  get protected(): string[] {
    return this.protectedInput.value.split(",").map((s) => s.trim()).filter((s) => s !== "");
  }

  // The request's label and groups fields and the favourable option, for a job with data rows.
  audit(): { label?: string; groups?: string[]; favorable?: string } {
    const label = this.labelInput.value.trim();
    const favorable = this.favorableInput.value.trim();
    const groups = this.groupsInput.value.split(",").map((s) => s.trim()).filter((s) => s !== "");
    return { ...(label ? { label } : {}), ...(groups.length > 0 ? { groups } : {}), ...(favorable ? { favorable } : {}) };
  }

  // Fill in the schema's own protected list unless the user has typed one.
  private async prefillProtected(path: string, onError: (message: string) => void): Promise<void> {
    if (!path || (this.protectedTouched && this.protectedInput.value.trim() !== "")) return;
    try {
      const names = schemaProtected(await api.file(path));
      if (names && names.length > 0) this.protectedInput.value = names.join(",");
    } catch (e) {
      onError(`schema ${path}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// A job's Run and Cancel buttons: run() starts the job, enables Cancel while it runs and polls it
// to its end; Cancel asks the server to stop it. Errors are shown in `errors`.
export class JobRunner {
  private jobId: string | null = null;

  constructor(
    private readonly start: HTMLButtonElement,
    private readonly cancelButton: HTMLButtonElement,
    private readonly errors: Element,
  ) {
    cancelButton.disabled = true;
    cancelButton.addEventListener("click", () => {
      if (this.jobId) api.cancel(this.jobId).catch((e: unknown) => showError(this.errors, messageOf(e)));
    });
  }

  async run(launch: () => Promise<{ id: string }>, onUpdate: (job: Job) => void, onEnd: (job: Job) => Promise<void>): Promise<void> {
    this.start.disabled = true;
    try {
      const { id } = await launch();
      this.jobId = id;
      this.cancelButton.disabled = false;
      await onEnd(await pollJob(id, onUpdate));
    } catch (e) {
      showError(this.errors, messageOf(e));
    } finally {
      this.start.disabled = false;
      this.cancelButton.disabled = true;
      this.jobId = null;
    }
  }
}
