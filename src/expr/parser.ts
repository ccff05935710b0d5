/**
 * Recursive-descent parser of the expression language (DECISIONS.md 2), producing the syntax
 * tree of ast.ts. Besides the infix language it reads the prefix form `(op a b)` that `render`
 * writes, so `parse(render(ast))` gives `ast` back (modulo `pos`). Throws only `ExprSyntaxError`.
 *
 * Whitespace rule: no whitespace inside a path (`a.b[0]`) or between a function name and its `(`.
 * That is what lets prefix operands sit side by side: in `(in x [1, 2])` the `[` after a space
 * starts a new operand instead of indexing `x`.
 */
import type { BinaryOp, Node, PathNode } from './ast.js';
import { ExprSyntaxError } from './errors.js';
import { FUNCTIONS, isFunctionName } from './functions.js';
import { KEYWORDS, tokenize, type Token } from './lexer.js';
import { MAX_EXPRESSION_LENGTH, MAX_NESTING_DEPTH } from './limits.js';

/** A binary operator found at a token index, with its precedence level and token count. */
interface OpMatch {
  readonly op: BinaryOp;
  readonly level: number;
  readonly width: 1 | 2;
}

/** Precedence levels, lowest first (DECISIONS.md 2): `||`; `&&`; `== !=`; `< <= > >=`; `in not in`; `+ -`; `* / %`. */
const LEVELS: Readonly<Record<string, number>> = {
  '||': 0,
  '&&': 1,
  '==': 2,
  '!=': 2,
  '<': 3,
  '<=': 3,
  '>': 3,
  '>=': 3,
  in: 4,
  'not in': 4,
  '+': 5,
  '-': 5,
  '*': 6,
  '/': 6,
  '%': 6,
};

/**
 * Parses an expression into its syntax tree. Enforces the length and nesting limits (limits.ts)
 * and the static checks: unknown function, wrong argument count, `exists` of a non-path.
 */
export function parse(source: string): Node {
  if (typeof source !== 'string') throw new TypeError('expression must be a string');
  if (source.length > MAX_EXPRESSION_LENGTH) {
    throw new ExprSyntaxError('TOO_LONG', `expression is too long (${source.length} characters, limit ${MAX_EXPRESSION_LENGTH})`, MAX_EXPRESSION_LENGTH);
  }
  const parser = new Parser(tokenize(source));
  const node = parser.parseExpression();
  parser.expectEnd();
  return node;
}

/** Short description of a token for `unexpected …` messages. */
function describe(tok: Token): string {
  if (tok.kind === 'eof') return 'end of expression';
  if (tok.kind === 'var') return `'$${tok.text}'`;
  if (tok.kind === 'data') return `'@${tok.text}'`;
  const text = tok.text.length > 24 ? `${tok.text.slice(0, 24)}…` : tok.text;
  return `'${text}'`;
}

class Parser {
  private i = 0;
  private depth = 0;

  constructor(private readonly tokens: readonly Token[]) {}

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)]!;
  }

  private next(): Token {
    const tok = this.tokens[this.i]!;
    if (tok.kind !== 'eof') this.i++;
    return tok;
  }

  private unexpected(tok: Token): never {
    if (tok.kind === 'eof') throw new ExprSyntaxError('UNEXPECTED_END', 'unexpected end of expression', tok.pos);
    throw new ExprSyntaxError('UNEXPECTED_TOKEN', `unexpected ${describe(tok)}`, tok.pos);
  }

  private isOp(tok: Token, text: string): boolean {
    return tok.kind === 'op' && tok.text === text;
  }

  private isWord(tok: Token, word: string): boolean {
    return tok.kind === 'ident' && tok.text === word;
  }

  private expectOp(text: string): Token {
    const tok = this.peek();
    if (!this.isOp(tok, text)) this.unexpected(tok);
    return this.next();
  }

  private expectWord(word: string): void {
    const tok = this.peek();
    if (!this.isWord(tok, word)) this.unexpected(tok);
    this.next();
  }

  /** Opens one nesting level (see limits.ts for what counts). */
  private enter(pos: number): void {
    if (++this.depth > MAX_NESTING_DEPTH) {
      throw new ExprSyntaxError('TOO_DEEP', `expression is nested too deeply (limit ${MAX_NESTING_DEPTH})`, pos);
    }
  }

  private leave(): void {
    this.depth--;
  }

  /** Fails unless every token has been read. */
  expectEnd(): void {
    const tok = this.peek();
    if (tok.kind !== 'eof') this.unexpected(tok);
  }

  /** The binary operator starting at the current token, if any. */
  private binaryOpHere(): OpMatch | null {
    const tok = this.peek();
    if (tok.kind === 'op') {
      const level = LEVELS[tok.text];
      return level === undefined ? null : { op: tok.text as BinaryOp, level, width: 1 };
    }
    if (this.isWord(tok, 'in')) return { op: 'in', level: 4, width: 1 };
    if (this.isWord(tok, 'not') && this.isWord(this.peek(1), 'in')) return { op: 'not in', level: 4, width: 2 };
    return null;
  }

  // expression := binary(0)
  /** Parses a full expression (lowest precedence). */
  parseExpression(): Node {
    return this.parseBinaryRest(this.parseUnary(), 0);
  }

  // binary(L) := unary ( OP(level >= L) binary(level + 1) )*     -- all binary operators are left-associative
  //   levels: 0 '||' | 1 '&&' | 2 '==' '!=' | 3 '<' '<=' '>' '>=' | 4 'in' 'not' 'in' | 5 '+' '-' | 6 '*' '/' '%'
  private parseBinaryRest(left: Node, minLevel: number): Node {
    for (;;) {
      const m = this.binaryOpHere();
      if (m === null || m.level < minLevel) return left;
      this.i += m.width;
      const right = this.parseBinaryRest(this.parseUnary(), m.level + 1);
      left = { kind: 'binary', op: m.op, left, right, pos: left.pos };
    }
  }

  // unary := '!' unary | '-' NUMBER | '-' unary | primary
  // NOTE: `-` directly before a number literal is folded into a negative literal (ast.ts: `-3`).
  private parseUnary(): Node {
    const tok = this.peek();
    if (this.isOp(tok, '!') || this.isOp(tok, '-')) {
      this.next();
      const operandTok = this.peek();
      if (tok.text === '-' && operandTok.kind === 'number') {
        this.next();
        return { kind: 'literal', value: -(operandTok.value as number), pos: tok.pos };
      }
      this.enter(tok.pos);
      const operand = this.parseUnary();
      this.leave();
      return { kind: 'unary', op: tok.text as '!' | '-', operand, pos: tok.pos };
    }
    return this.parsePrimary();
  }

  // primary := NUMBER | STRING | 'true' | 'false' | 'null' | array | group | if | call | path
  private parsePrimary(): Node {
    const tok = this.peek();
    switch (tok.kind) {
      case 'number':
      case 'string':
        this.next();
        return { kind: 'literal', value: tok.value, pos: tok.pos };
      case 'var':
      case 'data':
        return this.parsePath();
      case 'ident': {
        if (tok.text === 'true' || tok.text === 'false') {
          this.next();
          return { kind: 'literal', value: tok.text === 'true', pos: tok.pos };
        }
        if (tok.text === 'null') {
          this.next();
          return { kind: 'literal', value: null, pos: tok.pos };
        }
        if (tok.text === 'if') return this.parseIf();
        if (KEYWORDS.has(tok.text)) this.unexpected(tok);
        const after = this.peek(1);
        if (this.isOp(after, '(') && after.pos === tok.end) return this.parseCall();
        return this.parsePath();
      }
      case 'op':
        if (tok.text === '(') return this.parseGroup();
        if (tok.text === '[') return this.parseArray();
        if (tok.text === '.') return this.parsePath();
        return this.unexpected(tok);
      case 'eof':
        return this.unexpected(tok);
    }
  }

  // path := ( IDENT | VAR | DATA | '.' member ) ( '.' member | '[' index ']' )*     -- no whitespace inside
  // member := IDENT | KEYWORD
  // index := NUMBER (a non-negative integer) | STRING
  private parsePath(): PathNode {
    const first = this.next();
    const segments: (string | number)[] = [];
    let scope: 'input' | 'var' | 'data' = 'input';
    let end = first.end;
    if (first.kind === 'var' || first.kind === 'data') {
      scope = first.kind;
      segments.push(first.text);
    } else if (first.kind === 'ident') {
      segments.push(first.text);
    } else {
      // Root-anchored path `.key`, `.["odd key"]`, `.[0]`: the leading `.` must be followed by a segment.
      end = this.parseSegment(first, segments, true);
    }
    for (;;) {
      const tok = this.peek();
      if (tok.pos !== end || !(this.isOp(tok, '.') || this.isOp(tok, '['))) break;
      this.next();
      end = this.parseSegment(tok, segments, false);
    }
    return { kind: 'path', scope, segments, pos: first.pos };
  }

  /** Reads the segment introduced by `intro` (`.` or `[`, already consumed); returns its end offset. */
  private parseSegment(intro: Token, segments: (string | number)[], leadingDot: boolean): number {
    if (intro.text === '.') {
      const tok = this.peek();
      if (leadingDot && this.isOp(tok, '[') && tok.pos === intro.end) {
        this.next();
        return this.parseSegment(tok, segments, false);
      }
      if (tok.kind !== 'ident' || tok.pos !== intro.end) this.unexpected(tok);
      this.next();
      segments.push(tok.text);
      return tok.end;
    }
    const tok = this.next();
    if (tok.kind === 'string') {
      segments.push(tok.value as string);
    } else if (tok.kind === 'number') {
      const n = tok.value as number;
      if (!Number.isSafeInteger(n)) throw new ExprSyntaxError('INVALID_NUMBER', `invalid array index '${tok.text}'`, tok.pos);
      segments.push(n);
    } else {
      this.unexpected(tok);
    }
    return this.expectOp(']').end;
  }

  // call := NAME '(' ( expression ( ',' expression )* )? ')'     -- NAME directly followed by '('
  private parseCall(): Node {
    const name = this.next();
    if (!isFunctionName(name.text)) {
      throw new ExprSyntaxError('UNKNOWN_FUNCTION', `unknown function '${name.text}'`, name.pos);
    }
    const open = this.next();
    this.enter(open.pos);
    const args = this.parseList(')');
    this.leave();
    const arity = FUNCTIONS[name.text]!;
    if (args.length < arity.minArgs || args.length > arity.maxArgs) {
      const count =
        arity.maxArgs === Infinity
          ? `at least ${arity.minArgs} argument${arity.minArgs === 1 ? '' : 's'}`
          : `${arity.minArgs} argument${arity.minArgs === 1 ? '' : 's'}`;
      throw new ExprSyntaxError('WRONG_ARGUMENT_COUNT', `${name.text} expects ${count}, got ${args.length}`, name.pos);
    }
    if (name.text === 'exists' && args[0]!.kind !== 'path') {
      throw new ExprSyntaxError('INVALID_ARGUMENT', 'exists expects a field path', args[0]!.pos);
    }
    return { kind: 'call', name: name.text, args, pos: name.pos };
  }

  // list(close) := ( expression ( ',' expression )* )? close
  private parseList(close: ')' | ']'): Node[] {
    const items: Node[] = [];
    if (this.isOp(this.peek(), close)) {
      this.next();
      return items;
    }
    for (;;) {
      items.push(this.parseExpression());
      const tok = this.next();
      if (this.isOp(tok, close)) return items;
      if (!this.isOp(tok, ',')) this.unexpected(tok);
    }
  }

  // array := '[' ( expression ( ',' expression )* )? ']'
  private parseArray(): Node {
    const open = this.next();
    this.enter(open.pos);
    const items = this.parseList(']');
    this.leave();
    return { kind: 'array', items, pos: open.pos };
  }

  // if := 'if' expression 'then' expression 'else' expression      -- the else branch extends as far right as possible
  private parseIf(): Node {
    const tok = this.next();
    this.enter(tok.pos);
    const cond = this.parseExpression();
    this.expectWord('then');
    const then = this.parseExpression();
    this.expectWord('else');
    const otherwise = this.parseExpression();
    this.leave();
    return { kind: 'if', cond, then, else: otherwise, pos: tok.pos };
  }

  // group := '(' expression ')'
  //        | '(' BINOP unary unary ')'          -- prefix form written by render; BINOP is any binary operator but '-'
  //        | '(' '-' unary unary ')'            -- prefix minus: read when the infix reading `-x …` cannot continue
  private parseGroup(): Node {
    const open = this.next();
    // NOTE (round trip, DECISIONS.md 2 limits): render writes `!x` as `(! x)` and `if` as
    // `(if …)`; a group opened by `!` or `if` is that construct's level (it counts itself), so
    // the rendered text of any accepted expression is not deeper than its source.
    const counted = !this.opensLevel(this.peek());
    if (counted) this.enter(open.pos);
    let node: Node;
    const m = this.binaryOpHere();
    if (m !== null && m.op !== '-') {
      this.i += m.width;
      const left = this.parseUnary();
      const right = this.parseUnary();
      node = { kind: 'binary', op: m.op, left, right, pos: open.pos };
    } else if (m !== null) {
      node = this.parseMinusGroup(open);
    } else {
      node = this.parseExpression();
    }
    this.expectOp(')');
    if (counted) this.leave();
    return node;
  }

  /** True when `tok` starts a construct that opens its own nesting level (`!`, `if`). */
  private opensLevel(tok: Token): boolean {
    return this.isOp(tok, '!') || (tok.kind === 'ident' && tok.text === 'if');
  }

  /**
   * After `( -`: either prefix subtraction `(- a b)` or an infix expression starting with a
   * negation (`(-a * b)`, `(-3)`). Infix wins whenever it can continue; the prefix reading is
   * taken only when an operand follows the first one directly, which infix never allows.
   */
  private parseMinusGroup(open: Token): Node {
    const minus = this.next();
    const numberNext = this.peek().kind === 'number';
    // NOTE (round trip): `(- x)` is one level, the group's, like `-x` (render writes the latter
    // as the former); the operand is still read one level down.
    const first = this.parseUnary();
    if (this.startsOperand(this.peek())) {
      const right = this.parseUnary();
      return { kind: 'binary', op: '-', left: first, right, pos: open.pos };
    }
    const negated: Node =
      numberNext && first.kind === 'literal'
        ? { kind: 'literal', value: -(first.value as number), pos: minus.pos }
        : { kind: 'unary', op: '-', operand: first, pos: minus.pos };
    return this.parseBinaryRest(negated, 0);
  }

  /** True when `tok` can begin an operand (anything a primary or `!` starts with, but not `-`). */
  private startsOperand(tok: Token): boolean {
    switch (tok.kind) {
      case 'number':
      case 'string':
      case 'var':
      case 'data':
        return true;
      case 'ident':
        return !KEYWORDS.has(tok.text) || ['true', 'false', 'null', 'if'].includes(tok.text);
      case 'op':
        return tok.text === '(' || tok.text === '[' || tok.text === '.' || tok.text === '!';
      case 'eof':
        return false;
    }
  }
}
