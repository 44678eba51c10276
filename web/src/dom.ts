// A tiny element builder: the app needs no framework, only a terse way to build DOM trees
// without innerHTML (so that file names and CLI text are never parsed as markup).

export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | null | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = String(value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing element #${id}`);
  return el as T;
}

// A labelled control: <label>text <control></label>, so that every input has an accessible name.
export function labelled(text: string, control: HTMLElement, cls = "field"): HTMLLabelElement {
  return h("label", { class: cls }, h("span", { class: "label-text" }, text), control);
}

export function showError(container: Element, message: string | null): void {
  clear(container);
  if (message) container.appendChild(h("div", { class: "error", role: "alert" }, message));
}
