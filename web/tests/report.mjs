#!/usr/bin/env node
// Browser test of the self-contained HTML reports: writes a fair, a test and a bias report with
// `witness ... --html`, and an auditor's report (fair over a pipeline's data rows with a label,
// groups and the favourable class), opens each from file:// with every network request aborted and
// recorded, and checks that each rendered completely offline. The auditor's report must lead with
// the summary, list the rows that flip, carry the LL144-style group tables, provenance hashes that
// sha256 of the files reproduces and a signature block, and print to PDF.
//
//   node web/tests/report.mjs --witness build/witness --root . --out ARTIFACTS
//   node web/tests/report.mjs --files a.html,b.html --out ARTIFACTS   (check existing reports)
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readFile, stat } from "node:fs/promises";
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
    ["audit", ["fair", "tests/fixtures/pipelines/lr.onnx", "--data", "tests/fixtures/pipelines/adult_600.csv", "--protected", "sex",
               "--groups", "sex,race", "--label", "income", "--favorable", ">50K"], [10]],
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
    if (name === "audit") {
      const sections = await page.$$eval("section.report-section", (els) => els.map((e) => e.dataset.section));
      check.ok(sections[0] === "summary" && sections.indexOf("flips") < sections.indexOf("pair"),
               `${name}: the summary first, the real rows before the synthetic pair (${sections.join(", ")})`);
      const summary = await page.$eval('section[data-section="summary"]', (e) => e.textContent);
      check.ok(/of \d+ rows with sex=\w+ were decided/.test(summary) && summary.includes("Impact ratio"),
               `${name}: the summary names who is harmed and the impact ratios: ${summary.slice(0, 160)}`);
      check.ok((await page.$$("table.flips tbody tr")).length > 0, `${name}: the rows that flip are listed`);
      const tables = await page.$$eval("table.groups", (els) => els.map((e) => e.dataset.columns));
      check.ok(tables.join("|") === "sex|race|sex,race", `${name}: group tables by sex, race and sex x race (${tables.join("|")})`);
      const files = await page.$$eval("table.files tbody tr", (rows) => rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent)));
      check.ok(files.length === 2, `${name}: provenance lists the model and the data (${files.length} files)`);
      for (const [role, path, hash] of files) {
        const want = createHash("sha256").update(await readFile(resolve(args.root ?? ".", path))).digest("hex");
        check.ok(hash === want, `${name}: ${role} ${path}: the report's SHA-256 is sha256sum's (${hash.slice(0, 12)}…)`);
      }
      check.ok((await page.$$(".signature .sign-line")).length === 4, `${name}: a signature block (name, role, date, signature)`);
      const pdf = join(out, "report-audit.pdf");
      await page.pdf({ path: pdf, format: "A4", printBackground: true });
      const head = (await readFile(pdf)).subarray(0, 5).toString();
      check.ok(head === "%PDF-" && (await stat(pdf)).size > 20000, `${name}: printed to PDF (${(await stat(pdf)).size} bytes)`);
    }
    const shot = name === "fair" ? "report.png" : name.includes("/") ? `report-${reports.indexOf(reports.find((r) => r.name === name))}.png` : `report-${name}.png`;
    await page.screenshot({ path: join(out, shot), fullPage: true });
    await page.close();
  }
} finally {
  await browser.close();
}
check.finish("report.mjs");
