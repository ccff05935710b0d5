/**
 * Compiles a ruleset document once into an immutable `CompiledRuleset`: validated (every problem
 * at once), every expression parsed and compiled with the ruleset's `field_missing`, step
 * targets resolved to direct references, static terminal output precomputed.
 */
import type { JsonValue, Node } from '../expr/ast.js';
import type { ParsedExpression } from './expressions.js';
import { deepFreeze, joinKey, setOwn } from './json.js';
import { DEFAULT_VERSION, type FieldMissing, type RulesetDoc } from './model.js';
import { ACTION, DECISION, LOG, NO_MATCH, PlanAction, PlanNode, SET_VARIABLE, TERMINAL, type ExecutionPlan, type LogLevel } from './plan.js';
import { RulesetValidationError } from './result.js';
import { analyzeRuleset } from './validate.js';

/** A branch of a decision step, for tools (the debug endpoint, the filter planner). */
export interface BranchInfo {
  /** The condition as written. */
  readonly condition: string;
  /** Its syntax tree. */
  readonly ast: Node;
  readonly nextStep: string;
}

/** An action of an action step, for tools. */
export type ActionInfo =
  | { readonly kind: 'set_variable'; readonly name: string; readonly value: string; readonly ast: Node }
  | { readonly kind: 'log'; readonly message: string; readonly level: LogLevel };

/** An output expression of a terminal step, for tools. */
export interface OutputInfo {
  readonly key: string;
  readonly expression: string;
  readonly ast: Node;
}

/** A decision step, resolved. */
export interface DecisionInfo {
  readonly type: 'decision';
  readonly id: string;
  readonly name: string;
  readonly branches: readonly BranchInfo[];
  readonly defaultNext: string | null;
}

/** An action step, resolved. */
export interface ActionStepInfo {
  readonly type: 'action';
  readonly id: string;
  readonly name: string;
  readonly actions: readonly ActionInfo[];
  readonly nextStep: string;
}

/** A terminal step, resolved. */
export interface TerminalInfo {
  readonly type: 'terminal';
  readonly id: string;
  readonly name: string;
  readonly code: string;
  /** `result.message`, default "". */
  readonly message: string;
  /** Static output: the result keys other than code and message (deep-frozen). */
  readonly staticOutput: Readonly<Record<string, JsonValue>>;
  /** Step-level `output` expressions, evaluated at the terminal and merged over `staticOutput`. */
  readonly output: readonly OutputInfo[];
}

/** Any resolved step. Switch on `type`. */
export type StepInfo = DecisionInfo | ActionStepInfo | TerminalInfo;

/** A validated, compiled, immutable ruleset. Build it with `compileRuleset`. */
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

  const ids = Object.keys(rdoc.steps);
  const byId = new Map<string, PlanNode>();
  for (const id of ids) {
    const s = rdoc.steps[id]!;
    const kind = s.type === 'decision' ? DECISION : s.type === 'action' ? ACTION : TERMINAL;
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
        p.actions = Object.freeze(plan);
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
        p.staticKeys = Object.freeze(Object.keys(staticOutput));
        const outKeys = Object.keys(s.output ?? {});
        const parsed = outKeys.map((key) => expr(joinKey(`${at}.output`, key)));
        p.outKeys = Object.freeze(outKeys);
        p.outFns = Object.freeze(parsed.map((e) => e.fn));
        const output = outKeys.map((key, i) => Object.freeze({ key, expression: parsed[i]!.source, ast: parsed[i]!.ast }));
        infos.set(id, Object.freeze({ type: 'terminal', id, name: p.name, code, message: p.message, staticOutput: p.staticOutput, output: Object.freeze(output) }));
        break;
      }
      default:
        return assertNever(s);
    }
  }
  for (const p of byId.values()) Object.freeze(p);
  for (const p of nodes) Object.freeze(p);

  const config = rdoc.config;
  const plan: ExecutionPlan = Object.freeze({
    entry: target(config.entry_step),
    steps: Object.freeze([...byId.values()]),
    hasVariables: analysis.hasVariables,
    timeoutMs: config.timeout_ms ?? -1,
    name: config.name,
  });
  return Object.freeze({
    name: config.name,
    version: config.version ?? DEFAULT_VERSION,
    description: config.description ?? null,
    fieldMissing: analysis.fieldMissing,
    timeoutMs: config.timeout_ms,
    entryStep: config.entry_step,
    stepCount: ids.length,
    doc: rdoc,
    hasVariables: analysis.hasVariables,
    steps: infos,
    _plan: plan,
  });
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

function assertNever(x: never): never {
  throw new Error(`internal: unexpected step ${JSON.stringify(x)}`);
}
