/**
 * Paths read own properties only (SECURITY rule of the expression task): prototype members of
 * objects and arrays are missing, own keys with the same names are read, and a polluted or
 * inherited property never leaks through a path.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compile, ExprRuntimeError, parse, readPath } from '../../../src/expr/index.js';

const run = (expr: string, input: unknown, strict = false, vars: Record<string, never> | null = null): unknown =>
  compile(parse(expr), { fieldMissing: strict ? 'strict' : 'lenient' })(input, vars);

describe('paths read own properties only', () => {
  const PROTO_KEYS = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__'];

  for (const key of PROTO_KEYS) {
    test(`'${key}' on a plain object is missing (1, 2 and 4 segments, brackets)`, () => {
      assert.equal(run(key, {}), null);
      assert.equal(run(`a.${key}`, { a: {} }), null);
      assert.equal(run(`a.b.c.${key}`, { a: { b: { c: {} } } }), null);
      assert.equal(run(`a[${JSON.stringify(key)}]`, { a: {} }), null);
      assert.equal(run(`exists(a.${key})`, { a: {} }), false);
      assert.throws(
        () => run(`a.${key}`, { a: {} }, true),
        (e: unknown) => e instanceof ExprRuntimeError && e.code === 'MISSING_FIELD',
      );
    });
  }

  test('an own __proto__ key from JSON.parse is read', () => {
    const input = JSON.parse('{"a": {"__proto__": {"x": 5}, "constructor": 7}}') as unknown;
    assert.deepEqual(run('a.__proto__', input), { x: 5 });
    assert.equal(run('a.__proto__.x', input), 5);
    assert.equal(run('a.constructor', input), 7);
    assert.equal(run('exists(a.__proto__)', input), true);
  });

  test('an inherited property is not read even for a plain key', () => {
    const input = { a: Object.create({ secret: 1, toString: 2 }) as object };
    assert.equal(run('a.toString', input), null);
    assert.equal(readPath(input, ['a', 'secret']).found, false);
  });

  test('array members other than indices are missing', () => {
    for (const member of ['length', 'map', 'push', 'constructor', '"0"']) {
      const expr = member.startsWith('"') ? `a[${member}]` : `a.${member}`;
      assert.equal(run(expr, { a: [1, 2] }), null, expr);
    }
    assert.equal(run('a[1]', { a: [1, 2] }), 2);
    assert.equal(run('.[0]', ['root']), 'root');
  });

  test('strings and numbers have no members', () => {
    assert.equal(run('s.length', { s: 'abc' }), null);
    assert.equal(run('s[0]', { s: 'abc' }), null);
    assert.equal(run('n.toFixed', { n: 1 }), null);
    assert.equal(run('s.charAt', { s: 'abc' }), null);
    assert.equal(run('s.at', { s: 'abc' }), null);
    assert.equal(run('b.valueOf', { b: true }), null);
  });

  test('variables named like prototype members are unset', () => {
    assert.equal(run('$constructor', {}, false, {}), null);
    assert.equal(run('$toString.x', {}, false, {}), null);
    assert.throws(() => run('$constructor', {}, true, {}), /variable '\$constructor' is not set/);
  });

  test('Object.prototype is not modified by evaluation', () => {
    run('a.__proto__ == 1 && constructor.prototype == 2', JSON.parse('{"a": {"__proto__": 1}}'));
    assert.equal(Object.getPrototypeOf({}), Object.prototype);
    assert.equal(({} as Record<string, unknown>)['x'], undefined);
  });
});
