/**
 * Renders a syntax tree in the fully parenthesised prefix form of DECISIONS.md 2, e.g.
 * `(&& (>= user.age 18) (in user.country ["US", "CA"]))`. The parser reads this form back:
 * `parse(render(ast))` equals `ast` except for `pos` (property-tested).
 *
 * Forms: literals as JSON (`-3`, `"a\n"`), arrays `[a, b]`, paths `a.b[0]`, `a["odd key"]`,
 * `$v.x`, `.["odd key"]` (root key that is not an identifier), unary `(! x)` / `(- x)`, binary
 * `(op l r)`, `(if c then a else b)`, calls `name(a, b)`.
 */
import type { Node, PathNode } from './ast.js';
import { KEYWORDS } from './lexer.js';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Renders a node; throws TypeError for a tree no parser can produce (non-finite number, empty input path). */
export function render(node: Node): string {
  switch (node.kind) {
    case 'literal':
      return renderLiteral(node.value);
    case 'array':
      return `[${node.items.map(render).join(', ')}]`;
    case 'path':
      return renderPath(node);
    case 'unary': {
      const operand = node.operand;
      // NOTE: `(- 3)` would read back as the literal -3 (the parser folds `-` before a number),
      // so a negated non-negative number literal is written `(- (3))`.
      if (node.op === '-' && operand.kind === 'literal' && typeof operand.value === 'number' && !isNegative(operand.value)) {
        return `(- (${render(operand)}))`;
      }
      return `(${node.op} ${render(operand)})`;
    }
    case 'binary': {
      let right = render(node.right);
      // NOTE: in `(- a -3)` the parser would continue the infix reading `-a - 3`; a right operand
      // starting with `-` (a negative literal) is parenthesised: `(- a (-3))`.
      if (node.op === '-' && right.startsWith('-')) right = `(${right})`;
      return `(${node.op} ${render(node.left)} ${right})`;
    }
    case 'if':
      return `(if ${render(node.cond)} then ${render(node.then)} else ${render(node.else)})`;
    case 'call':
      return `${node.name}(${node.args.map(render).join(', ')})`;
  }
}

function isNegative(n: number): boolean {
  return n < 0 || Object.is(n, -0);
}

function renderLiteral(value: null | boolean | number | string): string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`cannot render the number ${value}`);
    return Object.is(value, -0) ? '-0' : String(value);
  }
  return JSON.stringify(value);
}

/** Renders a path as written in the source: `a.b[0]`, `a["odd key"]`, `$v.x`, `@d.x`, `.["odd key"]`. */
export function renderPath(node: Pick<PathNode, 'scope' | 'segments'>): string {
  const segs = node.segments;
  const head = segs[0];
  let out = '';
  let start = 1;
  if (node.scope === 'var') {
    if (typeof head !== 'string' || !IDENTIFIER.test(head)) throw new TypeError(`invalid variable name ${String(head)}`);
    out = `$${head}`;
  } else if (node.scope === 'data') {
    if (typeof head !== 'string' || !IDENTIFIER.test(head)) throw new TypeError(`invalid dataset name ${String(head)}`);
    out = `@${head}`;
  } else if (typeof head === 'string' && IDENTIFIER.test(head) && !KEYWORDS.has(head)) {
    out = head;
  } else if (head === undefined) {
    throw new TypeError('cannot render an empty input path');
  } else {
    start = 0; // root-anchored: `.if`, `.["odd key"]`, `.[0]`
  }
  for (let i = start; i < segs.length; i++) {
    const seg = segs[i]!;
    const dot = i === 0 ? '.' : '';
    if (typeof seg === 'number') {
      if (!Number.isSafeInteger(seg) || seg < 0) throw new TypeError(`invalid array index ${seg}`);
      out += `${dot}[${seg}]`;
    } else if (IDENTIFIER.test(seg)) {
      out += `.${seg}`;
    } else {
      out += `${dot}[${JSON.stringify(seg)}]`;
    }
  }
  return out;
}
