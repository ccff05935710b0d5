/**
 * Syntax tree of the expression language (DECISIONS.md 2). Every node carries `pos`, the
 * 0-based character offset of its first character in the source, for error messages.
 *
 * This file is the contract between the parser, the compiler, `render`, the ruleset validator
 * and the filter's partial evaluator: change it only together with all of them.
 */

/** Any JSON value (what a literal, a path or an expression can produce). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Binary operators, lowest to highest precedence group: `||`; `&&`; `== !=`; `< <= > >=`; `in not in`; `+ -`; `* / %`. */
export type BinaryOp = '||' | '&&' | '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'not in' | '+' | '-' | '*' | '/' | '%';

/** Unary operators. */
export type UnaryOp = '!' | '-';

/** A literal `12`, `-3` (folded), `"s"`, `true`, `false`, `null`. */
export interface LiteralNode {
  readonly kind: 'literal';
  readonly value: null | boolean | number | string;
  readonly pos: number;
}

/** An array literal `[a, b]` (elements are any expressions). */
export interface ArrayNode {
  readonly kind: 'array';
  readonly items: readonly Node[];
  readonly pos: number;
}

/**
 * A field path. `scope: 'input'` reads the input (`user.age`, `items[0].price`);
 * `scope: 'var'` reads a variable set by an action step (`$discount`, `$d.x`), where
 * `segments[0]` is the variable name; `scope: 'data'` reads a reference dataset of the tenant
 * (`@high_risk.countries`, EXTENSIONS.md 3), where `segments[0]` is the dataset name. Segments
 * are object keys (string) or array indices (non-negative integer).
 */
export interface PathNode {
  readonly kind: 'path';
  readonly scope: 'input' | 'var' | 'data';
  readonly segments: readonly (string | number)[];
  readonly pos: number;
}

/** `!x` or `-x`. */
export interface UnaryNode {
  readonly kind: 'unary';
  readonly op: UnaryOp;
  readonly operand: Node;
  readonly pos: number;
}

/** `left op right`. */
export interface BinaryNode {
  readonly kind: 'binary';
  readonly op: BinaryOp;
  readonly left: Node;
  readonly right: Node;
  readonly pos: number;
}

/** `if cond then a else b`. */
export interface IfNode {
  readonly kind: 'if';
  readonly cond: Node;
  readonly then: Node;
  readonly else: Node;
  readonly pos: number;
}

/** A call of a built-in function `name(args...)`. */
export interface CallNode {
  readonly kind: 'call';
  readonly name: string;
  readonly args: readonly Node[];
  readonly pos: number;
}

/** Any expression node. Switch on `kind` exhaustively. */
export type Node = LiteralNode | ArrayNode | PathNode | UnaryNode | BinaryNode | IfNode | CallNode;
