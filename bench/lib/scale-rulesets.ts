/**
 * The generated rulesets of the scale suite (bench/scale.ts) and of its in-process reproduction
 * (bench/many-rulesets.ts): ruleset i is a 5-decision credit check with thresholds of its own,
 * its own tests and its own input schema, as an authored ruleset would carry them.
 */
/** Ruleset i: a 5-decision credit check with its own thresholds. */
export function ruleset(i: number): Record<string, unknown> {
  const name = `rs-${String(i).padStart(5, '0')}`;
  const d = (id: string, condition: string, next: string, otherwise: string) => ({
    type: 'decision',
    branches: [{ condition, next_step: next }],
    default_next: otherwise,
  });
  const t = (code: string, extra: Record<string, unknown> = {}) => ({ type: 'terminal', result: { code, message: `${code} by ${name}`, ...extra } });
  return {
    config: { name, version: `1.${i % 7}.0`, description: `generated ruleset ${i}`, entry_step: 'age', input_schema: inputSchema(i) },
    steps: {
      age: d('age', `applicant.age >= ${18 + (i % 5)}`, 'country', 'DECLINE_AGE'),
      country: d('country', `applicant.country in ["DE", "FR", "NL", "US", "CA"]`, 'score', 'DECLINE_REGION'),
      score: d('score', `applicant.score > ${500 + (i % 200)}`, 'amount', 'REVIEW'),
      amount: d('amount', `loan.amount <= applicant.income * ${3 + (i % 4)}`, 'vip', 'REVIEW'),
      vip: d('vip', `applicant.vip || loan.amount < ${10000 + i}`, 'APPROVE', 'REVIEW'),
      APPROVE: t('APPROVE', { tier: i % 2 === 0 ? 'gold' : 'silver' }),
      REVIEW: t('REVIEW'),
      DECLINE_AGE: t('DECLINE_AGE'),
      DECLINE_REGION: t('DECLINE_REGION'),
    },
    // Like an authored ruleset: its own tests (one per terminal; checked when it is created, kept
    // with it, not run at start) and an input schema (compiled at load, validates every input).
    tests: [
      { name: 'approve', input: INPUT, expect: { code: 'APPROVE', output: { tier: i % 2 === 0 ? 'gold' : 'silver' } } },
      { name: 'too young', input: withApplicant({ age: 16 }), expect: { code: 'DECLINE_AGE', path: 'age -> DECLINE_AGE' } },
      { name: 'region', input: withApplicant({ country: 'JP' }), expect: { code: 'DECLINE_REGION' } },
      { name: 'low score', input: withApplicant({ score: 300 }), expect: { code: 'REVIEW', message: `REVIEW by ${name}` } },
    ],
  };
}

/** Ruleset i's input schema: the fields its conditions read, with bounds of its own (no two alike). */
export function inputSchema(i: number): Record<string, unknown> {
  return {
    type: 'object',
    required: ['applicant', 'loan'],
    properties: {
      applicant: {
        type: 'object',
        required: ['age', 'country', 'score', 'income'],
        properties: {
          age: { type: 'integer', minimum: 0, maximum: 120 + (i % 10) },
          country: { type: 'string', minLength: 2, maxLength: 2 },
          score: { type: 'number', minimum: 0, maximum: 1000 + (i % 100) },
          income: { type: 'number', minimum: 0 },
          vip: { type: 'boolean' },
        },
      },
      loan: { type: 'object', required: ['amount'], properties: { amount: { type: 'number', exclusiveMinimum: 0, maximum: 1_000_000 + i } } },
    },
  };
}

function withApplicant(patch: Record<string, unknown>): Record<string, unknown> {
  return { ...INPUT, applicant: { ...INPUT.applicant, ...patch } };
}

export const INPUT = { applicant: { age: 40, country: 'DE', score: 750, income: 5000, vip: false }, loan: { amount: 8000 } };
export const BODY = JSON.stringify({ input: INPUT });
