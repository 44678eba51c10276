#!/usr/bin/env node
// Browser test of the self-contained HTML reports: writes a fair, a test and a bias report with
// `witness ... --html`, opens each from file:// with every network request aborted and
// recorded, and checks that each rendered completely offline.
//
//   node web/tests/report.mjs --witness build/witness --root . --out ARTIFACTS
//   node web/tests/report.mjs --files a.html,b.html --out ARTIFACTS   (check existing reports)
import { spawnSync } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { resolve, join } from "node:path";
import { pathToFileURL } from "node:url";
import { launch, parseArgs, Check } from "./browser.mjs";

const args = parseArgs(process.argv.slice(2), { witness: "value", root: "value", out: "value", files: "value" });
if (!args.out || (!args.files && !args.witness)) {
  console.error("usage: report.mjs --witness PATH --root DIR --out ARTIFACTS_DIR | --files A.html,B.html --out ARTIFACTS_DIR");
  process.exit(2);
}
const out = resolve(args.out);
await mkdir(out, { recursive: true });
const check = new Check();

let reports = [];
if (args.files) {
  reports = args.files.split(",").map((f) => ({ name: f, file: resolve(f) }));
} else {
  const witness = resolve(args.witness);
  const root = resolve(args.root ?? ".");
  const B = "benchmarks/fairify";
  const runs = [
    ["fair", ["fair", `${B}/models/adult/AC1.h5`, "--schema", `${B}/adult.toml`, "--protected", "sex", "--quantify", "--time-limit", "8"], [0, 10, 20]],
    ["test", ["test", `${B}/models/adult/AC1.h5`, "--schema", `${B}/adult.toml`, "--protected", "sex", "--method", "adf", "--budget", "5000"], [0, 10]],
    ["bias", ["bias", `${B}/models/adult/AC1.h5`, "--schema", `${B}/adult.toml`, "--protected", "sex", "--samples", "100000"], [0]],
  ];
  for (const [name, argv, codes] of runs) {
    const file = join(out, name === "fair" ? "report.html" : `report-${name}.html`);
    const t0 = Date.now();
    const r = spawnSync(witness, [...argv, "--html", file], { cwd: root, encoding: "utf8", maxBuffer: 64 << 20 });
    const okRun = check.ok(codes.includes(r.status), `witness ${name} --html exits ${r.status} (${((Date.now() - t0) / 1000).toFixed(1)} s)${r.status === codes[0] || codes.includes(r.status) ? "" : `: ${(r.stderr || "").trim().slice(0, 400)}`}`);
    if (okRun) reports.push({ name, file });
  }
}

const browser = await launch();
try {
  for (const { name, file } of reports) {
    const page = await browser.context.newPage();
    const requests = [];
    // Only the report file itself may load; everything else is aborted and recorded.
    await page.route("**", (route) => {
      const url = route.request().url();
      if (url.startsWith("file:")) return route.continue();
      requests.push(url);
      return route.abort();
    });
    const consoleErrors = [];
    page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
    page.on("pageerror", (e) => consoleErrors.push(String(e)));
    const t0 = Date.now();
    await page.goto(pathToFileURL(file).href);
    let state = null;
    try {
      await page.waitForFunction(() => document.body.dataset.rendered, null, { timeout: 20000 });
      state = await page.evaluate(() => document.body.dataset.rendered);
    } catch {
      state = "(never set)";
    }
    const ms = Date.now() - t0;
    check.ok(state === "yes", `${name}: body data-rendered = ${state} after ${ms} ms`);
    const charts = await page.$$eval(".chart", (els) =>
      els.map((el) => ({ name: el.dataset.chart, svg: !!el.querySelector("svg") && el.querySelector("svg").childElementCount > 0 })),
    );
    check.ok(charts.length > 0, `${name}: ${charts.length} chart(s): ${charts.map((c) => c.name).join(", ")}`);
    for (const c of charts) check.ok(c.svg, `${name}: chart ${c.name} has a non-empty svg`);
    const errors = await page.$$eval(".chart-error", (els) => els.map((e) => e.textContent));
    check.ok(errors.length === 0, `${name}: no .chart-error${errors.length ? `: ${errors.join("; ")}` : ""}`);
    check.ok(requests.length === 0, `${name}: no network request${requests.length ? `: ${requests.join(", ")}` : ""}`);
    check.ok(consoleErrors.length === 0, `${name}: no console error${consoleErrors.length ? `: ${consoleErrors.join("; ")}` : ""}`);
    const verdict = await page.$eval(".verdict", (e) => e.textContent).catch(() => "");
    check.ok(verdict.length > 0, `${name}: verdict "${verdict.slice(0, 80)}"`);
    if (name === "fair" || name.endsWith("fair.html")) {
      check.ok((await page.$$("table.pair tr.changed")).length > 0, `${name}: witness pair with the changed feature marked`);
      check.ok((await page.$$("table.regions tbody tr")).length > 0, `${name}: regions table`);
    }
    const shot = name === "fair" ? "report.png" : name.includes("/") ? `report-${reports.indexOf(reports.find((r) => r.name === name))}.png` : `report-${name}.png`;
    await page.screenshot({ path: join(out, shot), fullPage: true });
    await page.close();
  }
} finally {
  await browser.close();
}
check.finish("report.mjs");
