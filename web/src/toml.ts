// Generates a query file (docs/query.md) from the Query workspace's choices. The text is what
// the server answers and what "Save TOML" downloads, so the CLI reads exactly the same query.

export type InputType = "real" | "int" | "bool" | "category";
export type Role = "environment" | "state";

export type InputDecl =
  | { name: string; role: Role; type: InputType; mode: "keep"; value: string }
  | { name: string; role: Role; type: InputType; mode: "free"; min?: string; max?: string; logged?: string }
  | { name: string; role: Role; type: InputType; mode: "values"; values: string[] };

export interface QuerySpec {
  name: string;
  description?: string;
  model?: string;
  program?: string;
  function?: string;
  kind: "might" | "would";
  semantics: "real" | "float64" | "float32";
  behavior: string;
  environment?: string;
  state?: string;
  factual?: string;
  nearest?: boolean;
  inputs: InputDecl[];
}

// A TOML basic string: backslash, quote and control characters escaped.
export function tomlString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return out + '"';
}

// Bare keys may hold only A-Za-z0-9_-; input names such as `input[0]` must be quoted.
export function tomlKey(s: string): string {
  return /^[A-Za-z0-9_-]+$/.test(s) ? s : tomlString(s);
}

const TOML_INT = /^[+-]?(0|[1-9][0-9]*)$/;
const TOML_FLOAT = /^[+-]?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

// A number as written in the log. Decimals that TOML can read are written bare, as a person
// would; anything else (".5", "1.", "1/3") as a string, which witness also accepts.
export function tomlNumber(raw: string, type: InputType): string {
  const s = raw.trim();
  if (type === "bool") return toBool(s) ? "true" : "false";
  if (type === "category") {
    if (s === "") throw new Error("empty category");
    return tomlString(s);
  }
  if (s === "") throw new Error("empty number");
  if (type === "int") {
    if (TOML_INT.test(s)) return s.replace(/^\+/, "");
    // "3.0" from a float-typed log column is still the integer 3.
    const n = Number(s);
    if (Number.isInteger(n) && Math.abs(n) <= Number.MAX_SAFE_INTEGER) return String(n);
    throw new Error(`'${raw}' is not an integer`);
  }
  if (TOML_FLOAT.test(s)) return s.replace(/^\+/, "");
  if (!Number.isFinite(Number(s)) && !/^[+-]?\d+\/\d+$/.test(s)) throw new Error(`'${raw}' is not a number`);
  return tomlString(s);
}

export function toBool(s: string): boolean {
  const t = s.trim().toLowerCase();
  if (t === "true" || t === "1" || t === "yes") return true;
  if (t === "false" || t === "0" || t === "no" || t === "") return false;
  const n = Number(t);
  if (Number.isFinite(n)) return n !== 0;
  throw new Error(`'${s}' is not a boolean`);
}

function inputTable(d: InputDecl): string {
  const parts = [`role = ${tomlString(d.role)}`, `type = ${tomlString(d.type)}`];
  if (d.mode === "keep") {
    parts.push(`value = ${tomlNumber(d.value, d.type)}`);
  } else if (d.mode === "free") {
    if (d.min !== undefined && d.min.trim() !== "") parts.push(`min = ${tomlNumber(d.min, d.type)}`);
    if (d.max !== undefined && d.max.trim() !== "") parts.push(`max = ${tomlNumber(d.max, d.type)}`);
    if (d.logged !== undefined && d.logged.trim() !== "") parts.push(`logged = ${tomlNumber(d.logged, d.type)}`);
  } else {
    if (d.values.length === 0) throw new Error(`${d.name}: the list of values is empty`);
    parts.push(`values = [${d.values.map((v) => tomlNumber(v, d.type)).join(", ")}]`);
  }
  return `{ ${parts.join(", ")} }`;
}

export function queryToml(q: QuerySpec): string {
  const lines: string[] = ["# Query file written by the witness web app (docs/query.md)."];
  lines.push("# Paths are relative to this file's folder: save it in the server's root.");
  lines.push(`name = ${tomlString(q.name)}`);
  if (q.description) lines.push(`description = ${tomlString(q.description)}`);
  if (q.program) {
    lines.push(`program = ${tomlString(q.program)}`);
    lines.push(`function = ${tomlString(q.function ?? "")}`);
  } else if (q.model) {
    lines.push(`model = ${tomlString(q.model)}`);
  } else {
    throw new Error("choose a model or a program");
  }
  lines.push(`kind = ${tomlString(q.kind)}`);
  lines.push(`semantics = ${tomlString(q.semantics)}`);
  if (!q.behavior.trim()) throw new Error("the behavior is empty");
  lines.push(`behavior = ${tomlString(q.behavior.trim())}`);
  if (q.environment?.trim()) lines.push(`environment = ${tomlString(q.environment.trim())}`);
  if (q.state?.trim()) lines.push(`state = ${tomlString(q.state.trim())}`);
  if (q.factual?.trim()) lines.push(`factual = ${tomlString(q.factual.trim())}`);
  if (q.nearest) lines.push("nearest = true");
  lines.push("", "[inputs]");
  const width = Math.max(0, ...q.inputs.map((d) => tomlKey(d.name).length));
  for (const d of q.inputs) lines.push(`${tomlKey(d.name).padEnd(width)} = ${inputTable(d)}`);
  return lines.join("\n") + "\n";
}
