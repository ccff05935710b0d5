/**
 * The in-process scenarios as data, one description per scenario from which every contender is
 * built: the svc ruleset, the hand-written walker closures, the zen-engine JDM graph, the
 * json-rules-engine rules and the CEL walker graph all come from the same rows, so they
 * cannot drift. Each scenario has inputs with expected codes, checked before timing.
 *
 * - `approval`: the engine issue's scenario (3 decisions, 4 terminals).
 * - `chain20`: 20 steps on the taken path (19 decisions, then the terminal) reading 10 fields.
 * - `branches200`: one decision with 200 branches; the input matches the last one, so all 200
 *   conditions are evaluated (the worst case of "first true branch wins").
 */

/** A scalar comparison the peers can express: `field op value`. */
export interface Cmp {
  readonly field: string;
  readonly op: '>=' | '>' | '<=' | '<' | '==' | '!=' | 'in';
  readonly value: number | string | boolean | readonly string[];
}

/** A condition: one comparison, or all / any of comparisons. */
export type Cond = Cmp | { readonly all: readonly Cmp[] } | { readonly any: readonly Cmp[] };

/** One decision step: if `cond` then `then` else `else` (step ids or terminal codes). */
export interface DecisionRow {
  readonly id: string;
  /** Branches in order; the first true wins. */
  readonly branches: ReadonlyArray<{ readonly cond: Cond; readonly next: string }>;
  readonly otherwise: string;
}

/** A scenario. */
export interface Scenario {
  readonly name: string;
  readonly description: string;
  readonly entry: string;
  readonly decisions: readonly DecisionRow[];
  /** Terminal code → message. */
  readonly terminals: Readonly<Record<string, string>>;
  /** The timed input and its code. */
  readonly input: Record<string, unknown>;
  readonly expected: string;
  /** More inputs with their codes (correctness checks, other paths). */
  readonly checks: ReadonlyArray<readonly [Record<string, unknown>, string]>;
}

// ---------------------------------------------------------------- approval (engine issue)

/** The engine issue's input (APPROVE path). */
export const APPROVAL_INPUT = { user: { age: 30, vip: true, country: 'US' }, order: { amount: 1500 } };

const APPROVAL: Scenario = {
  name: 'approval',
  description: 'engine issue scenario: 3 decisions, 4 terminals, APPROVE path',
  entry: 'd1',
  decisions: [
    { id: 'd1', branches: [{ cond: { field: 'user.age', op: '>=', value: 18 }, next: 'd2' }], otherwise: 'REJECT_AGE' },
    {
      id: 'd2',
      branches: [
        {
          cond: {
            any: [
              { field: 'user.vip', op: '==', value: true },
              { field: 'order.amount', op: '>', value: 1000 },
            ],
          },
          next: 'd3',
        },
      ],
      otherwise: 'REVIEW',
    },
    { id: 'd3', branches: [{ cond: { field: 'user.country', op: 'in', value: ['US', 'CA'] }, next: 'APPROVE' }], otherwise: 'REJECT_REGION' },
  ],
  terminals: { APPROVE: 'approved', REVIEW: 'manual review', REJECT_AGE: 'too young', REJECT_REGION: 'region not served' },
  input: APPROVAL_INPUT,
  expected: 'APPROVE',
  checks: [
    [APPROVAL_INPUT, 'APPROVE'],
    [{ user: { age: 17, vip: true, country: 'US' }, order: { amount: 1500 } }, 'REJECT_AGE'],
    [{ user: { age: 30, vip: false, country: 'US' }, order: { amount: 10 } }, 'REVIEW'],
    [{ user: { age: 30, vip: false, country: 'FR' }, order: { amount: 5000 } }, 'REJECT_REGION'],
  ],
};

/**
 * The svc ruleset of the approval scenario written out as in the engine issue (the svc
 * conditions of `rulesetOf(APPROVAL)` are the same expressions in another spelling).
 */
export const APPROVAL_RULESET = {
  config: { name: 'bench-approval', version: '1.0.0', entry_step: 'd1' },
  steps: {
    d1: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'd2' }], default_next: 'REJECT_AGE' },
    d2: { type: 'decision', branches: [{ condition: 'user.vip || order.amount > 1000', next_step: 'd3' }], default_next: 'REVIEW' },
    d3: { type: 'decision', branches: [{ condition: 'user.country in ["US", "CA"]', next_step: 'APPROVE' }], default_next: 'REJECT_REGION' },
    ...Object.fromEntries(Object.entries(APPROVAL.terminals).map(([code, message]) => [code, { type: 'terminal', result: { code, message } }])),
  },
};

// ---------------------------------------------------------------- chain20

const C = (field: string, op: Cmp['op'], value: Cmp['value']): Cmp => ({ field, op, value });

/** The 19 checks of chain20 over 10 fields; each failing check ends in the terminal given. */
const CHAIN: ReadonlyArray<readonly [Cond, string]> = [
  [C('customer.age', '>=', 18), 'DECLINE_AGE'],
  [C('customer.age', '<', 100), 'REVIEW'],
  [C('customer.country', 'in', ['DE', 'FR', 'NL', 'BE', 'AT']), 'DECLINE_REGION'],
  [C('customer.score', '>=', 600), 'DECLINE_RISK'],
  [C('customer.income', '>', 1000), 'DECLINE_AFFORD'],
  [C('order.amount', '>', 0), 'REVIEW'],
  [C('order.amount', '<=', 50000), 'DECLINE_AFFORD'],
  [C('order.currency', '==', 'EUR'), 'REVIEW'],
  [C('order.channel', 'in', ['web', 'app', 'branch']), 'REVIEW'],
  [C('order.items', '>=', 1), 'REVIEW'],
  [C('order.items', '<=', 50), 'REVIEW'],
  [{ any: [C('customer.years', '>=', 1), C('customer.vip', '==', true)] }, 'REVIEW'],
  [{ any: [C('customer.score', '>=', 700), C('order.amount', '<', 5000)] }, 'DECLINE_RISK'],
  [{ any: [C('customer.income', '>=', 2000), C('customer.vip', '==', true)] }, 'DECLINE_AFFORD'],
  [{ any: [C('order.channel', '!=', 'branch'), C('order.amount', '<=', 20000)] }, 'REVIEW'],
  [{ any: [C('customer.age', '>=', 21), C('order.amount', '<', 1000)] }, 'REVIEW'],
  [C('customer.country', '!=', 'XX'), 'DECLINE_REGION'],
  [{ all: [C('customer.score', '>', 650), C('customer.years', '<', 60)] }, 'REVIEW'],
  [C('order.items', '<', 40), 'REVIEW'],
];

const CHAIN_INPUT = {
  customer: { age: 40, income: 5200, country: 'DE', score: 720, years: 6, vip: false },
  order: { amount: 1200, items: 3, channel: 'web', currency: 'EUR' },
};

const CHAIN20: Scenario = {
  name: 'chain20',
  description: '20 steps on the path (19 decisions in a chain, then APPROVE), 10 input fields',
  entry: 's1',
  decisions: CHAIN.map(([cond, fail], i) => ({
    id: `s${i + 1}`,
    branches: [{ cond, next: i + 1 < CHAIN.length ? `s${i + 2}` : 'APPROVE' }],
    otherwise: fail,
  })),
  terminals: {
    APPROVE: 'approved',
    REVIEW: 'manual review',
    DECLINE_AGE: 'age',
    DECLINE_REGION: 'region',
    DECLINE_RISK: 'risk',
    DECLINE_AFFORD: 'affordability',
  },
  input: CHAIN_INPUT,
  expected: 'APPROVE',
  checks: [
    [CHAIN_INPUT, 'APPROVE'],
    [{ ...CHAIN_INPUT, customer: { ...CHAIN_INPUT.customer, age: 16 } }, 'DECLINE_AGE'],
    [{ ...CHAIN_INPUT, customer: { ...CHAIN_INPUT.customer, country: 'US' } }, 'DECLINE_REGION'],
    [{ ...CHAIN_INPUT, customer: { ...CHAIN_INPUT.customer, income: 1500 } }, 'DECLINE_AFFORD'],
    [{ ...CHAIN_INPUT, order: { ...CHAIN_INPUT.order, items: 45 } }, 'REVIEW'],
  ],
};

// ---------------------------------------------------------------- branches200

const BRANCHES = 200;
const BRANCH_INPUT = { item: { category: `c${BRANCHES - 1}`, weight: 50 } };

const BRANCHES200: Scenario = {
  name: 'branches200',
  description: `one decision with ${BRANCHES} branches (category and weight); the input matches the last branch`,
  entry: 'classify',
  decisions: [
    {
      id: 'classify',
      branches: Array.from({ length: BRANCHES }, (_, k) => ({
        cond: { all: [C('item.category', '==', `c${k}`), C('item.weight', '>', k % 7)] },
        next: `T${k % 10}`,
      })),
      otherwise: 'NONE',
    },
  ],
  terminals: { ...Object.fromEntries(Array.from({ length: 10 }, (_, t) => [`T${t}`, `class ${t}`])), NONE: 'unclassified' },
  input: BRANCH_INPUT,
  expected: `T${(BRANCHES - 1) % 10}`,
  checks: [
    [BRANCH_INPUT, `T${(BRANCHES - 1) % 10}`],
    [{ item: { category: 'c3', weight: 50 } }, 'T3'],
    [{ item: { category: 'c3', weight: 1 } }, 'NONE'],
    [{ item: { category: 'zzz', weight: 50 } }, 'NONE'],
  ],
};

/** Every in-process scenario by name. */
export const SCENARIOS: Readonly<Record<string, Scenario>> = { approval: APPROVAL, chain20: CHAIN20, branches200: BRANCHES200 };

// ---------------------------------------------------------------- renderers

function isCmp(c: Cond): c is Cmp {
  return 'field' in c;
}

function literal(v: Cmp['value']): string {
  return Array.isArray(v) ? `[${v.map((x) => JSON.stringify(x)).join(', ')}]` : JSON.stringify(v);
}

/** A condition in svc's expression language (also valid CEL for these forms). */
export function svcExpr(c: Cond): string {
  if (isCmp(c)) return c.op === '==' && c.value === true ? c.field : `${c.field} ${c.op} ${literal(c.value)}`;
  if ('all' in c) return c.all.map(svcExpr).join(' && ');
  return c.any.map(svcExpr).join(' || ');
}

/** A condition in CEL (cel-js). */
export function celExpr(c: Cond): string {
  if (isCmp(c)) return `${c.field} ${c.op} ${literal(c.value)}`;
  if ('all' in c) return c.all.map(celExpr).join(' && ');
  return c.any.map(celExpr).join(' || ');
}

/** A condition in zen-engine's expression language. */
export function zenExpr(c: Cond): string {
  if (isCmp(c)) {
    const v = Array.isArray(c.value) ? `[${c.value.map((x) => `'${x}'`).join(', ')}]` : typeof c.value === 'string' ? `'${c.value}'` : String(c.value);
    return `${c.field} ${c.op} ${v}`;
  }
  if ('all' in c) return c.all.map(zenExpr).join(' and ');
  return c.any.map(zenExpr).join(' or ');
}

/** A hand-written JavaScript predicate (what a developer would write for the condition). */
export function jsPredicate(c: Cond): (input: any) => boolean {
  if (isCmp(c)) {
    const [a, b] = c.field.split('.') as [string, string];
    const v = c.value;
    switch (c.op) {
      case '>=':
        return (i) => i[a][b] >= (v as number);
      case '>':
        return (i) => i[a][b] > (v as number);
      case '<=':
        return (i) => i[a][b] <= (v as number);
      case '<':
        return (i) => i[a][b] < (v as number);
      case '==':
        return (i) => i[a][b] === v;
      case '!=':
        return (i) => i[a][b] !== v;
      case 'in': {
        const list = v as readonly string[];
        return (i) => list.includes(i[a][b]);
      }
    }
  }
  const parts = ('all' in c ? c.all : c.any).map(jsPredicate);
  if ('all' in c) {
    if (parts.length === 2) {
      const [p, q] = parts as [(i: unknown) => boolean, (i: unknown) => boolean];
      return (i) => p(i) && q(i);
    }
    return (i) => parts.every((p) => p(i));
  }
  if (parts.length === 2) {
    const [p, q] = parts as [(i: unknown) => boolean, (i: unknown) => boolean];
    return (i) => p(i) || q(i);
  }
  return (i) => parts.some((p) => p(i));
}

/** json-rules-engine condition object for a condition. */
export function jreCondition(c: Cond): Record<string, unknown> {
  if (isCmp(c)) {
    const [fact, path] = c.field.split('.') as [string, string];
    const operator = {
      '>=': 'greaterThanInclusive',
      '>': 'greaterThan',
      '<=': 'lessThanInclusive',
      '<': 'lessThan',
      '==': 'equal',
      '!=': 'notEqual',
      in: 'in',
    }[c.op];
    return { fact, path: `$.${path}`, operator, value: c.value };
  }
  if ('all' in c) return { all: c.all.map(jreCondition) };
  return { any: c.any.map(jreCondition) };
}

/** The svc ruleset document of a scenario. */
export function rulesetOf(s: Scenario): Record<string, unknown> {
  const steps: Record<string, unknown> = {};
  for (const d of s.decisions) {
    steps[d.id] = { type: 'decision', branches: d.branches.map((b) => ({ condition: svcExpr(b.cond), next_step: b.next })), default_next: d.otherwise };
  }
  for (const [code, message] of Object.entries(s.terminals)) steps[code] = { type: 'terminal', result: { code, message } };
  return { config: { name: `bench-${s.name}`, version: '1.0.0', entry_step: s.entry }, steps };
}
