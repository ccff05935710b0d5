/**
 * Short infix renderings of residual expressions, for the messages of conditions no format can
 * express (condition.ts). No behaviour of its own.
 */
import type { Residual } from './partial-eval.js';
import { isArithmetic } from './guard.js';

/**
 * Why `left op right` cannot be expressed, for the 500 message. NOTE: the text is also the
 * identity of the `unsupported` condition (predicate.ts `keyOf`): the simplifier merges a path
 * where it holds with one where its negation holds, so two different conditions must never get
 * the same text (`a == b` and `a >= b` once did, and `a == b` to A, else `a >= b` to B, else A
 * filtered as "always A").
 */
export function describeComparison(op: string, left: Residual, right: Residual): string {
  const whole = show({ kind: 'binary', op: op as '==', left, right });
  if (left.kind === 'field' && right.kind === 'field') return `comparison between two unknown fields '${left.path}' and '${right.path}' in ${whole}`;
  if (isArithmetic(left) || isArithmetic(right)) return `arithmetic on unknown fields in ${whole}`;
  const fn = left.kind === 'call' ? left : right.kind === 'call' ? right : null;
  if (fn !== null) return `function ${show(fn)} on unknown fields in ${whole}`;
  return `'${whole}'`;
}

/** Short infix rendering of a residual, for error messages. */
export function show(r: Residual): string {
  switch (r.kind) {
    case 'value':
      return JSON.stringify(r.value);
    case 'error':
      return '<error>';
    case 'field':
    case 'var':
      return r.path;
    case 'unary':
      return `${r.op}${show(r.operand)}`;
    case 'binary':
      return `(${show(r.left)} ${r.op} ${show(r.right)})`;
    case 'array':
      return `[${r.items.map(show).join(', ')}]`;
    case 'if':
      return `(if ${show(r.cond)} then ${show(r.then)} else ${show(r.else)})`;
    case 'call':
      return `${r.name}(${r.args.map(show).join(', ')})`;
  }
}
