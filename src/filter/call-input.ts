/**
 * A callee seen through a call step with an `input` mapping (EXTENSIONS.md 3 "Calling another
 * ruleset", planner.ts): the callee's steps with every input path rewritten to what it reads in
 * the caller's terms.
 *
 * The callee's input is the object `{k: r_k}` built from the call's arguments. The planner binds
 * it, in the callee's fresh variables, to a reserved variable (`inputVar`, a name the callee does
 * not use) as a struct (variables.ts `bindStruct`): known arguments in its skeleton, residual
 * ones as leaves. An input path of the callee then reads:
 * - `k.rest` where the argument of `k` is itself an input path `p` (`order` → `order.amount`):
 *   the caller's input path `p.rest` (the same value on every row, with the callee's
 *   `field_missing`: a missing `p` reads as the engine reads `null.rest`);
 * - anything else (`k`, `k.rest`, an unmapped key): `$<inputVar>.k.rest`. A known argument and an
 *   unmapped key are read from the skeleton by the engine itself (a missing key: null when
 *   lenient, a failure when strict, as the engine reads the callee's input); `k` with a residual
 *   argument is that residual; below a residual it is untracked (not exact).
 * NOTE: `k` alone is never rewritten to `p`: `exists(k)` is true for a key mapped to a missing
 * field (the callee's input holds null there), `exists(p)` would not be. Except as a whole
 * argument of the callee's own call steps (`{c: "k"}`), where only the value passes on: there it
 * is `p`, so that the next callee's `c.rest` reads `p.rest` too (calls passing an object on).
 * That holds unless `p` could read differently in the callee: when the arguments were evaluated
 * leniently and the callee is strict (a missing `p` would fail there, null in the engine), and
 * the request's known input does not hold `p`. Where it holds `p` (an object of which it knows
 * some fields), `p` cannot be missing, and passing `p` on keeps its other fields columns for
 * the next callee, as they are for the caller; passing the known object itself would make them
 * missing there (`presence`, part of the memo's key).
 *
 * A call step without `input` inside a mapped callee passes on the same input object: its callee
 * is rewritten with the same arguments (and its input variable bound to the same object).
 *
 * Memoized per call step, for the callee version it was built for, in the `callSites` map of the
 * state that owns the call step (the caller's prepared state, prepare.ts, or the enclosing
 * mapped callee): the rewritten syntax trees, their memo and shared conditions are built once per
 * (call step, callee version), not per request; a callee's update replaces its entry, so the
 * state stays one entry per call step.
 */
import type { Node } from '../expr/ast.js';
import { assertNever, type ArgumentInfo, type BranchInfo, type CallInfo, type CompiledRuleset, type FieldMissing, type StepInfo } from '../ruleset/index.js';
import type { Branch } from './condition.js';
import { newExprMemo, type ExprMemo } from './partial-eval.js';

/** The mapped callees of the call steps of one ruleset (or of one mapped callee), by call step. */
export type CallSites = Map<CallInfo, MappedCallee>;

/** The callee's steps in the caller's terms, and their filter state. */
export interface MappedCallee {
  /** The callee version this was built for. */
  readonly callee: CompiledRuleset;
  readonly steps: ReadonlyMap<string, StepInfo>;
  readonly memo: ExprMemo;
  readonly sharedConditions: Map<BranchInfo, Branch>;
  /** The variable the callee's input object is bound to. */
  readonly inputVar: string;
  /** The arguments that build the callee's input, and the `field_missing` they were evaluated with. */
  readonly args: readonly ArgumentInfo[];
  readonly argsFieldMissing: FieldMissing;
  /** The mapped callees of the call steps inside this one. */
  readonly callSites: CallSites;
  /** Which input-path arguments the request's known input holds (`presence`): the rewrite depends on it. */
  readonly presence: string;
}

/** Whether the request's known input holds an input path (partial-eval.ts `isKnownPresent`). */
export type Present = (segments: readonly (string | number)[]) => boolean;

/**
 * `callee` as called by `call`, its input built by `args` (the call's own `input`, or the
 * enclosing mapped callee's for a call without one) evaluated with `argsFieldMissing`; memoized
 * in `sites` (the owner of `call`).
 */
export function mappedCallee(
  sites: CallSites,
  call: CallInfo,
  callee: CompiledRuleset,
  args: readonly ArgumentInfo[],
  argsFieldMissing: FieldMissing,
  present: Present,
): MappedCallee {
  const presence = presenceOf(callee, args, argsFieldMissing, present);
  let m = sites.get(call);
  if (m === undefined || m.callee !== callee || m.presence !== presence) {
    m = build(callee, args, argsFieldMissing, presence);
    sites.set(call, m);
  }
  return m;
}

/**
 * For each argument that is an input path, whether the known input holds it ('1') or not ('0');
 * '' when the rewrite does not depend on it (`passOn` holds for every argument).
 */
function presenceOf(callee: CompiledRuleset, args: readonly ArgumentInfo[], argsFieldMissing: FieldMissing, present: Present): string {
  if (argsFieldMissing === 'strict' || callee.fieldMissing === 'lenient') return '';
  let out = '';
  for (const a of args) out += a.ast.kind === 'path' && a.ast.scope === 'input' && present(a.ast.segments) ? '1' : '0';
  return out;
}

/** A variable name the callee neither sets nor receives a call result in. */
function freeName(callee: CompiledRuleset): string {
  const used = new Set<string>();
  for (const step of callee.steps.values()) {
    if (step.type === 'call') used.add(step.result);
    if (step.type === 'action') for (const a of step.actions) if (a.kind === 'set_variable') used.add(a.name);
  }
  let name = 'in';
  while (used.has(name)) name = `_${name}`;
  return name;
}

function build(callee: CompiledRuleset, argList: readonly ArgumentInfo[], argsFieldMissing: FieldMissing, presence: string): MappedCallee {
  const inputVar = freeName(callee);
  const args = new Map<string, Node>();
  // The keys whose argument is an input path the known input holds (it cannot be missing).
  const held = new Set<string>();
  argList.forEach((a, i) => {
    args.set(a.key, a.ast);
    if (presence[i] === '1') held.add(a.key);
  });
  const rw = (node: Node): Node => rewrite(node, args, inputVar);
  // A whole argument `k` of a nested call is `p` where `k` maps to the input path `p` (see the module comment).
  const passOn = argsFieldMissing === 'strict' || callee.fieldMissing === 'lenient';
  const rwArg = (node: Node): Node => {
    if (node.kind === 'path' && node.scope === 'input' && node.segments.length === 1 && typeof node.segments[0] === 'string') {
      const key = node.segments[0];
      const arg = args.get(key);
      if ((passOn || held.has(key)) && arg !== undefined && arg.kind === 'path' && arg.scope === 'input') return arg;
    }
    return rw(node);
  };
  const steps = new Map<string, StepInfo>();
  for (const [id, step] of callee.steps) steps.set(id, Object.freeze(rewriteStep(step, rw, rwArg)));
  return Object.freeze({
    callee,
    steps,
    memo: newExprMemo(),
    sharedConditions: new Map(),
    inputVar,
    args: argList,
    argsFieldMissing,
    callSites: new Map(),
    presence,
  });
}

function rewriteStep(step: StepInfo, rw: (n: Node) => Node, rwArg: (n: Node) => Node): StepInfo {
  switch (step.type) {
    case 'decision':
      return { ...step, branches: step.branches.map((b) => ({ ...b, ast: rw(b.ast) })) };
    case 'action':
      return { ...step, actions: step.actions.map((a) => (a.kind === 'set_variable' ? { ...a, ast: rw(a.ast) } : a)) };
    case 'terminal':
      return { ...step, output: step.output.map((o) => ({ ...o, ast: rw(o.ast) })) };
    case 'call':
      return { ...step, input: step.input === null ? null : step.input.map((a) => ({ ...a, ast: rwArg(a.ast) })) };
    default:
      return assertNever(step);
  }
}

/** `node` with its input paths read through the call's arguments (see the module comment). */
export function rewrite(node: Node, args: ReadonlyMap<string, Node>, inputVar: string): Node {
  const rw = (n: Node): Node => rewrite(n, args, inputVar);
  switch (node.kind) {
    case 'literal':
      return node;
    case 'array':
      return { ...node, items: node.items.map(rw) };
    case 'unary':
      return { ...node, operand: rw(node.operand) };
    case 'binary':
      return { ...node, left: rw(node.left), right: rw(node.right) };
    case 'if':
      return { ...node, cond: rw(node.cond), then: rw(node.then), else: rw(node.else) };
    case 'call':
      return { ...node, args: node.args.map(rw) };
    case 'path': {
      if (node.scope !== 'input') return node;
      const head = node.segments[0];
      const arg = typeof head === 'string' ? args.get(head) : undefined;
      if (arg !== undefined && node.segments.length > 1 && arg.kind === 'path' && arg.scope === 'input') {
        return { ...node, segments: [...arg.segments, ...node.segments.slice(1)] };
      }
      return { ...node, scope: 'var', segments: [inputVar, ...node.segments] };
    }
    default:
      return assertNever(node);
  }
}
