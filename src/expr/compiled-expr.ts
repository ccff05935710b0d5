/**
 * The types of a compiled expression, shared by the compiler (compile.ts) and its
 * shape-specific helpers (compile-path.ts, compile-compare.ts, compile-ops.ts), which therefore
 * do not import the compiler back.
 */
import type { JsonValue } from './ast.js';

/** Variables set by action steps, read as `$name`. */
export type Vars = Record<string, JsonValue>;

/** A compiled expression: evaluates against an input and the variables (null when none are set). */
export type CompiledExpr = (input: unknown, vars: Vars | null) => JsonValue;
