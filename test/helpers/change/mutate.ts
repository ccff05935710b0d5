/**
 * Second versions of generated rulesets for the behavioural-diff property
 * (test/property/behavior-diff.test.ts): one mutation of a ruleset document, and a generator of
 * rulesets whose branches are pairwise disjoint (reordering them changes nothing).
 *
 * Mutations: a condition's operator or operand changed, or the condition negated; the branches of
 * a decision reordered; every step renamed (targets and entry updated); a terminal's code
 * changed. Deterministic from the `Rng` of test/helpers/filter/gen-case.ts.
 */
import type { JsonValue } from '../../../src/expr/ast.js';
import type { RulesetDoc, StepDoc } from '../../../src/ruleset/index.js';
import { FIELDS, Rng, randomValue, type FieldSpec } from '../filter/gen-case.js';

/** The kinds of mutation. */
export type MutationKind = 'condition' | 'reorder' | 'rename' | 'code';
export const MUTATIONS: readonly MutationKind[] = ['condition', 'reorder', 'rename', 'code'];

/** A mutated copy and what was done (for failure messages). */
export interface Mutation {
  readonly doc: RulesetDoc;
  readonly kind: MutationKind;
  readonly note: string;
}

const OPERATORS = ['<=', '>=', '==', '!=', '<', '>'] as const;
const CODES = ['A', 'B', 'C', 'D'];

/** One mutation of `doc` of the given kind (falls back to a changed condition when the kind does not apply). */
export function mutate(doc: RulesetDoc, rng: Rng, kind: MutationKind): Mutation {
  const copy = structuredClone(doc);
  // Mostly a step the entry reaches (a change elsewhere changes nothing).
  const live = reachable(copy);
  const pickStep = <T>(entries: [string, T][]): [string, T] => {
    const reached = entries.filter(([id]) => live.has(id));
    return rng.pick(reached.length > 0 && rng.chance(0.9) ? reached : entries);
  };
  switch (kind) {
    case 'rename':
      return { doc: renameSteps(copy), kind, note: 'every step renamed' };
    case 'code': {
      const terminals = Object.entries(copy.steps).filter(([, s]) => s.type === 'terminal');
      const [id, step] = pickStep(terminals);
      const t = step as Extract<StepDoc, { type: 'terminal' }>;
      const code = rng.pick(CODES.filter((c) => c !== t.result.code));
      const note = `terminal ${id}: code ${t.result.code} -> ${code}`;
      t.result.code = code;
      return { doc: copy, kind, note };
    }
    case 'reorder': {
      const decisions = decisionsOf(copy).filter(([, s]) => s.branches.length > 1);
      if (decisions.length > 0) {
        const [id, step] = pickStep(decisions);
        step.branches.reverse();
        return { doc: copy, kind, note: `branches of ${id} reversed` };
      }
      return mutate(doc, rng, 'condition');
    }
    case 'condition': {
      const decisions = decisionsOf(copy);
      if (decisions.length === 0) return mutate(doc, rng, 'code');
      const [id, step] = pickStep(decisions);
      const i = rng.int(step.branches.length);
      const before = step.branches[i]!.condition;
      const after = mutateCondition(before, rng);
      step.branches[i]!.condition = after;
      return { doc: copy, kind, note: `${id}.branches[${i}]: ${before}  ->  ${after}` };
    }
  }
}

/** The steps the entry step reaches. */
function reachable(doc: RulesetDoc): Set<string> {
  const seen = new Set<string>();
  const stack = [doc.config.entry_step];
  while (stack.length > 0) {
    const id = stack.pop()!;
    const s = doc.steps[id];
    if (seen.has(id) || s === undefined) continue;
    seen.add(id);
    if (s.type === 'decision') stack.push(...s.branches.map((b) => b.next_step), ...(s.default_next === undefined ? [] : [s.default_next]));
    else if (s.type === 'action') stack.push(s.next_step);
    else if (s.type === 'table')
      stack.push(
        ...s.rows.flatMap((r) => (r.next_step === undefined ? [] : [r.next_step])),
        ...[s.default_next, s.next_step].filter((x): x is string => x !== undefined),
      );
  }
  return seen;
}

function decisionsOf(doc: RulesetDoc): [string, Extract<StepDoc, { type: 'decision' }>][] {
  return Object.entries(doc.steps).filter((e): e is [string, Extract<StepDoc, { type: 'decision' }>] => e[1].type === 'decision');
}

/** A changed operator, a changed number or string operand, or the negation. */
function mutateCondition(text: string, rng: Rng): string {
  const options: (() => string | null)[] = [
    () => {
      const ops = [...text.matchAll(/(<=|>=|==|!=|<|>)/g)];
      if (ops.length === 0) return null;
      const m = rng.pick(ops);
      const op = rng.pick(OPERATORS.filter((o) => o !== m[1]));
      return text.slice(0, m.index) + op + text.slice(m.index! + m[1]!.length);
    },
    () => {
      const nums = [...text.matchAll(/(?<![\w."])-?\d+(\.\d+)?(?![\w."])/g)];
      if (nums.length === 0) return null;
      const m = rng.pick(nums);
      const n = Number(m[0]) + rng.pick([1, -1, 2.5, 10]);
      return text.slice(0, m.index) + String(n) + text.slice(m.index! + m[0].length);
    },
    () => {
      const strs = [...text.matchAll(/"(?:[^"\\]|\\.)*"/g)];
      if (strs.length === 0) return null;
      const m = rng.pick(strs);
      const s = JSON.stringify(randomValue(rng, 'string'));
      return text.slice(0, m.index) + s + text.slice(m.index! + m[0].length);
    },
    () => `!(${text})`,
  ];
  for (let k = 0; k < 8; k++) {
    const out = rng.pick(options)();
    if (out !== null && out !== text) return out;
  }
  return `!(${text})`;
}

/** Every step id prefixed (`s0` → `v2_s0`), entry and targets updated. */
export function renameSteps(doc: RulesetDoc): RulesetDoc {
  const name = (id: string): string => `v2_${id}`;
  const steps: RulesetDoc['steps'] = {};
  for (const [id, step] of Object.entries(doc.steps)) {
    const s = structuredClone(step);
    switch (s.type) {
      case 'decision':
        for (const b of s.branches) b.next_step = name(b.next_step);
        if (s.default_next !== undefined) s.default_next = name(s.default_next);
        break;
      case 'action':
        s.next_step = name(s.next_step);
        break;
      case 'table':
        for (const r of s.rows) if (r.next_step !== undefined) r.next_step = name(r.next_step);
        if (s.default_next !== undefined) s.default_next = name(s.default_next);
        if (s.next_step !== undefined) s.next_step = name(s.next_step);
        break;
      case 'terminal':
        break;
    }
    steps[name(id)] = s;
  }
  return { ...doc, config: { ...doc.config, entry_step: name(doc.config.entry_step) }, steps };
}

/**
 * A ruleset of 1-4 decisions whose branches are pairwise disjoint (equalities, lists and bounds
 * on one field, values apart), so any reordering of each decision's branches is equivalent.
 */
export function disjointCase(seed: number): RulesetDoc {
  const rng = new Rng(seed);
  const nInner = 1 + rng.int(4);
  const nTerminals = 2 + rng.int(3);
  const inner = Array.from({ length: nInner }, (_, i) => `d${i}`);
  const terminals = Array.from({ length: nTerminals }, (_, i) => `t${i}`);
  const ahead = (i: number): string => rng.pick([...inner.slice(i + 1), ...terminals]);
  const steps: RulesetDoc['steps'] = {};
  inner.forEach((id, i) => {
    const f = rng.pick(FIELDS.filter((x) => x.type !== 'boolean'));
    const conditions = disjointConditions(f, 2 + rng.int(3), rng);
    steps[id] = {
      type: 'decision',
      branches: conditions.map((condition) => ({ condition, next_step: ahead(i) })),
      ...(rng.chance(0.8) ? { default_next: ahead(i) } : {}),
    };
  });
  for (const id of terminals) steps[id] = { type: 'terminal', result: { code: rng.pick(CODES), message: id } };
  return { config: { name: `disjoint_${seed}`, entry_step: 'd0' }, steps };
}

/** `n` conditions on `f` that no value satisfies two of (2n distinct values: condition k uses k and n + k). */
function disjointConditions(f: FieldSpec, n: number, rng: Rng): string[] {
  const values: JsonValue[] = [];
  for (let guard = 0; values.length < 2 * n && guard < 1000; guard++) {
    const v = randomValue(rng, f.type);
    if (!values.includes(v)) values.push(v);
  }
  while (values.length < 2 * n) values.push(f.type === 'number' ? 1000 + values.length : `v${values.length}`);
  const lit = (v: JsonValue): string => JSON.stringify(v);
  return Array.from({ length: n }, (_, k) => {
    if (k === n - 1 && f.type === 'number' && rng.chance(0.5)) return `${f.path} > ${Math.max(...(values as number[]))}`;
    if (rng.chance(0.3)) return `${f.path} in [${lit(values[k]!)}, ${lit(values[n + k]!)}]`;
    return rng.chance(0.2) ? `${lit(values[k]!)} == ${f.path}` : `${f.path} == ${lit(values[k]!)}`;
  });
}
