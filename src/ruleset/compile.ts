/**
 * Compiles a ruleset document once into an immutable `CompiledRuleset`: validated (every problem
 * at once), every expression parsed and compiled with the ruleset's `field_missing`, step
 * targets resolved to direct references, static terminal output precomputed, graph facts
 * computed. Each step kind is built as steps.ts states its meaning.
 */
import type { JsonValue } from '../expr/ast.js';
import { DerivedValues } from './derived.js';
import type { ParsedExpression } from './expressions.js';
import { buildGraph, type RulesetGraph } from './graph.js';
import { deepFreeze, joinKey, setOwn } from './json.js';
import type { InputSchema } from './input-schema.js';
import { DEFAULT_VERSION, type FieldMissing, type RulesetDoc } from './model.js';
import {
  DECISION,
  LOG,
  NO_MATCH,
  encodePlan,
  PlanAction,
  PlanCall,
  PlanNode,
  SET_VARIABLE,
  TABLE_ROW,
  TABLE_ROWS,
  TABLE_SET,
  type ExecutionPlan,
} from './plan.js';
import { collectReadsTree, collectTableFn, firstTableFn, firstValueTree } from './table.js';
import { RulesetValidationError } from './result.js';
import type { ActionInfo, StepInfo } from './step-info.js';
import { PLAN_KIND, assertNever } from './steps.js';
import { analyzeRuleset } from './validate.js';
import { callsNow } from '../expr/dates.js';
import { datasetNames } from '../expr/data-ref.js';

export type { ActionInfo, ActionStepInfo, ArgumentInfo, BranchInfo, CallInfo, DecisionInfo, OutputInfo, StepInfo, TerminalInfo } from './step-info.js';

/**
 * A validated, compiled, immutable ruleset: the engine's one value. It owns the execution plan,
 * the resolved steps tools read, the graph facts and the values higher layers derive from it
 * (the filter's prepared state). Build it with `compileRuleset`.
 */
export interface CompiledRuleset {
  readonly name: string;
  /** `config.version`, default "1.0.0". */
  readonly version: string;
  readonly description: string | null;
  readonly fieldMissing: FieldMissing;
  /** `config.timeout_ms` (0 disables), or undefined when the ruleset does not set one. */
  readonly timeoutMs: number | undefined;
  readonly entryStep: string;
  readonly stepCount: number;
  /** The document as given, without `_signature` (a deep-frozen copy; GET returns it). */
  readonly doc: RulesetDoc;
  /** True when some action step sets variables. */
  readonly hasVariables: boolean;
  /** Every step by id, in document order, with parsed expressions (read-only: do not mutate). */
  readonly steps: ReadonlyMap<string, StepInfo>;
  /** Graph facts: successors, predecessors, terminals by code, reachable and cyclic steps. */
  readonly graph: RulesetGraph;
  /** The compiled `config.input_schema` (EXTENSIONS.md 2 "Input schema"); null without one. */
  readonly inputSchema: InputSchema | null;
  /**
   * The reference datasets its expressions read (`@name`, EXTENSIONS.md 3), sorted; empty when
   * none: the service hands executions a data snapshot only when this is not empty.
   */
  readonly datasets: readonly string[];
  /**
   * The rulesets its call steps call (EXTENSIONS.md 3), sorted; empty when none. Resolved by
   * name when a call runs, so a callee's update takes effect for its callers at once.
   */
  readonly calls: readonly string[];
  /** Values derived lazily by higher layers (the filter's prepared state), owned by this value. */
  readonly derived: DerivedValues;
  /** INTERNAL: the execution plan used by `execute`. Not part of the API; may change any time. */
  readonly _plan: ExecutionPlan;
}

/** Validates and compiles a ruleset document; throws `RulesetValidationError` listing every problem. */
export function compileRuleset(doc: unknown): CompiledRuleset {
  const analysis = analyzeRuleset(doc);
  if (analysis.problems.length > 0 || analysis.doc === null) throw new RulesetValidationError(analysis.problems);
  // Validation proved the shape, so the copy is a RulesetDoc from here on.
  const rdoc = deepFreeze(analysis.doc) as unknown as RulesetDoc;
  const exprs = analysis.exprs;
  const expr = (at: string): ParsedExpression => {
    const e = exprs.get(at);
    if (e === undefined) throw new Error(`internal: expression at ${at} was not parsed`);
    return e;
  };

  const rowExpr = (at: string): ParsedExpression => {
    const e = analysis.rowExprs.get(at);
    if (e === undefined) throw new Error(`internal: table row at ${at} was not parsed`);
    return e;
  };

  const ids = Object.keys(rdoc.steps);
  const byId = new Map<string, PlanNode>();
  for (const id of ids) {
    const s = rdoc.steps[id]!;
    // A decision table is planned as the decision (routing) or action (`set`) it stands for.
    const kind = s.type === 'table' ? (s.hit_policy === undefined ? PLAN_KIND.decision : PLAN_KIND.action) : PLAN_KIND[s.type];
    byId.set(id, new PlanNode(kind, id, s.name ?? id, false, 0));
  }
  const target = (id: string): PlanNode => byId.get(id)!;
  const nodes: PlanNode[] = [];

  const infos = new Map<string, StepInfo>();
  for (const id of ids) {
    const s = rdoc.steps[id]!;
    const p = byId.get(id)!;
    const at = joinKey('steps', id);
    switch (s.type) {
      case 'decision': {
        const parsed = s.branches.map((b, i) => expr(`${at}.branches[${i}].condition`));
        const chain = s.branches.map((b, i) => ({ fn: parsed[i]!.fn, then: target(b.next_step) }));
        linkDecision(p, chain, s.default_next === undefined ? null : target(s.default_next), nodes);
        const branches = s.branches.map((b, i) => Object.freeze({ condition: b.condition, ast: parsed[i]!.ast, nextStep: b.next_step }));
        infos.set(id, Object.freeze({ type: 'decision', id, name: p.name, branches: Object.freeze(branches), defaultNext: s.default_next ?? null }));
        break;
      }
      case 'action': {
        const plan: PlanAction[] = [];
        const actions: ActionInfo[] = [];
        s.actions.forEach((a, i) => {
          if (a.action === 'set_variable') {
            const e = expr(`${at}.actions[${i}].value`);
            plan.push(Object.freeze(new PlanAction(SET_VARIABLE, a.name, e.fn, 'info', '')));
            actions.push(Object.freeze({ kind: 'set_variable', name: a.name, value: a.value, ast: e.ast }));
          } else {
            const level = a.level ?? 'info';
            plan.push(Object.freeze(new PlanAction(LOG, '', null, level, a.message)));
            actions.push(Object.freeze({ kind: 'log', message: a.message, level }));
          }
        });
        p.actions = plan;
        p.next = target(s.next_step);
        infos.set(id, Object.freeze({ type: 'action', id, name: p.name, actions: Object.freeze(actions), nextStep: s.next_step }));
        break;
      }
      case 'terminal': {
        const { code, message, ...rest } = s.result;
        const staticOutput: Record<string, JsonValue> = {};
        for (const key of Object.keys(rest)) setOwn(staticOutput, key, rest[key] as JsonValue);
        p.code = code;
        p.message = message ?? '';
        p.staticOutput = Object.freeze(staticOutput);
        p.staticKeys = Object.keys(staticOutput);
        const outKeys = Object.keys(s.output ?? {});
        const parsed = outKeys.map((key) => expr(joinKey(`${at}.output`, key)));
        p.outKeys = outKeys;
        p.outFns = parsed.map((e) => e.fn);
        const output = outKeys.map((key, i) => Object.freeze({ key, expression: parsed[i]!.source, ast: parsed[i]!.ast }));
        infos.set(
          id,
          Object.freeze({ type: 'terminal', id, name: p.name, code, message: p.message, staticOutput: p.staticOutput, output: Object.freeze(output) }),
        );
        break;
      }
      case 'table': {
        // Decision tables (EXTENSIONS.md 3, table.ts): rows compile to closures like branches.
        p.table = s.hit_policy === 'collect' ? TABLE_ROWS : TABLE_ROW;
        const rows = s.rows.map((r, i) => rowExpr(`${at}.rows[${i}].when`));
        const origin = Object.freeze({ inputs: Object.freeze([...s.inputs]), hitPolicy: s.hit_policy ?? null });
        if (s.hit_policy === undefined) {
          const chain = s.rows.map((r, i) => ({ fn: rows[i]!.fn, then: target(r.next_step!) }));
          linkDecision(p, chain, s.default_next === undefined ? null : target(s.default_next), nodes);
          const branches = s.rows.map((r, i) => Object.freeze({ condition: rows[i]!.source, ast: rows[i]!.ast, nextStep: r.next_step! }));
          infos.set(
            id,
            Object.freeze({ type: 'decision', id, name: p.name, branches: Object.freeze(branches), defaultNext: s.default_next ?? null, table: origin }),
          );
        } else {
          const names = [...new Set(s.rows.flatMap((r) => Object.keys(r.set ?? {})))];
          const values = s.rows.map((r, i) => Object.keys(r.set ?? {}).map((name) => [name, expr(joinKey(`${at}.rows[${i}].set`, name))] as const));
          const collect = s.hit_policy === 'collect';
          const fns = values.map((row) => row.map(([name, e]) => [name, e.fn] as const));
          const conds = rows.map((r) => r.fn);
          const fn = collect ? collectTableFn(conds, fns, names) : firstTableFn(conds, fns, names);
          p.actions = [Object.freeze(new PlanAction(TABLE_SET, '', fn, 'info', ''))];
          p.next = target(s.next_step!);
          const trees = values.map((row) => new Map(row.map(([name, e]) => [name, e.ast])));
          const asts = rows.map((r) => r.ast);
          const actions = names.map((name) => {
            const sets = (i: number): boolean => Object.hasOwn(s.rows[i]!.set ?? {}, name);
            // The value as text (shown by tools, not parsed: it may pass the expression length limit).
            if (collect) {
              const items = s.rows.flatMap((r, i) => (sets(i) ? [`if ${rows[i]!.source} then (${r.set![name]})`] : []));
              const ast = collectReadsTree(asts, trees, name);
              return Object.freeze({ kind: 'set_variable' as const, name, value: `collect [${items.join(', ')}]`, ast, untracked: true as const });
            }
            const branches = s.rows.map((r, i) => `if ${rows[i]!.source} then ${sets(i) ? `(${r.set![name]})` : 'null'} else `);
            return Object.freeze({ kind: 'set_variable' as const, name, value: `${branches.join('')}null`, ast: firstValueTree(asts, trees, name) });
          });
          infos.set(id, Object.freeze({ type: 'action', id, name: p.name, actions: Object.freeze(actions), nextStep: s.next_step!, table: origin }));
        }
        break;
      }
      case 'call': {
        // Calls between rulesets (EXTENSIONS.md 3): the callee is looked up when the step runs.
        const keys = s.input === undefined ? null : Object.keys(s.input);
        const parsed = (keys ?? []).map((key) => expr(joinKey(`${at}.input`, key)));
        p.call = Object.freeze(
          new PlanCall(
            s.ruleset,
            s.result,
            keys,
            parsed.map((e) => e.fn),
          ),
        );
        p.next = target(s.next_step);
        const input = keys === null ? null : Object.freeze(keys.map((key, i) => Object.freeze({ key, expression: parsed[i]!.source, ast: parsed[i]!.ast })));
        infos.set(id, Object.freeze({ type: 'call', id, name: p.name, ruleset: s.ruleset, input, result: s.result, nextStep: s.next_step }));
        break;
      }
      default:
        return assertNever(s);
    }
  }
  for (const p of byId.values()) Object.freeze(p);
  for (const p of nodes) Object.freeze(p);

  const config = rdoc.config;
  const { ops, opNodes } = encodePlan(target(config.entry_step), [...byId.values(), ...nodes]);
  // NOTE (speed, bench/NOTES.md "Eighth session"): the fields every execution reads first
  // (`ops`, `timeoutMs`, `usesNow`, `hasVariables`), so that a plan fetched from memory serves
  // them from its first cache line.
  const plan: ExecutionPlan = Object.freeze({
    // NOTE (speed): not frozen: V8 reads the elements of a frozen array through a slow generic
    // path in optimized code (about 4x slower per read); nothing writes them after this.
    ops,
    timeoutMs: config.timeout_ms ?? -1,
    // Dates (EXTENSIONS.md 3): known here so that executions of other rulesets skip now()'s setup.
    // A callee may read now(): a ruleset with calls starts the execution's time too.
    usesNow: [...exprs.values()].some((e) => callsNow(e.ast)) || ids.some((id) => rdoc.steps[id]!.type === 'call'),
    hasVariables: analysis.hasVariables,
    opNodes,
    entry: target(config.entry_step),
    steps: Object.freeze([...byId.values()]),
    name: config.name,
  });
  return Object.freeze(
    new Compiled(
      plan,
      analysis.inputSchema,
      // Reference data (EXTENSIONS.md 3): the datasets read, so other rulesets skip the snapshot.
      // NOTE (speed, bench/NOTES.md "Many rulesets"): every execution reads both lengths; empty
      // ones are one shared array, not two more objects per ruleset to fetch from memory.
      sharedIfEmpty([...[...exprs.values()].reduce((out, e) => datasetNames(e.ast, out), new Set<string>())].sort()),
      sharedIfEmpty(
        [
          ...new Set(
            ids.flatMap((id) => {
              const st = rdoc.steps[id]!;
              return st.type === 'call' ? [st.ruleset] : [];
            }),
          ),
        ].sort(),
      ),
      config.name,
      config.version ?? DEFAULT_VERSION,
      config.description ?? null,
      analysis.fieldMissing,
      config.timeout_ms,
      config.entry_step,
      ids.length,
      rdoc,
      analysis.hasVariables,
      infos,
      new DerivedValues(),
    ),
  );
}

/**
 * The one implementation of `CompiledRuleset` (frozen by `compileRuleset`).
 *
 * NOTE (speed, bench/NOTES.md "Seventh session"): a class, not an object literal with a `graph`
 * getter: V8 gave every such literal a dictionary of its own properties (frozen with an
 * accessor), so each execution's loads of `_plan`, `inputSchema`, `datasets` and `calls` were
 * megamorphic hash lookups in a table of ~100 slots per ruleset, cold when traffic spreads over
 * many rulesets. Instances of this class share one map; the lazy graph is a private field, which
 * freezing does not touch.
 */
class Compiled implements CompiledRuleset {
  #graph: RulesetGraph | undefined = undefined;

  // NOTE (speed): the fields every execution reads come first (parameter properties become
  // fields in this order), so that a ruleset's object that must be fetched from memory serves
  // them from its first cache line.
  constructor(
    readonly _plan: ExecutionPlan,
    readonly inputSchema: InputSchema | null,
    readonly datasets: readonly string[],
    readonly calls: readonly string[],
    readonly name: string,
    readonly version: string,
    readonly description: string | null,
    readonly fieldMissing: FieldMissing,
    readonly timeoutMs: number | undefined,
    readonly entryStep: string,
    readonly stepCount: number,
    readonly doc: RulesetDoc,
    readonly hasVariables: boolean,
    readonly steps: ReadonlyMap<string, StepInfo>,
    readonly derived: DerivedValues,
  ) {}

  /**
   * NOTE (start time and memory, bench/NOTES.md "Many rulesets"): built on first use (analysis,
   * filter, diff), not for every loaded ruleset; executions never read it.
   */
  get graph(): RulesetGraph {
    return (this.#graph ??= buildGraph(this.steps, this.entryStep));
  }
}

const NO_NAMES: readonly string[] = Object.freeze([]);

/** `names` frozen, or the one shared empty array. */
function sharedIfEmpty(names: string[]): readonly string[] {
  return names.length === 0 ? NO_NAMES : Object.freeze(names);
}

/**
 * Links a decision head into its branch chain: head tests branch 0, its `else` is a node testing
 * branch 1, and so on; the last `else` is `default_next` or a NO_MATCH node. A decision without
 * branches keeps the head's NEVER test, so it goes straight to its `else`. New nodes go to `out`.
 */
function linkDecision(head: PlanNode, branches: ReadonlyArray<{ fn: PlanNode['test']; then: PlanNode }>, fallback: PlanNode | null, out: PlanNode[]): void {
  const last = fallback ?? new PlanNode(NO_MATCH, head.id, head.name, true, -1);
  if (fallback === null) out.push(last);
  let node = head;
  branches.forEach((b, i) => {
    if (i > 0) {
      const next = new PlanNode(DECISION, head.id, head.name, true, i);
      out.push(next);
      node.else = next;
      node = next;
    }
    node.test = b.fn;
    node.then = b.then;
  });
  node.else = last;
}
