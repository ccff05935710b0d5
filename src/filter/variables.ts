/**
 * Variables in filters (EXTENSIONS.md 3 "Variables in filters"): the variables set on one path
 * of the planner's walk, substituted into the conditions, action values and outputs after them.
 *
 * A `set_variable` value is partially evaluated where it runs (with the variables set before it)
 * and its name is bound to the result, replacing an earlier binding (the latest wins). The walk
 * carries one environment per path, so a variable set differently on two paths has a binding of
 * its own on each.
 * - a known value (known fields and known variables fold): read by the engine itself;
 * - a residual over unknown fields (`$s = name`, `$v = if age > 18 then 1 else 2`): substituted
 *   where `$s` is read. Re-evaluating it on the same row gives the value the action computed (the
 *   input does not change), so the substitution is exact. Where the substituted expression is
 *   one no format can write (`$v = score * 2` read by `$v > 100`), the planner falls back: the
 *   residual variables are read as untracked there (`withoutResiduals`);
 * - untracked (the fallback, `opaque`): the value reads a variable that is itself untracked.
 *   A condition on it is "either way" and the answer is not `exact` (docs/filter.md).
 * A variable with no binding is unset on this path: null when lenient, a failure when strict.
 *
 * NOTE (tables): a `set` decision table reaches the planner as an action step (ruleset/table.ts):
 * a `first` table's values are if-chains over its rows, bound like any value; a `collect`
 * table's are marked untracked and bound as such (`bind(name, r, true)`).
 *
 * `key` names the state: two environments with the same key hold the same values on every row
 * (an untracked binding is keyed by its residual and the state it was made in). The planner uses
 * it for cycles: coming back to a step with the same key, the engine would loop.
 */
import type { JsonValue } from '../expr/ast.js';
import { renderPath, type Vars } from '../expr/index.js';
import { readsVariable, type KnownInput, type Residual, type StructLeaf, type VarBinding, type VarScope } from './partial-eval.js';

interface Entry {
  readonly binding: VarBinding;
  /** Identifies what the binding holds (see `VarEnv.key`). */
  readonly key: string;
}

const OPAQUE: VarBinding = Object.freeze({ kind: 'opaque' });

/**
 * Deepest nesting of `if` forms in condition position a substituted residual may have.
 * NOTE (speed): a condition distributes an `if` (`(if c then a else b) == v`) and builds both
 * ways of `c`; an `if` inside `c` doubles that, so a value that feeds itself through a loop
 * (`$n = if $n == 10 then 17 else age`) grows the work 2^k with the iterations k. Past this depth
 * the value is bound untracked (the documented fallback: exact false); if-chains in `else`
 * position (a `first` table's values) do not count.
 */
const MAX_COND_NESTING = 4;

/** The deepest nesting of `if` forms inside `if` conditions in `r`. */
function condNesting(r: Residual): number {
  switch (r.kind) {
    case 'if':
      return Math.max(1 + condNesting(r.cond), condNesting(r.then), condNesting(r.else));
    case 'unary':
      return condNesting(r.operand);
    case 'binary':
      return Math.max(condNesting(r.left), condNesting(r.right));
    case 'array':
      return r.items.reduce((m, x) => Math.max(m, condNesting(x)), 0);
    case 'call':
      return r.args.reduce((m, x) => Math.max(m, condNesting(x)), 0);
    default:
      return 0;
  }
}

/** Numbers the struct bindings whose state has no key of its own (see `bindStruct`). */
let structSeq = 0;

/** The variables set on a path (immutable: `bind` returns a new environment). */
export class VarEnv implements VarScope {
  /** No variable set. */
  static readonly EMPTY = new VarEnv(new Map());

  private valuesCache: Vars | undefined;
  private keyCache: string | undefined;

  private constructor(private readonly entries: ReadonlyMap<string, Entry>) {}

  get(name: string): VarBinding | undefined {
    return this.entries.get(name)?.binding;
  }

  /** The value-bound variables as the engine's variables object. */
  values(): Vars {
    if (this.valuesCache === undefined) {
      const out = Object.create(null) as Vars;
      for (const [name, e] of this.entries) {
        if (e.binding.kind === 'value') out[name] = e.binding.value;
        else if (e.binding.kind === 'struct') out[name] = e.binding.skeleton; // its leaves are never read from here (partial-eval.ts)
      }
      this.valuesCache = out;
    }
    return this.valuesCache;
  }

  /**
   * Binds `name` to the partial evaluation of its value (replacing an earlier binding); with
   * `untracked`, as untracked whatever it is (a collect table's value: step-info.ts).
   */
  bind(name: string, r: Residual, untracked = false): VarEnv {
    if (untracked) return this.with(name, { binding: OPAQUE, key: `o${JSON.stringify(r)}@${this.key}` });
    if (r.kind === 'value') return this.with(name, { binding: { kind: 'value', value: r.value }, key: `v${JSON.stringify(r.value)}` });
    // A value that reads an untracked variable (or is known to fail: the path ends there anyway).
    // NOTE (key): the same residual in the same state (this key) holds the same value on a row.
    if (r.kind === 'error' || readsVariable(r) || condNesting(r) > MAX_COND_NESTING)
      return this.with(name, { binding: OPAQUE, key: `o${JSON.stringify(r)}@${this.key}` });
    return this.with(name, { binding: { kind: 'residual', residual: r }, key: `r${JSON.stringify(r)}` });
  }

  /**
   * Binds `name` to an object known but for its `leaves` (a call's input or result, planner.ts):
   * `skeleton` holds null at each leaf. Without leaves it is a plain value.
   * NOTE (key): leaves over fields only are keyed by their text; a leaf that reads an untracked
   * variable (a callee's) may hold different values under the same text, so such a binding gets
   * a key of its own: never equal to another, the cycle check then never drops a path on it.
   */
  bindStruct(name: string, skeleton: JsonValue, leaves: readonly StructLeaf[]): VarEnv {
    if (leaves.length === 0) return this.bind(name, { kind: 'value', value: skeleton });
    const key = leaves.some((l) => readsVariable(l.residual) || l.residual.kind === 'error')
      ? `s#${++structSeq}`
      : `s${JSON.stringify(skeleton)}${JSON.stringify(leaves)}`;
    return this.with(name, { binding: { kind: 'struct', skeleton, leaves }, key });
  }

  /** True when some variable is bound to a residual (a struct's leaves included). */
  hasResiduals(): boolean {
    for (const e of this.entries.values()) if (e.binding.kind === 'residual' || e.binding.kind === 'struct') return true;
    return false;
  }

  /** The same environment with the residual bindings read as untracked (the fallback; a struct keeps its known part). */
  withoutResiduals(): VarEnv {
    const out = new Map<string, Entry>();
    for (const [name, e] of this.entries) {
      const b = e.binding;
      if (b.kind === 'residual') out.set(name, { binding: OPAQUE, key: e.key });
      else if (b.kind === 'struct') {
        const leaves = b.leaves.map((l) => ({
          path: l.path,
          residual: { kind: 'var', path: renderPath({ scope: 'var', segments: [name, ...l.path] }) } as Residual,
        }));
        out.set(name, { binding: { kind: 'struct', skeleton: b.skeleton, leaves }, key: e.key });
      } else out.set(name, e);
    }
    return new VarEnv(out);
  }

  /** Names the state (see the module comment). Length-prefixed: unambiguous, no escaping. */
  get key(): string {
    if (this.keyCache === undefined) {
      const names = [...this.entries.keys()].sort();
      this.keyCache = names.map((n) => `${n.length}:${n}${this.entries.get(n)!.key.length}:${this.entries.get(n)!.key}`).join('');
    }
    return this.keyCache;
  }

  private with(name: string, entry: Entry): VarEnv {
    const out = new Map(this.entries);
    out.set(name, entry);
    return new VarEnv(out);
  }
}

/** `known` with the variables of `env`. */
export function knownWith(known: KnownInput, env: VarEnv): KnownInput {
  return { root: known.root, fieldMissing: known.fieldMissing, memo: known.memo, vars: env };
}
