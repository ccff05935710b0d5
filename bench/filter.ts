/**
 * Filter benchmark: filter generation for a 50-step ruleset (36 decisions, 4 action
 * steps, 10 terminals) whose conditions read 20 unknown fields and a few known ones, for each
 * format (sql, json, mongo). The ruleset is a credit decision: stages of checks with side exits
 * to REVIEW / DECLINE terminals, the target codes being APPROVE and REVIEW.
 *
 * Prints µs per call (median, min, max over the rounds) for a warm compiled ruleset (the server's
 * case: the ruleset is compiled once when stored and keeps its filter state) and the one-off cost
 * of the first call on a new document (validate, parse, compile, then the first filter), and the
 * warm call again with a known input that differs on every call (the conditions that read known
 * fields are memoized by their values; those rows show a miss). Target: under 300 us per warm
 * call. Writes bench/results/filter-<timestamp>.json.
 *
 * Run from the repository root: `node --import tsx bench/filter.ts` (src/ through tsx).
 */
import { execSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { generateFilter, parseFilterRequest, type FilterFormat, type FilterResponse } from '../src/filter/index.js';
import { compileRuleset, type CompiledRuleset, type RulesetDoc } from '../src/ruleset/index.js';
import { DEFAULT_MEASURE, measureSync } from './measure.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..');

/** The 20 unknown fields (columns) of the scenario. */
const UNKNOWN_FIELDS = [
  'applicant.age',
  'applicant.income',
  'applicant.country',
  'applicant.employment',
  'applicant.years_employed',
  'applicant.has_default',
  'applicant.credit_score',
  'applicant.email',
  'loan.amount',
  'loan.term',
  'loan.purpose',
  'loan.currency',
  'account.balance',
  'account.overdrafts',
  'account.tenure',
  'account.segment',
  'device.risk',
  'device.country',
  'kyc.level',
  'kyc.pep',
];

/** Known at query time: the channel, region and partner of the caller. */
export const KNOWN_INPUT = { channel: 'web', region: 'EU', partner: { tier: 'gold', max_amount: 50000 } };

/** One stage: a decision with side exits, then the next stage by default. */
interface Stage {
  readonly exits: readonly (readonly [condition: string, terminal: string])[];
}

/** 36 decision stages (some reading known fields, one reading a variable). */
const STAGES: readonly Stage[] = [
  { exits: [['channel == "branch"', 'review_manual']] },
  {
    exits: [
      ['applicant.age < 18', 'decline_age'],
      ['applicant.age > 75 && loan.term > 120', 'review_age'],
    ],
  },
  { exits: [['applicant.country not in ["DE", "FR", "NL", "BE", "AT", "IT", "ES"]', 'decline_region']] },
  { exits: [['region == "EU" && device.country not in ["DE", "FR", "NL", "BE", "AT", "IT", "ES"]', 'review_device']] },
  {
    exits: [
      ['kyc.pep == true', 'review_kyc'],
      ['kyc.level < 2', 'decline_kyc'],
    ],
  },
  { exits: [['is_null(applicant.email) || !contains(applicant.email, "@")', 'review_contact']] },
  { exits: [['applicant.has_default', 'decline_risk']] },
  {
    exits: [
      ['applicant.credit_score < 400', 'decline_risk'],
      ['applicant.credit_score < 550', 'review_risk'],
    ],
  },
  {
    exits: [
      ['device.risk >= 80', 'decline_risk'],
      ['device.risk >= 50 && applicant.credit_score < 650', 'review_risk'],
    ],
  },
  { exits: [['applicant.employment == "unemployed" && applicant.income < 1000', 'decline_afford']] },
  { exits: [['applicant.employment in ["student", "intern"] && loan.amount > 5000', 'review_afford']] },
  { exits: [['applicant.years_employed < 1 && loan.amount > 20000', 'review_afford']] },
  { exits: [['loan.amount > partner.max_amount', 'decline_afford']] },
  { exits: [['loan.amount > 40000 && applicant.income < 3000', 'review_afford']] },
  { exits: [['loan.term > 360 || loan.term < 6', 'decline_terms']] },
  { exits: [['loan.currency != "EUR" && region == "EU"', 'review_terms']] },
  {
    exits: [
      ['loan.purpose in ["gambling", "crypto"]', 'decline_terms'],
      ['starts_with(loan.purpose, "biz_")', 'review_terms'],
    ],
  },
  { exits: [['account.tenure < 3 && loan.amount > 10000', 'review_account']] },
  {
    exits: [
      ['account.overdrafts > 5', 'decline_account'],
      ['account.overdrafts > 2 && account.balance < 0', 'review_account'],
    ],
  },
  { exits: [['account.balance < -1000', 'decline_account']] },
  { exits: [['account.segment == "blocked"', 'decline_account']] },
  { exits: [['partner.tier == "gold" && account.segment == "private"', 'approve_fast']] },
  { exits: [['ends_with(applicant.email, ".invalid")', 'decline_contact']] },
  { exits: [['$score < 0', 'review_risk']] },
  { exits: [['applicant.credit_score >= 800 && account.balance > 10000', 'approve_fast']] },
  { exits: [['loan.amount <= 1000 && applicant.credit_score >= 600', 'approve_fast']] },
  { exits: [['channel == "web" && device.risk > 30 && loan.amount > 15000', 'review_device']] },
  { exits: [['applicant.income >= 10000 && applicant.years_employed >= 5', 'approve_fast']] },
  { exits: [['kyc.level >= 3 && account.tenure >= 24', 'approve_fast']] },
  { exits: [['account.segment in ["student", "junior"] && loan.amount > 3000', 'review_account']] },
  { exits: [['applicant.country == "IT" && loan.purpose == "car"', 'review_terms']] },
  { exits: [['!(applicant.employment in ["employed", "self_employed", "retired"])', 'review_afford']] },
  { exits: [['applicant.age >= 65 && loan.term > 240', 'review_age']] },
  { exits: [['loan.amount > 30000 && applicant.credit_score < 700', 'review_risk']] },
  { exits: [['device.country in ["XX", "YY"]', 'decline_region']] },
  { exits: [['account.balance < 500 && loan.amount > 5000', 'review_account']] },
];

/** Terminal step id → result code (10 terminals). */
const TERMINAL_CODES: Readonly<Record<string, string>> = {
  approve: 'APPROVE',
  approve_fast: 'APPROVE',
  review_manual: 'REVIEW',
  review_risk: 'REVIEW',
  review_afford: 'REVIEW',
  decline_age: 'DECLINE',
  decline_region: 'DECLINE',
  decline_risk: 'DECLINE',
  decline_afford: 'DECLINE',
  decline_kyc: 'DECLINE',
};

/** Exits to terminals not in the table above land on these (10 terminals in total). */
const ALIASES: Readonly<Record<string, string>> = {
  review_age: 'review_risk',
  review_device: 'review_risk',
  review_kyc: 'review_manual',
  review_contact: 'review_manual',
  review_terms: 'review_afford',
  review_account: 'review_afford',
  decline_terms: 'decline_afford',
  decline_account: 'decline_afford',
  decline_contact: 'decline_kyc',
};

/** Builds the 50-step ruleset: 36 decisions, 4 action steps (after stages 8, 17, 22, 30), 10 terminals. */
export function buildRuleset(): RulesetDoc {
  const steps: RulesetDoc['steps'] = {};
  const actionsAfter = new Set([8, 17, 22, 30]);
  const idOf = (i: number): string => (i >= STAGES.length ? 'approve' : `stage_${i}`);
  const nextAfter = (i: number): string => (actionsAfter.has(i) ? `action_${i}` : idOf(i + 1));
  STAGES.forEach((stage, i) => {
    steps[idOf(i)] = {
      type: 'decision',
      branches: stage.exits.map(([condition, to]) => ({ condition, next_step: ALIASES[to] ?? to })),
      default_next: nextAfter(i),
    };
    if (actionsAfter.has(i)) {
      steps[`action_${i}`] = {
        type: 'action',
        actions: [
          { action: 'set_variable', name: 'score', value: i === 8 ? '0' : '$score + 1' },
          { action: 'log', message: `stage ${i} passed`, level: 'debug' },
        ],
        next_step: idOf(i + 1),
      };
    }
  });
  for (const [id, code] of Object.entries(TERMINAL_CODES)) steps[id] = { type: 'terminal', result: { code, message: id } };
  return { config: { name: 'credit_decision', version: '1.0.0', entry_step: 'stage_0' }, steps };
}

function request(format: FilterFormat) {
  return parseFilterRequest({ known_input: KNOWN_INPUT, target_results: ['APPROVE', 'REVIEW'], format });
}

function check(compiled: CompiledRuleset): Record<FilterFormat, FilterResponse> {
  const stepCount = compiled.stepCount;
  if (stepCount !== 50) throw new Error(`scenario has ${stepCount} steps, expected 50`);
  const out = {} as Record<FilterFormat, FilterResponse>;
  for (const format of ['sql', 'json', 'mongo'] as const) {
    const r = generateFilter(compiled, request(format));
    if (r.always_matches || r.never_matches || r.truncated) throw new Error(`scenario should need a real filter: ${JSON.stringify(r)}`);
    const missing = UNKNOWN_FIELDS.filter((f) => !r.unknown_fields.includes(f));
    if (missing.length > 0) throw new Error(`fields missing from the filter: ${missing.join(', ')}`);
    out[format] = r;
  }
  return out;
}

function gitCommit(): string | null {
  try {
    return execSync('git rev-parse --short HEAD', { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

function main(): void {
  const compiled = compileRuleset(buildRuleset());
  const answers = check(compiled);
  const sqlLength = (answers.sql.filter as string).length;

  // Cold: the first call on a new document (compile + generate), median of 21 fresh documents.
  const cold: number[] = [];
  for (let i = 0; i < 21; i++) {
    const fresh = buildRuleset();
    const t0 = performance.now();
    generateFilter(compileRuleset(fresh), request('sql'));
    cold.push((performance.now() - t0) * 1000);
  }
  cold.sort((a, b) => a - b);

  const rows = (['sql', 'json', 'mongo'] as const).map((format) => {
    const req = request(format);
    const t = measureSync(() => generateFilter(compiled, req).unknown_fields.length);
    return {
      format,
      us_median: round(t.nsMedian / 1000, 1),
      us_min: round(t.nsMin / 1000, 1),
      us_max: round(t.nsMax / 1000, 1),
      rounds: t.rounds,
      batch: t.batch,
    };
  });

  // The same, with a known input that differs on every call (partner.max_amount over 64 values,
  // more than the memo of conditions by known values keeps: every call builds its predicates).
  const varied = (['sql', 'json', 'mongo'] as const).map((format) => {
    const reqs = Array.from({ length: 64 }, (_, i) =>
      parseFilterRequest({
        known_input: { ...KNOWN_INPUT, partner: { ...KNOWN_INPUT.partner, max_amount: 40000 + i * 250 } },
        target_results: ['APPROVE', 'REVIEW'],
        format,
      }),
    );
    let n = 0;
    const t = measureSync(() => generateFilter(compiled, reqs[n++ & 63]!).unknown_fields.length);
    return {
      format,
      varied: true,
      us_median: round(t.nsMedian / 1000, 1),
      us_min: round(t.nsMin / 1000, 1),
      us_max: round(t.nsMax / 1000, 1),
      rounds: t.rounds,
      batch: t.batch,
    };
  });

  console.log(`filter: 50-step ruleset, ${UNKNOWN_FIELDS.length} unknown fields, targets APPROVE+REVIEW; sql filter ${sqlLength} chars`);
  console.log(`${'format'.padEnd(8)}${'median µs'.padStart(12)}${'min'.padStart(10)}${'max'.padStart(10)}   (target < 300 µs per call)`);
  for (const r of rows) console.log(`${r.format.padEnd(8)}${String(r.us_median).padStart(12)}${String(r.us_min).padStart(10)}${String(r.us_max).padStart(10)}`);
  for (const r of varied)
    console.log(`${(r.format + '*').padEnd(8)}${String(r.us_median).padStart(12)}${String(r.us_min).padStart(10)}${String(r.us_max).padStart(10)}`);
  console.log('* known input different on every call (64 values of partner.max_amount)');
  console.log(`first call on a new document (compile + sql): median ${round(cold[10]!, 1)} µs`);

  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const stamp = new Date().toISOString();
  const report = {
    suite: 'filter',
    timestamp: stamp,
    svc_version: pkg.version,
    git_commit: gitCommit(),
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    load_average: loadavg().map((l) => round(l, 2)),
    scenario: {
      steps: 50,
      unknown_fields: UNKNOWN_FIELDS.length,
      known_input: KNOWN_INPUT,
      target_results: ['APPROVE', 'REVIEW'],
      sql_filter_chars: sqlLength,
    },
    measure: DEFAULT_MEASURE,
    method:
      'generateFilter in process on the compiled ruleset (warm: its filter state kept, as a stored ruleset keeps it), timed by bench/measure.ts (batches, median of rounds), per format. ' +
      'The first rows repeat one known input (a caller with the same channel, region and partner on every query): the conditions that read known fields are then memoized by those values. ' +
      'The "known input different on every call" rows cycle 64 values of partner.max_amount, more than the memo keeps per condition: every call partially evaluates and reduces those conditions again.',
    results: [...rows, ...varied],
    cold_first_call_us_median: round(cold[10]!, 1),
  };
  const dir = join(HERE, 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `filter-${stamp.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote ${file}`);
}

// Run when executed directly (importing the module only gives the scenario).
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
