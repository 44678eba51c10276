// Shared by the browser tests: Debian's chromium through playwright-core (never a downloaded
// browser), headless, with a fresh profile and nothing that phones home.
import { chromium } from "playwright-core";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { existsSync } from "node:fs";

export const CHROMIUM = process.env.WITNESS_CHROMIUM || "/usr/bin/chromium";

export async function launch() {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  const profile = await mkdtemp(join(tmpdir(), "witness-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    acceptDownloads: true,
    viewport: { width: 1280, height: 900 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

export function parseArgs(argv, spec) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith("--")) throw new Error(`unexpected argument ${a}`);
    const key = a.slice(2);
    if (spec[key] === "flag") out[key] = true;
    else if (spec[key] === "value") {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      out[key] = argv[++i];
    } else throw new Error(`unknown option ${a}`);
  }
  return out;
}

export class Check {
  constructor() {
    this.failures = [];
    this.started = Date.now();
  }
  ok(condition, message) {
    if (condition) console.log(`  ok   ${message}`);
    else {
      console.log(`  FAIL ${message}`);
      this.failures.push(message);
    }
    return condition;
  }
  // A target missed (timings on a loaded machine): reported, not a failure.
  warn(condition, message) {
    console.log(`  ${condition ? "ok  " : "WARN"} ${message}`);
    if (!condition) this.warnings = [...(this.warnings ?? []), message];
    return condition;
  }
  finish(name) {
    for (const w of this.warnings ?? []) console.log(`warning: ${w}`);
    const s = ((Date.now() - this.started) / 1000).toFixed(1);
    if (this.failures.length === 0) {
      console.log(`${name}: passed in ${s} s`);
      process.exit(0);
    }
    console.log(`${name}: ${this.failures.length} failure(s) in ${s} s:\n  - ${this.failures.join("\n  - ")}`);
    process.exit(1);
  }
}
