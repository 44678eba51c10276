// Shapes of the CLI's --json documents and of the report envelope (/tmp/spec/api.md).
// Only the fields the front-end reads are typed; everything is optional where the CLI may omit it.

export type Scalar = string | number | boolean | null;
export type NamedRow = Record<string, Scalar>;

export interface FairWitness {
  nearest_row?: { row: number; index?: string; differs: string[] } | null;
  label?: number;
  label_name?: string;
  label_prime?: number;
  label_prime_name?: string;
  x_named?: NamedRow;
  x_prime_named?: NamedRow;
  x?: number[];
  x_prime?: number[];
}

export interface FairRegion {
  rule: string;
  share: number;
  falsified: number;
  undecided: number;
  all_falsified?: boolean;
  points?: number;
}

export interface FeatureBin {
  lo: string;
  hi: string;
  range: string;
  falsified: number;
  domain: number;
}

export interface FeatureBins {
  feature: string;
  bins: FeatureBin[];
}

export interface GroupRate {
  k: number;
  n: number;
  rate: number | null;
  ci95: [number, number] | null;
}

export interface GroupRow {
  group: string;
  values: string[];
  unknown: boolean;
  small: boolean; // under 2% of the known rows: left out of the ratios (LL144)
  rows: number;
  favorable_rate: GroupRate;
  impact_ratio: number | null;
  true_positive_rate: GroupRate | null;
  false_positive_rate: GroupRate | null;
  accuracy: GroupRate | null;
}

// One group column, or the intersection of several.
export interface GroupTable {
  columns: string[];
  groups: GroupRow[];
  most_favored: string;
  parity_difference: number;
  impact_ratio_min: number;
  small_rows: number;
  true_positive_rate_difference: number | null;
  false_positive_rate_difference: number | null;
  equalized_odds_difference: number | null;
}

// Group metrics on data rows (fair and bias runs with --data).
export interface GroupMetrics {
  favorable: string;
  favorable_assumed: boolean;
  rows: number;
  label: string | null;
  accuracy: GroupRate | null;
  tables: GroupTable[];
  no_true_labels: string | null;
}

// Who flips, in which direction (fair runs with --data).
export interface GroupHarm {
  group: string;
  rows: number;
  to_favorable: GroupRate;
  to_unfavorable: GroupRate;
  sentence: string;
}

export interface RowFlip {
  row: number;
  index?: string; // a DataFrame's index label of the row
  group: string;
  decision: string;
  score: number;
  direction: string;
  others: { group: string; decision: string; score: number }[];
}

export interface DataRows {
  file: string;
  rows: number;
  unfair: number;
  share: number;
  favorable?: string;
  score?: string;
  outside_rules?: number;
  by_group?: GroupHarm[];
  flipped?: number;
  flips?: RowFlip[];
}

export interface InputFile {
  role: string;
  name: string;
  sha256: string;
  bytes: number;
}

export interface Provenance {
  files: InputFile[];
  witness: { version: string; commit: string };
  command: string;
  options: Record<string, string>;
  seed: number;
  threads: number;
  time_limit: number;
  created: string;
  machine: { host: string; system: string; cpu: string; cores: number };
  label: string | null;
  favorable: { class: string; assumed: boolean } | null;
  accuracy: GroupRate | null;
}

export interface FairResult {
  verdict: string;
  model?: string;
  schema?: string;
  engine?: string;
  protected?: string[];
  reason?: string;
  phase?: string;
  witness?: FairWitness | null;
  witnesses_found?: number;
  certified?: number | null;
  falsified?: number | null;
  undecided?: number | null;
  regions?: FairRegion[];
  falsified_by_feature?: FeatureBins[];
  domain?: { points?: number; exact?: boolean; falsified_points?: number | null };
  // The falsified share estimated from points drawn in the undecided regions (quantify runs that
  // stop with some of the domain undecided), within [lo, hi] at `confidence`.
  estimate?: { falsified: number; lo: number; hi: number; confidence: number; samples: number; unfair_samples: number } | null;
  stats?: { seconds?: number; regions?: number; leaves?: number };
  data?: DataRows;
  groups?: GroupMetrics | null;
  favorable?: { class: string; assumed: boolean };
  unread_protected?: string[];
  unread_columns?: string[];
  provenance?: Provenance;
  vacuous?: boolean;
}

export interface ExamplePair {
  x: NamedRow;
  x_prime: NamedRow;
  label?: string | number;
  label_prime?: string | number;
}

export interface TestResult {
  method: string;
  model?: string | null;
  command?: string | null;
  protected?: string[];
  generated: number;
  discriminatory: number;
  duplicates?: number;
  rejected?: number;
  queries?: number;
  budget?: number;
  seconds?: number;
  seed?: number;
  stopped?: string;
  success_rate?: number;
  tests_per_second?: number;
  discriminatory_per_second?: number;
  per_phase?: Record<string, { generated: number; discriminatory: number }>;
  example?: ExamplePair | null;
  provenance?: Provenance;
}

export interface BiasResult {
  model?: string;
  protected?: string[];
  samples: number;
  inputs?: string;
  seed?: number;
  discriminatory: number;
  bias_percent: number;
  ci95_percent: [number, number];
  seconds?: number;
  example?: ExamplePair | null;
  groups?: GroupMetrics | null;
  favorable?: { class: string; assumed: boolean };
  unread_protected?: string[];
  provenance?: Provenance;
}

export interface QueryDecision {
  label?: number;
  label_name?: string;
  evaluator_label?: number;
  outputs?: Record<string, number> | number[];
}

export interface QueryAnswer {
  name: string;
  description?: string;
  file?: string;
  model?: string;
  kind: string;
  semantics?: string;
  behavior?: string;
  answer: boolean | null;
  reason_unknown?: string;
  scenario?: Record<string, Scalar> | null;
  scenario_exact?: Record<string, string>;
  free_inputs?: string[];
  decision?: QueryDecision | null;
  vacuous?: boolean | null;
  note?: string;
  seconds?: number;
}

export interface QueryResult {
  queries: QueryAnswer[];
}

export interface SchemaFeature {
  name: string;
  kind: "integer" | "real" | "categorical" | "boolean" | string;
  min?: number;
  max?: number;
  categories?: string[];
}

export interface ReportSchema {
  source?: string;
  features: SchemaFeature[];
  protected?: string[];
}

export type RunKind = "fair" | "test" | "bias";

export interface ReportEnvelope {
  witness_report?: number;
  kind?: RunKind;
  command?: string;
  version?: string;
  created?: string;
  text?: string | null;
  result: FairResult | TestResult | BiasResult;
  schema?: ReportSchema | null;
  pairs?: ExamplePair[] | null;
}
