// A file field: a path relative to the server's root, typed, picked from a listing of
// /api/files, or uploaded (the server stores uploads under uploads/ and returns that path).

import { api, type FileEntry } from "./api";
import { h, clear, labelled } from "./dom";

export interface FilePickerOptions {
  id: string;
  label: string;
  extensions: string[]; // shown in the listing, e.g. [".onnx", ".h5"]; directories always are
  value?: string;
  onChange: (path: string) => void;
  onError: (message: string) => void;
}

export class FilePicker {
  readonly element: HTMLElement;
  readonly input: HTMLInputElement;
  private readonly listing: HTMLElement;
  private dir = "";

  constructor(private readonly opts: FilePickerOptions) {
    this.input = h("input", { id: opts.id, type: "text", class: "path", value: opts.value ?? "", placeholder: "path relative to the root", spellcheck: "false" });
    this.input.addEventListener("change", () => opts.onChange(this.value));
    const browse = h("button", { type: "button", id: `${opts.id}-browse`, class: "secondary", "aria-expanded": "false" }, "Browse…");
    const upload = h("input", { type: "file", id: `${opts.id}-upload`, class: "upload", accept: opts.extensions.join(","), "aria-label": `${opts.label}: upload a file` });
    this.listing = h("div", { class: "listing", id: `${opts.id}-listing`, hidden: true });
    browse.addEventListener("click", () => {
      const open = this.listing.hidden;
      this.listing.hidden = !open;
      browse.setAttribute("aria-expanded", String(open));
      if (open) void this.show(this.dir || parentDir(this.value));
    });
    upload.addEventListener("change", () => void this.upload(upload));
    this.element = h(
      "div",
      { class: "file-picker" },
      h("div", { class: "row" }, labelled(opts.label, this.input, "field grow"), browse, h("label", { class: "upload-label secondary" }, "Upload…", upload)),
      this.listing,
    );
  }

  get value(): string {
    return this.input.value.trim();
  }

  set(path: string): void {
    this.input.value = path;
    this.opts.onChange(path);
  }

  private async upload(field: HTMLInputElement): Promise<void> {
    const file = field.files?.[0];
    if (!file) return;
    try {
      const { path } = await api.upload(file);
      this.set(path);
    } catch (e) {
      this.opts.onError(`upload ${file.name}: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      field.value = "";
    }
  }

  private async show(dir: string): Promise<void> {
    let entries: FileEntry[];
    try {
      const listing = await api.list(dir);
      entries = listing.entries;
      this.dir = listing.dir;
    } catch (e) {
      // A typed path whose folder is gone: fall back to the root once.
      if (dir !== "") return this.show("");
      this.opts.onError(`list ${dir || "the root"}: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    clear(this.listing);
    const list = h("ul", { role: "listbox", "aria-label": `files in ${this.dir || "the root"}` });
    const item = (text: string, cls: string, act: () => void) => {
      const button = h("button", { type: "button", class: `entry ${cls}` }, text);
      button.addEventListener("click", act);
      list.appendChild(h("li", {}, button));
    };
    if (this.dir !== "") item("..", "dir", () => void this.show(parentDir(this.dir)));
    for (const e of entries) {
      const path = this.dir ? `${this.dir}/${e.name}` : e.name;
      if (e.type === "dir") item(`${e.name}/`, "dir", () => void this.show(path));
      else if (this.opts.extensions.length === 0 || this.opts.extensions.some((x) => e.name.toLowerCase().endsWith(x)))
        item(e.name, "file", () => {
          this.listing.hidden = true;
          this.set(path);
        });
    }
    this.listing.append(h("div", { class: "listing-dir" }, `/${this.dir}`), list);
  }
}

function parentDir(path: string): string {
  const k = path.lastIndexOf("/");
  return k < 0 ? "" : path.slice(0, k);
}
