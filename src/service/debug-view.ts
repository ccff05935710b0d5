/**
 * The debug view of a compiled ruleset (`--debug-mode`, DECISIONS.md 3): every expression of
 * every step as written and as parsed, the syntax tree rendered in the prefix form of `/eval`'s
 * `parsed` (src/expr render), e.g. `user.age >= 18` → `(>= user.age 18)`. Steps and output
 * expressions are arrays in document order (no user text becomes an object key).
 */
import type { JsonValue } from '../expr/ast.js';
import { render } from '../expr/index.js';
import type { CompiledRuleset, StepInfo } from '../ruleset/index.js';

/** An expression as written and its rendered syntax tree. */
export interface DebugExpression {
  /** The source text. */
  readonly expression: string;
  /** The syntax tree in prefix form. */
  readonly parsed: string;
}

/** One step of the debug view. */
export type DebugStep =
  | {
      readonly id: string;
      readonly name: string;
      readonly type: 'decision';
      readonly branches: ReadonlyArray<{ readonly condition: string; readonly parsed: string; readonly next_step: string }>;
      readonly default_next: string | null;
    }
  | {
      readonly id: string;
      readonly name: string;
      readonly type: 'action';
      readonly actions: ReadonlyArray<
        | { readonly action: 'set_variable'; readonly name: string; readonly value: string; readonly parsed: string }
        | { readonly action: 'log'; readonly message: string; readonly level: string }
      >;
      readonly next_step: string;
    }
  | {
      readonly id: string;
      readonly name: string;
      readonly type: 'terminal';
      readonly result: { readonly code: string; readonly message: string; readonly [key: string]: JsonValue };
      readonly output: ReadonlyArray<DebugExpression & { readonly key: string }>;
    }
  | {
      readonly id: string;
      readonly name: string;
      readonly type: 'call';
      readonly ruleset: string;
      /** The callee's input expressions; null: the caller's whole input. */
      readonly input: ReadonlyArray<DebugExpression & { readonly key: string }> | null;
      readonly result: string;
      readonly next_step: string;
    };

/** Answer of `GET /api/v1/debug/rulesets/:name`. */
export interface DebugRuleset {
  readonly name: string;
  readonly version: string;
  readonly description: string | null;
  readonly entry_step: string;
  readonly field_missing: string;
  readonly steps: readonly DebugStep[];
}

/** Builds the debug view of `compiled`. */
export function debugView(compiled: CompiledRuleset): DebugRuleset {
  return {
    name: compiled.name,
    version: compiled.version,
    description: compiled.description,
    entry_step: compiled.entryStep,
    field_missing: compiled.fieldMissing,
    steps: Array.from(compiled.steps.values(), debugStep),
  };
}

function debugStep(step: StepInfo): DebugStep {
  switch (step.type) {
    case 'decision':
      return {
        id: step.id,
        name: step.name,
        type: 'decision',
        branches: step.branches.map((b) => ({ condition: b.condition, parsed: render(b.ast), next_step: b.nextStep })),
        default_next: step.defaultNext,
      };
    case 'action':
      return {
        id: step.id,
        name: step.name,
        type: 'action',
        actions: step.actions.map((a) =>
          a.kind === 'set_variable'
            ? { action: 'set_variable' as const, name: a.name, value: a.value, parsed: render(a.ast) }
            : { action: 'log' as const, message: a.message, level: a.level },
        ),
        next_step: step.nextStep,
      };
    case 'terminal':
      return {
        id: step.id,
        name: step.name,
        type: 'terminal',
        // The static keys never include code and message (compile takes those out).
        result: { code: step.code, message: step.message, ...step.staticOutput },
        output: step.output.map((o) => ({ key: o.key, expression: o.expression, parsed: render(o.ast) })),
      };
    case 'call':
      return {
        id: step.id,
        name: step.name,
        type: 'call',
        ruleset: step.ruleset,
        input: step.input === null ? null : step.input.map((a) => ({ key: a.key, expression: a.expression, parsed: render(a.ast) })),
        result: step.result,
        next_step: step.nextStep,
      };
    default:
      return assertNever(step);
  }
}

function assertNever(x: never): never {
  throw new Error(`internal: unexpected step ${JSON.stringify(x)}`);
}
