// The HTTP API of `witness serve` (/tmp/spec/api.md). The token comes from the page's URL and
// goes in a header on every call; links that the browser follows itself carry it as ?token=.

import type { ReportEnvelope, FairResult, TestResult, BiasResult, QueryResult } from "./types";

export function token(): string {
  return new URLSearchParams(window.location.search).get("token") ?? "";
}

export class ApiError extends Error {
  constructor(message: string, readonly status: number) {
    super(message);
  }
}

async function call<T>(method: string, path: string, body?: BodyInit, contentType?: string, raw = false): Promise<T> {
  const headers: Record<string, string> = { "X-Witness-Token": token() };
  if (contentType) headers["Content-Type"] = contentType;
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body });
  } catch (e) {
    throw new ApiError(`the server does not answer (${e instanceof Error ? e.message : String(e)})`, 0);
  }
  const text = await response.text();
  if (!response.ok) {
    // Errors are JSON {"error": ...}; a proxy or a crash may still send something else.
    let message = text || response.statusText;
    try {
      const parsed = JSON.parse(text) as { error?: unknown };
      if (typeof parsed.error === "string") message = parsed.error;
    } catch {
      /* not JSON: keep the raw text */
    }
    throw new ApiError(`${message} (HTTP ${response.status})`, response.status);
  }
  if (raw) return text as unknown as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ApiError(`${method} ${path.split("?")[0]}: the answer is not JSON`, response.status);
  }
}

export interface FileEntry {
  name: string;
  type: "file" | "dir";
  size?: number;
}

export interface Listing {
  dir: string;
  entries: FileEntry[];
}

export interface InputInfo {
  name: string;
  type: "real" | "int" | "bool" | "category";
  categories?: string[]; // a categorical column of a model that carries its preprocessing
}

export interface Inputs {
  kind: "model" | "program";
  path: string;
  function: string | null;
  inputs: InputInfo[];
  outputs: string[];
  classes: string[];
}

export type JobState = "queued" | "running" | "done" | "failed" | "cancelled";

export interface FairProgress {
  certified: number;
  falsified: number;
  undecided: number;
  leaves?: number;
  seconds?: number;
}

export interface TestProgress {
  generated: number;
  discriminatory: number;
  budget?: number;
  seconds?: number;
}

export interface Job {
  id: string;
  kind: "query" | "fair" | "test" | "bias";
  state: JobState;
  seconds?: number;
  progress?: FairProgress | TestProgress | null;
  history?: [number, number, number][] | null;
  result?: FairResult | TestResult | BiasResult | QueryResult | null;
  text?: string | null;
  report?: ReportEnvelope | null;
  error?: string | null;
}

export type JobRequest =
  | { kind: "query"; toml: string }
  | ({ kind: "fair"; engine: string } & ModelRequest)
  | ({ kind: "test" | "bias" } & ModelRequest);

// The model, its schema (left out: a model that carries its preprocessing reads it off the data),
// the protected attributes, the data and seed rows (CSV files under the root) and the options.
export interface ModelRequest {
  model: string;
  schema?: string;
  protected: string[];
  data?: string;
  seeds?: string;
  label?: string; // the data's true-label column
  groups?: string[]; // columns for the group table (default: the protected attributes)
  options: Record<string, string>;
}

export const api = {
  list: (dir: string) => call<Listing>("GET", `/api/files?dir=${encodeURIComponent(dir)}`),
  file: (path: string) => call<string>("GET", `/api/file?path=${encodeURIComponent(path)}`, undefined, undefined, true),
  upload: (file: File) =>
    call<{ path: string }>("POST", `/api/upload?name=${encodeURIComponent(file.name)}`, file, "application/octet-stream"),
  inputs: (path: string, fn?: string) =>
    call<Inputs>(
      "GET",
      `/api/inputs?path=${encodeURIComponent(path)}${fn ? `&function=${encodeURIComponent(fn)}` : ""}`,
    ),
  start: (request: JobRequest) => call<{ id: string }>("POST", "/api/jobs", JSON.stringify(request), "application/json"),
  job: (id: string) => call<Job>("GET", `/api/jobs/${encodeURIComponent(id)}`),
  cancel: (id: string) => call<{ id: string; state: JobState }>("POST", `/api/jobs/${encodeURIComponent(id)}/cancel`),
};

export function jobLink(id: string, what: "pairs.csv" | "report.html"): string {
  return `/api/jobs/${encodeURIComponent(id)}/${what}?token=${encodeURIComponent(token())}`;
}

export function finished(state: JobState): boolean {
  return state === "done" || state === "failed" || state === "cancelled";
}

// Polls a job every ~200 ms until it finishes, handing each snapshot to onUpdate.
// The returned promise settles with the last snapshot; stop() ends the polling early.
export function pollJob(id: string, onUpdate: (job: Job) => void, intervalMs = 200): Promise<Job> {
  return new Promise((resolve, reject) => {
    const tick = async () => {
      try {
        const job = await api.job(id);
        onUpdate(job);
        if (finished(job.state)) resolve(job);
        else window.setTimeout(tick, intervalMs);
      } catch (e) {
        reject(e);
      }
    };
    void tick();
  });
}
