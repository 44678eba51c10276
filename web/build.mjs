// Bundles the front-end into OUTDIR: app.js (the app of `witness serve`), report.js (the HTML
// report renderer, Vega included), index.html, style.css, report.css. The C++ build runs
// `node web/build.mjs <builddir>/web` and embeds these five files into the binary, so the
// bundles must be self-contained: no runtime fetches, no CDN.
import { build } from "esbuild";
import { appendFile, copyFile, mkdir, readFile, readdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = process.argv[2];
if (!outdir) {
  console.error("usage: node build.mjs OUTDIR");
  process.exit(2);
}
const out = resolve(outdir);
await mkdir(out, { recursive: true });

const common = {
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  sourcemap: false,
  platform: "browser",
  legalComments: "eof",
  metafile: true,
  logLevel: "warning",
  // Vega reads process.env in a few places; the browser has none.
  define: { "process.env.NODE_ENV": '"production"' },
};

// The npm packages a bundle holds (from esbuild's metafile), with their license texts: Vega, its
// d3 parts and the rest are BSD/ISC/MIT-licensed, and those licenses ask that the notice travel
// with the code. Appended as one comment at the end of the bundle.
async function appendLicenses(result, file) {
  const packages = new Set();
  for (const input of Object.keys(result.metafile.inputs)) {
    const m = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
    if (m) packages.add(m[1]);
  }
  let text = "\n/*! Third-party code in this file, and its licenses:\n";
  for (const name of [...packages].sort()) {
    const dir = join(here, "node_modules", name);
    const pkg = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
    const licenseFile = (await readdir(dir)).find((f) => /^licen[cs]e/i.test(f));
    text += `\n--- ${name} ${pkg.version} (${pkg.license ?? "see its package"}) ---\n`;
    if (licenseFile) text += (await readFile(join(dir, licenseFile), "utf8")).replaceAll("*/", "* /") + "\n";
  }
  await appendFile(file, text + "*/\n");
}

async function bundle(entry, outfile) {
  const result = await build({ ...common, entryPoints: [join(here, entry)], outfile });
  await appendLicenses(result, outfile);
}

const started = Date.now();
await Promise.all([
  bundle("src/app_main.ts", join(out, "app.js")),
  bundle("src/report_main.ts", join(out, "report.js")),
  // style.css imports report.css (the app shows results as the report does): inline it.
  build({ entryPoints: [join(here, "style.css")], outfile: join(out, "style.css"), bundle: true, minify: true, logLevel: "warning" }),
  ...["index.html", "report.css"].map((f) => copyFile(join(here, f), join(out, f))),
]);
console.log(`web: built ${out} in ${Date.now() - started} ms`);
