// Vega-Lite charts through vega-embed, SVG and without the action menu. Each chart lives in a
// `.chart[data-chart=NAME]` container; a failure is shown in a `.chart-error` element inside it,
// so a browser test (and a reader) sees which chart broke and why.

import embed from "vega-embed";
import type { VisualizationSpec, Result } from "vega-embed";
import { h } from "./dom";

export type Spec = VisualizationSpec;

export function chartBox(name: string, label: string): HTMLDivElement {
  return h("div", { class: "chart", "data-chart": name, role: "figure", "aria-label": label });
}

export async function drawChart(box: HTMLElement, spec: Spec): Promise<Result> {
  try {
    return await embed(box, spec, { renderer: "svg", actions: false });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    box.appendChild(h("div", { class: "chart-error", role: "alert" }, `chart ${box.dataset.chart ?? ""}: ${message}`));
    throw e;
  }
}
