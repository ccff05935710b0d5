/**
 * fast-check generators for the expression property tests: syntax trees the parser can produce
 * (for the render round-trip), evaluation-oriented trees over a small key vocabulary with
 * matching inputs (for compiled-vs-reference agreement), and token soup (for parser robustness).
 */
import fc from 'fast-check';
import type { BinaryOp, JsonValue, Node } from '../../src/expr/ast.js';
import { FUNCTIONS } from '../../src/expr/functions.js';

const BINARY_OPS: BinaryOp[] = ['||', '&&', '==', '!=', '<', '<=', '>', '>=', 'in', 'not in', '+', '-', '*', '/', '%'];
const IDENTS = ['a', 'b', 'user', 'x_1', '_', 'len', 'Z9'];
const KEYWORDS = ['in', 'not', 'if', 'then', 'else', 'true', 'false', 'null'];

/** Any string, including unicode, control characters and lone surrogates. */
const anyString = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'binary', maxLength: 4 }),
  fc.constantFrom('\ud800', '\udfff', 'a\u0000b', '"\'\\', '\u2028', 'odd key', '0', '12'),
);

const anyNumber = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 1e21, 5e-7, Number.MAX_SAFE_INTEGER),
);

const literal = (value: fc.Arbitrary<null | boolean | number | string>): fc.Arbitrary<Node> =>
  value.map((v) => ({ kind: 'literal', value: v, pos: 0 }) as Node);

interface TreeOptions {
  readonly leafLiteral: fc.Arbitrary<Node>;
  readonly path: fc.Arbitrary<Node & { kind: 'path' }>;
  readonly maxDepth: number;
}

/** Generic tree generator over leaves (literals, paths) and every node kind. */
function tree(o: TreeOptions): fc.Arbitrary<Node> {
  const { node } = fc.letrec<{ node: Node }>((tie) => {
    const sub = tie('node');
    const call = fc.constantFrom(...Object.keys(FUNCTIONS)).chain((name): fc.Arbitrary<Node> => {
      if (name === 'exists') return o.path.map((p) => ({ kind: 'call', name, args: [p], pos: 0 }) as Node);
      const spec = FUNCTIONS[name]!;
      const max = spec.maxArgs === Infinity ? spec.minArgs + 2 : spec.maxArgs;
      return fc.array(sub, { minLength: spec.minArgs, maxLength: max }).map((args) => ({ kind: 'call', name, args, pos: 0 }) as Node);
    });
    return {
      node: fc.oneof(
        { depthSize: 'small', maxDepth: o.maxDepth, withCrossShrink: true },
        o.leafLiteral,
        o.path,
        fc.array(sub, { maxLength: 3 }).map((items) => ({ kind: 'array', items, pos: 0 }) as Node),
        fc.record({ op: fc.constantFrom<'!' | '-'>('!', '-'), operand: sub }).map((r) => ({ kind: 'unary', ...r, pos: 0 }) as Node),
        fc.record({ op: fc.constantFrom(...BINARY_OPS), left: sub, right: sub }).map((r) => ({ kind: 'binary', ...r, pos: 0 }) as Node),
        fc.record({ cond: sub, then: sub, else: sub }).map((r) => ({ kind: 'if', ...r, pos: 0 }) as Node),
        call,
      ),
    };
  });
  return node;
}

/** Paths the parser can produce: any input keys/indices (root form when needed), identifier variables. */
const anyPath: fc.Arbitrary<Node & { kind: 'path' }> = fc.oneof(
  fc
    .tuple(
      fc.oneof(fc.constantFrom(...IDENTS, ...KEYWORDS), anyString, fc.nat({ max: 20 })),
      fc.array(fc.oneof(anyString, fc.constantFrom(...KEYWORDS), fc.nat({ max: 20 })), { maxLength: 3 }),
    )
    .map(([head, rest]) => ({ kind: 'path', scope: 'input', segments: [head, ...rest], pos: 0 }) as const),
  fc
    .tuple(fc.constantFrom(...IDENTS, ...KEYWORDS), fc.array(fc.oneof(anyString, fc.nat({ max: 20 })), { maxLength: 3 }))
    .map(([head, rest]) => ({ kind: 'path', scope: 'var', segments: [head, ...rest], pos: 0 }) as const),
);

/** Syntax trees as the parser produces them (any literal, any path), for the render round-trip. */
export const parsableTree: fc.Arbitrary<Node> = tree({
  leafLiteral: literal(fc.oneof(anyNumber, anyString, fc.boolean(), fc.constant(null))),
  path: anyPath,
  maxDepth: 5,
});

// ---- evaluation-oriented trees and inputs over a small shared vocabulary ----

const KEYS = ['a', 'b', 'c', 'constructor', '__proto__', 'toString', 'length', '0', 'odd key', 'map', 'charAt', 'toFixed'];
const VAR_NAMES = ['d', 'v', 'toString'];
const STRINGS = ['', 'a', 'ab', 'b', 'A', '\uff5e', '😀', ' x '];

const evalPrimitive = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(0.5, -0, 1e308, -1e308, 2.5),
  fc.constantFrom(...STRINGS),
  fc.boolean(),
  fc.constant(null),
);

const evalSegment = fc.oneof(fc.constantFrom(...KEYS), fc.nat({ max: 2 }));

/** Paths over the small vocabulary (input and variables). */
export const evalPath: fc.Arbitrary<Node & { kind: 'path' }> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.array(evalSegment, { minLength: 1, maxLength: 4 }).map((segments) => ({ kind: 'path', scope: 'input', segments, pos: 0 }) as const),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(...VAR_NAMES), fc.array(evalSegment, { maxLength: 2 }))
      .map(([head, rest]) => ({ kind: 'path', scope: 'var', segments: [head, ...rest], pos: 0 }) as const),
  },
);

/** A primitive literal or an array of primitive literals (the right side of `path op literal`). */
export const evalConstant: fc.Arbitrary<Node> = fc.oneof(
  literal(evalPrimitive),
  fc.array(literal(evalPrimitive), { maxLength: 12 }).map((items) => ({ kind: 'array', items, pos: 0 }) as Node),
);

/** Trees over the small vocabulary, so paths often resolve and specialised shapes occur. */
export const evalTree: fc.Arbitrary<Node> = tree({ leafLiteral: literal(evalPrimitive), path: evalPath, maxDepth: 4 });

/** JSON values over the same keys; objects are built with own `__proto__`/`constructor` keys when drawn. */
export const evalInput: fc.Arbitrary<JsonValue> = fc.letrec<{ v: JsonValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    evalPrimitive,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.array(fc.tuple(fc.constantFrom(...KEYS), tie('v')), { maxLength: 4 }).map((entries) => Object.fromEntries(entries) as JsonValue),
  ),
})).v;

/** Variables (or none). */
export const evalVars: fc.Arbitrary<Record<string, JsonValue> | null> = fc.option(
  fc.array(fc.tuple(fc.constantFrom(...VAR_NAMES), evalInput), { maxLength: 3 }).map((e) => Object.fromEntries(e) as Record<string, JsonValue>),
  { nil: null },
);

// ---- token soup ----

const TOKENS = [
  '(',
  ')',
  '[',
  ']',
  ',',
  '.',
  '!',
  '-',
  '+',
  '*',
  '/',
  '%',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '&&',
  '||',
  'in',
  'not',
  'if',
  'then',
  'else',
  'true',
  'false',
  'null',
  'a',
  'b.c',
  'x[0]',
  '$v',
  '$',
  '1',
  '2.5',
  '1e3',
  '1e',
  '"s"',
  "'t'",
  '"',
  '\\',
  'len',
  'contains',
  'exists',
  'coalesce',
  'min',
  'foo',
  '#',
  '=',
  '&',
  '|',
  '{',
  '😀',
  '\u00a0',
];

/** Strings made of language tokens, glued with or without spaces: mostly near-valid expressions. */
export const tokenSoup: fc.Arbitrary<string> = fc
  .array(fc.tuple(fc.constantFrom(...TOKENS), fc.constantFrom('', ' ', '', '\n')), { maxLength: 14 })
  .map((parts) => parts.map(([t, sep]) => t + sep).join(''));
