/**
 * Rulesets shared by the gRPC integration tests (posted over HTTP, so the gRPC tests start from a known state).
 */
import { http } from './server-process.js';

/** A small ruleset with a description, a decision, static and computed output. */
export const LOAN = {
  config: { name: 'loan', version: '2.1.0', description: 'loan approval', entry_step: 'check' },
  steps: {
    check: {
      type: 'decision',
      name: 'Check age',
      branches: [{ condition: 'user.age >= 18 && user.country in ["US", "CA"]', next_step: 'ok' }],
      default_next: 'no',
    },
    ok: { type: 'terminal', name: 'Approve', result: { code: 'APPROVED', message: 'welcome', tier: 'gold' }, output: { limit: 'user.age * 100' } },
    no: { type: 'terminal', name: 'Reject', result: { code: 'REJECTED', message: 'sorry' } },
  },
};

/** Fails at run time: a type error in a condition (an execution error, INTERNAL). */
export const BROKEN = {
  config: { name: 'broken', entry_step: 'd' },
  steps: {
    d: { type: 'decision', branches: [{ condition: 'name * 2 > 1', next_step: 't' }], default_next: 't' },
    t: { type: 'terminal', result: { code: 'NEVER' } },
  },
};

/** Calls now() in a condition and in outputs (EXTENSIONS.md 3 "Dates and time"). */
export const RENEWAL = {
  config: { name: 'renewal', entry_step: 'check' },
  steps: {
    check: {
      type: 'decision',
      branches: [{ condition: 'user.expires < date_add(now(), 30, "days")', next_step: 'due' }],
      default_next: 'fine',
    },
    due: { type: 'terminal', result: { code: 'DUE' }, output: { at: 'now()', left: 'date_diff(now(), user.expires, "days")', weekday: 'weekday(now())' } },
    fine: { type: 'terminal', result: { code: 'FINE' }, output: { at: 'now()' } },
  },
};

/** Decision tables (EXTENSIONS.md 3): a first set table, a collect table, a routing table, then a terminal (not a table). */
export const ROUTING = {
  config: { name: 'routing', entry_step: 'rate' },
  steps: {
    rate: {
      type: 'table',
      hit_policy: 'first',
      inputs: ['user.tier'],
      rows: [
        { when: ['"gold"'], set: { limit: '1000' } },
        { when: ['"silver"'], set: { limit: '100' } },
      ],
      next_step: 'tags',
    },
    tags: {
      type: 'table',
      hit_policy: 'collect',
      inputs: ['user.age'],
      rows: [
        { when: ['>= 18'], set: { tag: '"adult"' } },
        { when: ['>= 65'], set: { tag: '"senior"' } },
      ],
      next_step: 'route',
    },
    route: {
      type: 'table',
      inputs: ['user.country'],
      rows: [
        { when: ['"FR"'], next_step: 'review' },
        { when: ['in ["US", "CA"]'], next_step: 'ok' },
      ],
      default_next: 'review',
    },
    ok: { type: 'terminal', result: { code: 'OK' }, output: { limit: '$limit', tags: '$tag' } },
    review: { type: 'terminal', result: { code: 'REVIEW' } },
  },
};

/** `config.input_schema` (EXTENSIONS.md 2): `user.age` an integer, no keys besides `user`. */
export const TYPED = {
  config: {
    name: 'typed',
    entry_step: 'check',
    input_schema: {
      type: 'object',
      properties: { user: { type: 'object', properties: { age: { type: 'integer' }, country: { type: 'string' } }, required: ['age'] } },
      required: ['user'],
      additionalProperties: false,
    },
  },
  steps: {
    check: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'ok' }], default_next: 'no' },
    ok: { type: 'terminal', result: { code: 'ADULT' } },
    no: { type: 'terminal', result: { code: 'MINOR' } },
  },
};

/**
 * Counts `$n` up to `input.limit`, logging `counting started` first (a marker the tests wait
 * for). With a big limit it runs long; `timeout_ms` of its config makes it time out.
 */
export function counter(name: string, timeoutMs?: number): object {
  return {
    config: { name, entry_step: 'init', ...(timeoutMs !== undefined ? { timeout_ms: timeoutMs } : {}) },
    steps: {
      init: {
        type: 'action',
        actions: [
          { action: 'log', message: 'counting started', level: 'info' },
          { action: 'set_variable', name: 'n', value: '0' },
        ],
        next_step: 'loop',
      },
      loop: { type: 'decision', branches: [{ condition: '$n < limit', next_step: 'inc' }], default_next: 'END' },
      inc: { type: 'action', actions: [{ action: 'set_variable', name: 'n', value: '$n + 1' }], next_step: 'loop' },
      END: { type: 'terminal', result: { code: 'COUNTED', message: 'done' }, output: { n: '$n' } },
    },
  };
}

/** Posts rulesets over HTTP and checks each answer is 200. */
export async function postRulesets(url: string, docs: readonly object[], headers: Record<string, string> = {}): Promise<void> {
  for (const doc of docs) {
    const res = await http(url, 'POST', '/api/v1/rulesets', doc, headers);
    if (res.status !== 200) throw new Error(`POST /rulesets answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
}
