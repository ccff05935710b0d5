/**
 * fast-check generators for the expression property tests: syntax trees the parser can produce
 * (for the render round-trip), evaluation-oriented trees over a small key vocabulary with
 * matching inputs (for compiled-vs-reference agreement), reference data (`@name.path` paths and
 * dataset snapshots), date-function trees over ISO 8601 texts (valid, edge and invalid ones), and
 * token soup (for parser robustness).
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
// Two dates, so date functions in generic trees sometimes get a valid argument.
const STRINGS = ['', 'a', 'ab', 'b', 'A', '\uff5e', '😀', ' x ', '2024-02-29', '2026-11-24T10:00:00Z'];
/** Dataset names of the snapshots (`@name`), with an inherited-property name. */
const DATA_NAMES = ['ref', 'r2', 'constructor'];

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
  {
    // Reference data (`@name.path`): the snapshot is evalData.
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(...DATA_NAMES), fc.array(evalSegment, { maxLength: 2 }))
      .map(([head, rest]) => ({ kind: 'path', scope: 'data', segments: [head, ...rest], pos: 0 }) as const),
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

/** A dataset snapshot for `@name` reads (or none: every `@` read is missing). */
export const evalData: fc.Arbitrary<Map<string, JsonValue> | null> = fc.option(
  fc.array(fc.tuple(fc.constantFrom(...DATA_NAMES), evalInput), { maxLength: 3 }).map((e) => new Map(e)),
  { nil: null },
);

// ---- dates ----

/** ISO 8601 texts at the edges of the documented grammar, valid and not. */
const DATE_EDGES = [
  '2026-11-24',
  '2026-11-24T10:30',
  '2026-11-24T10:30:15.5Z',
  '2026-11-24T01:00:00+05:30',
  '2026-11-24T22:00:00-0300',
  '2026-11-24T22:00:00-03',
  '2026-11-24T10:00:00.123456789+14:00',
  '2024-02-29',
  '2024-01-31T12:00:00Z',
  '2023-02-29',
  '2000-02-29',
  '1900-02-29',
  '0000-01-01',
  '0000-01-01T00:30:00+01:00',
  '9999-12-31T23:59:59.999Z',
  '9999-12-31T23:00:00-01:00',
  '2026-11-24T24:00',
  '2026-11-24T10:00:60Z',
  '2026-11-24T10:00+24:00',
  '2026-11-24T10:00+05:60',
  '2026-13-01',
  '2026-11-24Z',
  '2026-11-24T10',
  '2026-11-24 10:00',
  '24/11/2026',
  '+2026-11-24',
  '',
  'x',
];

const two = (n: number): string => String(n).padStart(2, '0');

/** A generated date-time text (day up to 31 in any month, so some are not dates), sometimes with an offset. */
const genDate: fc.Arbitrary<string> = fc
  .record({
    y: fc.oneof(fc.integer({ min: 1990, max: 2030 }), fc.integer({ min: 0, max: 9999 })),
    m: fc.integer({ min: 1, max: 12 }),
    d: fc.integer({ min: 1, max: 31 }),
    time: fc.option(fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }), fc.nat({ max: 999 }))),
    offset: fc.option(fc.tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 14 }), fc.constantFrom(0, 30, 45))),
  })
  .map(({ y, m, d, time, offset }) => {
    const date = `${String(y).padStart(4, '0')}-${two(m)}-${two(d)}`;
    if (time === null) return date;
    const zone = offset === null ? 'Z' : `${offset[0]}${two(offset[1])}:${two(offset[2])}`;
    return `${date}T${two(time[0])}:${two(time[1])}:${two(time[2])}.${String(time[3]).padStart(3, '0')}${zone}`;
  });

/** A date text: an edge of the grammar or a generated one. */
export const dateText: fc.Arbitrary<string> = fc.oneof(fc.constantFrom(...DATE_EDGES), genDate);

const UNIT_ARGS: JsonValue[] = ['years', 'months', 'days', 'hours', 'minutes', 'seconds', 'weeks', 'Days', null, 1];
const COUNT_ARGS: JsonValue[] = [0, 1, -1, 12, -13, 30, 1200, -120000, 1e7, 1.5, -0, null, '1'];

/** Inputs for date trees: `d` and `e` hold date texts (or null, or a number). */
export const dateInput: fc.Arbitrary<JsonValue> = fc.record({
  d: fc.oneof({ weight: 4, arbitrary: dateText }, { weight: 1, arbitrary: fc.constantFrom<JsonValue>(null, 5) }),
  e: dateText,
});

/** Snapshots for date trees: `@ref.d` holds a date text. */
export const dateData: fc.Arbitrary<Map<string, JsonValue> | null> = fc.option(
  dateText.map((d) => new Map<string, JsonValue>([['ref', { d }]])),
  { nil: null },
);

/** Small steps for nearby dates. */
const NEAR: [number, string][] = [
  [1, 'months'],
  [-1, 'months'],
  [1, 'years'],
  [-1, 'years'],
  [12, 'months'],
  [-1, 'hours'],
  [1, 'hours'],
  [-1, 'days'],
  [1, 'days'],
  [0, 'days'],
  [-1, 'seconds'],
];

const call = (name: string, args: Node[]): Node => ({ kind: 'call', name, args, pos: 0 });
const lit = (value: JsonValue): Node => ({ kind: 'literal', value: value as null, pos: 0 });

/** Trees of date functions over date texts, `now()`, input paths and `@ref.d`, compared and combined. */
export const dateTree: fc.Arbitrary<Node> = fc.letrec<{ date: Node; num: Node; top: Node }>((tie) => ({
  date: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    dateText.map((t) => lit(t)),
    fc.constant(call('now', [])),
    fc.constantFrom<Node>(
      { kind: 'path', scope: 'input', segments: ['d'], pos: 0 },
      { kind: 'path', scope: 'input', segments: ['e'], pos: 0 },
      { kind: 'path', scope: 'data', segments: ['ref', 'd'], pos: 0 },
    ),
    tie('date').map((d) => call('date', [d])),
    fc
      .tuple(tie('date'), fc.oneof(fc.constantFrom(...COUNT_ARGS).map(lit), tie('num')), fc.constantFrom(...UNIT_ARGS))
      .map(([d, n, u]) => call('date_add', [d, n, lit(u)])),
  ),
  num: fc.oneof(
    fc.tuple(tie('date'), tie('date'), fc.constantFrom(...UNIT_ARGS)).map(([a, b, u]) => call('date_diff', [a, b, lit(u)])),
    fc.tuple(fc.constantFrom('year', 'month', 'day', 'weekday'), tie('date')).map(([f, d]) => call(f, [d])),
    // From a date to a nearby one (a month less an hour, ...): the edges of calendar differences.
    fc
      .tuple(tie('date'), fc.constantFrom(...NEAR), fc.constantFrom(...NEAR), fc.constantFrom<JsonValue>('years', 'months', 'days', 'hours'))
      .map(([d, [n1, u1], [n2, u2], u]) => call('date_diff', [d, call('date_add', [call('date_add', [d, lit(n1), lit(u1)]), lit(n2), lit(u2)]), lit(u)])),
  ),
  top: fc.oneof(
    tie('date'),
    tie('num'),
    fc
      .tuple(fc.constantFrom<'<' | '==' | '>='>('<', '==', '>='), tie('date'), tie('date'))
      .map(([op, left, right]) => ({ kind: 'binary', op, left, right, pos: 0 }) as Node),
  ),
})).top;

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
