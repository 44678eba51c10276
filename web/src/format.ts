// Number formatting shared by the report and the app.

export function percent(share: number | null | undefined, digits = 4): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return "–";
  const p = share * 100;
  if (p === 0) return "0%";
  // Significant digits, not fixed decimals: falsified shares are often far below 1%.
  return `${Number(p.toPrecision(digits))}%`;
}

export function seconds(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) return "–";
  if (s < 1) return `${(s * 1000).toFixed(0)} ms`;
  return `${s.toFixed(2)} s`;
}

export function count(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return "–";
  return Math.abs(n) >= 1e12 ? n.toExponential(3) : n.toLocaleString("en-US");
}

export function scalar(v: unknown): string {
  if (v === null || v === undefined) return "–";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(12)));
  return String(v);
}
