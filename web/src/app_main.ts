// Entry of app.js, the single-page app of `witness serve`: three workspaces as tabs.

import { h, byId } from "./dom";
import { QueryWorkspace } from "./query_workspace";
import { FairnessWorkspace } from "./fairness_workspace";
import { TestingWorkspace } from "./testing_workspace";
import { token } from "./api";

type Tab = "query" | "fairness" | "testing";
const TITLES: Record<Tab, string> = { query: "Query", fairness: "Fairness", testing: "Testing" };

function main(): void {
  const app = byId("app");
  const tabs = byId("tabs");
  if (!token()) app.appendChild(h("div", { class: "error", role: "alert" }, "This page's address has no ?token=: open the URL that `witness serve` printed."));
  const workspaces: Record<Tab, { element: HTMLElement }> = {
    query: new QueryWorkspace(),
    fairness: new FairnessWorkspace(),
    testing: new TestingWorkspace(),
  };
  const buttons = new Map<Tab, HTMLButtonElement>();
  const panels = new Map<Tab, HTMLElement>();
  for (const tab of Object.keys(TITLES) as Tab[]) {
    const button = h("button", { type: "button", role: "tab", id: `tab-${tab}`, "aria-controls": `ws-${tab}` }, TITLES[tab]);
    button.addEventListener("click", () => show(tab));
    tabs.appendChild(button);
    buttons.set(tab, button);
    const panel = h("section", { id: `ws-${tab}`, role: "tabpanel", "aria-labelledby": `tab-${tab}`, class: "workspace" }, workspaces[tab].element);
    app.appendChild(panel);
    panels.set(tab, panel);
  }
  function show(tab: Tab): void {
    for (const [t, b] of buttons) {
      b.setAttribute("aria-selected", String(t === tab));
      panels.get(t)!.hidden = t !== tab;
    }
    // Keep the token in the address: only the hash changes.
    if (window.location.hash !== `#${tab}`) history.replaceState(null, "", `${window.location.search}#${tab}`);
  }
  const initial = window.location.hash.slice(1);
  show(initial in TITLES ? (initial as Tab) : "query");
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
else main();
