/**
 * Structural validation (DECISIONS.md 1): every problem at once, each with its location.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { validateRuleset } from '../../../src/ruleset/index.js';

type Doc = Record<string, any>;

/** A small valid ruleset touching every step kind; tests break one thing each. */
function valid(): Doc {
  return {
    config: { name: 'loan-check_v1.2', version: '2.0.0', description: 'demo', entry_step: 'check', field_missing: 'strict', timeout_ms: 100 },
    steps: {
      check: {
        id: 'check',
        name: 'Check age',
        type: 'decision',
        branches: [
          { condition: 'user.age >= 18', next_step: 'prep' },
          { condition: 'is_null(user.age)', next_step: 'deny' },
        ],
        default_next: 'deny',
      },
      prep: {
        type: 'action',
        actions: [
          { action: 'set_variable', name: 'limit', value: 'user.income * 3' },
          { action: 'log', message: 'limit computed', level: 'debug' },
          { action: 'log', message: 'no level' },
        ],
        next_step: 'ok',
      },
      ok: { type: 'terminal', result: { code: 'OK', message: 'fine', extra: { a: [1, null, true] } }, output: { limit: '$limit' } },
      deny: { type: 'terminal', result: { code: 'DENY' } },
    },
    _signature: { algorithm: 'ed25519', public_key: 'x', signature: 'y' },
  };
}

/** Problems as `path: message` lines. */
function lines(doc: unknown): string[] {
  return validateRuleset(doc).map((p) => `${p.path}: ${p.message}`);
}

/** Asserts the only problem of `doc` is at `path` (and its message matches, when given). */
function onlyProblem(doc: unknown, path: string, message?: string | RegExp): void {
  const problems = validateRuleset(doc);
  assert.equal(problems.length, 1, `expected one problem at ${path}, got ${JSON.stringify(problems)}`);
  assert.equal(problems[0]!.path, path);
  if (typeof message === 'string') assert.equal(problems[0]!.message, message);
  else if (message) assert.match(problems[0]!.message, message);
}

function mutate(change: (d: Doc) => void): Doc {
  const d = valid();
  change(d);
  return d;
}

test('a valid ruleset has no problems', () => {
  assert.deepEqual(validateRuleset(valid()), []);
});

test('every problem is reported at once with its location', () => {
  const doc = {
    config: { name: '../etc', entry_step: 'x' },
    steps: {
      check: {
        type: 'decision',
        branches: [
          { condition: 'a > 1', next_step: 'zz' },
          { condition: 'user.age >= (1 + ))', next_step: 't' },
        ],
      },
      s: { id: 'other', type: 'loop' },
      t: { type: 'terminal', result: { message: 'no code' } },
    },
  };
  const got = lines(doc);
  assert.deepEqual(got.slice(0, 3), [
    "config.name: must be 1-128 characters of A-Z a-z 0-9 _ - . and not start with '.'",
    "config.entry_step: unknown step 'x'",
    "steps.check.branches[0].next_step: unknown step 'zz'",
  ]);
  assert.match(got[3]!, /^steps\.check\.branches\[1\]\.condition: .+ at \d+$/);
  assert.deepEqual(got.slice(4), [
    "steps.s.id: must equal its key 's'",
    'steps.s.type: must be decision, action, terminal, table or call',
    'steps.t.result.code: required',
  ]);
});

describe('document', () => {
  for (const doc of [null, [], 'text', 5, true, undefined]) {
    test(`not an object: ${JSON.stringify(doc)}`, () => onlyProblem(doc, 'ruleset', /must be a JSON object/));
  }
  test('config and steps required', () => {
    assert.deepEqual(lines({}), ['config: required', 'steps: required']);
  });
  test('_signature is ignored, even when odd', () => {
    assert.deepEqual(validateRuleset(mutate((d) => (d['_signature'] = () => 1))), []);
  });
  test('non-JSON values are reported where they are', () => {
    const doc = mutate((d) => {
      d['steps'].ok.result.fn = () => 1;
      d['steps'].ok.result.nan = Number.NaN;
      d['steps'].ok.result.inf = Infinity;
      d['steps'].ok.result.date = new Date(0);
      d['steps'].ok.result.holes = [1, undefined];
      d['config'].metadata = { big: 10n };
    });
    assert.deepEqual(lines(doc), [
      'config.metadata.big: must be a JSON value (found bigint)',
      'steps.ok.result.fn: must be a JSON value (found function)',
      'steps.ok.result.nan: must be a finite number',
      'steps.ok.result.inf: must be a finite number',
      'steps.ok.result.date: must be a JSON value (found a non-plain object)',
      'steps.ok.result.holes[1]: must be a JSON value (found undefined)',
    ]);
  });
  test('properties set to undefined count as absent', () => {
    assert.deepEqual(validateRuleset(mutate((d) => (d['config'].version = undefined))), []);
  });
  test('absurd nesting is a problem, not a crash', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10000; i++) deep = [deep];
    const problems = validateRuleset(mutate((d) => (d['steps'].ok.result.deep = deep)));
    assert.equal(problems.length, 1);
    assert.match(problems[0]!.message, /nested deeper than/);
    assert.match(problems[0]!.path, /^steps\.ok\.result\.deep\[0\]/);
  });
});

describe('config', () => {
  test('missing or not an object', () => {
    onlyProblem(
      mutate((d) => delete d['config']),
      'config',
      'required',
    );
    onlyProblem(
      mutate((d) => (d['config'] = [])),
      'config',
      'must be an object',
    );
  });
  const nameMsg = "must be 1-128 characters of A-Z a-z 0-9 _ - . and not start with '.'";
  for (const name of ['', '.hidden', 'a/b', '../x', 'a b', 'x'.repeat(129), 'é', 7]) {
    test(`bad name ${JSON.stringify(name).slice(0, 20)}`, () =>
      onlyProblem(
        mutate((d) => (d['config'].name = name)),
        'config.name',
        nameMsg,
      ));
  }
  test('name required; 128 characters and dots inside are fine', () => {
    onlyProblem(
      mutate((d) => delete d['config'].name),
      'config.name',
      'required',
    );
    assert.deepEqual(validateRuleset(mutate((d) => (d['config'].name = 'a'.repeat(128)))), []);
    assert.deepEqual(validateRuleset(mutate((d) => (d['config'].name = 'a.b-c_D9'))), []);
  });
  test('version and description are strings (description may be null)', () => {
    onlyProblem(
      mutate((d) => (d['config'].version = 1)),
      'config.version',
      'must be a string',
    );
    onlyProblem(
      mutate((d) => (d['config'].description = {})),
      'config.description',
      'must be a string',
    );
    assert.deepEqual(validateRuleset(mutate((d) => (d['config'].description = null))), []);
    assert.deepEqual(validateRuleset(mutate((d) => delete d['config'].version)), []);
  });
  test('entry_step required, a string, naming a step', () => {
    onlyProblem(
      mutate((d) => delete d['config'].entry_step),
      'config.entry_step',
      'required',
    );
    onlyProblem(
      mutate((d) => (d['config'].entry_step = 3)),
      'config.entry_step',
      'must be a step id (a string)',
    );
    onlyProblem(
      mutate((d) => (d['config'].entry_step = 'nope')),
      'config.entry_step',
      "unknown step 'nope'",
    );
  });
  test('field_missing is lenient or strict', () => {
    onlyProblem(
      mutate((d) => (d['config'].field_missing = 'loose')),
      'config.field_missing',
      'must be lenient or strict',
    );
    assert.deepEqual(validateRuleset(mutate((d) => (d['config'].field_missing = 'lenient'))), []);
  });
  for (const t of [-1, 1.5, '100', null, Number.MAX_SAFE_INTEGER + 2]) {
    test(`timeout_ms ${String(t)} is rejected`, () =>
      onlyProblem(
        mutate((d) => (d['config'].timeout_ms = t)),
        'config.timeout_ms',
        'must be a non-negative integer',
      ));
  }
  test('timeout_ms 0 is fine', () => assert.deepEqual(validateRuleset(mutate((d) => (d['config'].timeout_ms = 0))), []));
});

describe('steps', () => {
  test('steps must be an object', () => {
    assert.deepEqual(lines(mutate((d) => (d['steps'] = []))), ['steps: must be an object mapping step ids to steps']);
    assert.deepEqual(lines(mutate((d) => (d['steps'] = 'x'))), ['steps: must be an object mapping step ids to steps']);
  });
  test('an empty steps object leaves the entry step unknown', () => {
    onlyProblem(
      mutate((d) => (d['steps'] = {})),
      'config.entry_step',
      "unknown step 'check'",
    );
  });
  test('a step must be an object', () =>
    onlyProblem(
      mutate((d) => (d['steps'].deny = 'DENY')),
      'steps.deny',
      'must be an object',
    ));
  test('id must equal the key; name must be a string', () => {
    onlyProblem(
      mutate((d) => (d['steps'].deny.id = 'DENY')),
      'steps.deny.id',
      "must equal its key 'deny'",
    );
    onlyProblem(
      mutate((d) => (d['steps'].deny.name = 5)),
      'steps.deny.name',
      'must be a string',
    );
  });
  test('type must be decision, action, terminal, table or call', () => {
    onlyProblem(
      mutate((d) => delete d['steps'].deny.type),
      'steps.deny.type',
      'must be decision, action, terminal, table or call',
    );
    onlyProblem(
      mutate((d) => (d['steps'].deny.type = 'Terminal')),
      'steps.deny.type',
      'must be decision, action, terminal, table or call',
    );
  });
  test('keys with dots or spaces are quoted in locations; empty key is a problem', () => {
    const doc = mutate((d) => {
      d['steps']['a.b'] = { type: 'x' };
      d['steps']['has space'] = { type: 'terminal', result: {} };
      d['steps'][''] = { type: 'terminal', result: { code: 'E' } };
    });
    assert.deepEqual(lines(doc), [
      'steps["a.b"].type: must be decision, action, terminal, table or call',
      'steps["has space"].result.code: required',
      'steps[""]: step id must not be empty',
    ]);
  });
});

describe('decision steps', () => {
  test('branches required and an array (may be empty)', () => {
    onlyProblem(
      mutate((d) => delete d['steps'].check.branches),
      'steps.check.branches',
      /^required/,
    );
    onlyProblem(
      mutate((d) => (d['steps'].check.branches = {})),
      'steps.check.branches',
      'must be an array',
    );
    assert.deepEqual(validateRuleset(mutate((d) => (d['steps'].check.branches = []))), []);
  });
  test('a branch is an object with a condition and a known next_step', () => {
    onlyProblem(
      mutate((d) => (d['steps'].check.branches[1] = 'x')),
      'steps.check.branches[1]',
      'must be an object with condition and next_step',
    );
    onlyProblem(
      mutate((d) => delete d['steps'].check.branches[1].condition),
      'steps.check.branches[1].condition',
      'required',
    );
    onlyProblem(
      mutate((d) => (d['steps'].check.branches[1].condition = true)),
      'steps.check.branches[1].condition',
      'must be an expression string',
    );
    onlyProblem(
      mutate((d) => delete d['steps'].check.branches[0].next_step),
      'steps.check.branches[0].next_step',
      'required',
    );
    onlyProblem(
      mutate((d) => (d['steps'].check.branches[0].next_step = 'gone')),
      'steps.check.branches[0].next_step',
      "unknown step 'gone'",
    );
    onlyProblem(
      mutate((d) => (d['steps'].check.branches[0].next_step = ['ok'])),
      'steps.check.branches[0].next_step',
      'must be a step id (a string)',
    );
  });
  test('default_next is optional but must name a step', () => {
    assert.deepEqual(validateRuleset(mutate((d) => delete d['steps'].check.default_next)), []);
    onlyProblem(
      mutate((d) => (d['steps'].check.default_next = 'zz')),
      'steps.check.default_next',
      "unknown step 'zz'",
    );
    onlyProblem(
      mutate((d) => (d['steps'].check.default_next = null)),
      'steps.check.default_next',
      'must be a step id (a string)',
    );
  });
  test('a condition that does not parse is reported with its position', () => {
    onlyProblem(
      mutate((d) => (d['steps'].check.branches[1].condition = 'user.age >= )')),
      'steps.check.branches[1].condition',
      / at 12$/,
    );
    onlyProblem(
      mutate((d) => (d['steps'].check.branches[0].condition = '')),
      'steps.check.branches[0].condition',
      / at 0$/,
    );
  });
  test('unknown function and wrong argument count are reported', () => {
    onlyProblem(
      mutate((d) => (d['steps'].check.branches[0].condition = 'frobnicate(user.age)')),
      'steps.check.branches[0].condition',
      / at \d+$/,
    );
    onlyProblem(
      mutate((d) => (d['steps'].check.branches[0].condition = 'contains(user.name)')),
      'steps.check.branches[0].condition',
      / at \d+$/,
    );
  });
});

describe('action steps', () => {
  const at = 'steps.prep';
  test('actions required and an array; next_step required and known', () => {
    onlyProblem(
      mutate((d) => delete d['steps'].prep.actions),
      `${at}.actions`,
      /^required/,
    );
    onlyProblem(
      mutate((d) => (d['steps'].prep.actions = 'x')),
      `${at}.actions`,
      'must be an array',
    );
    onlyProblem(
      mutate((d) => delete d['steps'].prep.next_step),
      `${at}.next_step`,
      'required',
    );
    onlyProblem(
      mutate((d) => (d['steps'].prep.next_step = 'nowhere')),
      `${at}.next_step`,
      "unknown step 'nowhere'",
    );
    assert.deepEqual(validateRuleset(mutate((d) => (d['steps'].prep.actions = []))), []);
  });
  test('an action is an object with a known kind', () => {
    onlyProblem(
      mutate((d) => (d['steps'].prep.actions[0] = 7)),
      `${at}.actions[0]`,
      'must be an object',
    );
    onlyProblem(
      mutate((d) => delete d['steps'].prep.actions[0].action),
      `${at}.actions[0].action`,
      /^required/,
    );
    onlyProblem(
      mutate((d) => (d['steps'].prep.actions[2].action = 'email')),
      `${at}.actions[2].action`,
      'must be set_variable or log',
    );
  });
  test('set_variable needs a variable name and a value expression', () => {
    onlyProblem(
      mutate((d) => delete d['steps'].prep.actions[0].name),
      `${at}.actions[0].name`,
      'required',
    );
    for (const name of ['$limit', '1abc', 'a-b', '', 3]) {
      onlyProblem(
        mutate((d) => (d['steps'].prep.actions[0].name = name)),
        `${at}.actions[0].name`,
        /^must be a variable name/,
      );
    }
    onlyProblem(
      mutate((d) => delete d['steps'].prep.actions[0].value),
      `${at}.actions[0].value`,
      'required',
    );
    onlyProblem(
      mutate((d) => (d['steps'].prep.actions[0].value = 3)),
      `${at}.actions[0].value`,
      'must be an expression string',
    );
    onlyProblem(
      mutate((d) => (d['steps'].prep.actions[0].value = 'user.income *')),
      `${at}.actions[0].value`,
      / at \d+$/,
    );
  });
  test('log needs a message string and a known level', () => {
    onlyProblem(
      mutate((d) => delete d['steps'].prep.actions[1].message),
      `${at}.actions[1].message`,
      'required',
    );
    onlyProblem(
      mutate((d) => (d['steps'].prep.actions[1].message = ['x'])),
      `${at}.actions[1].message`,
      'must be a string',
    );
    onlyProblem(
      mutate((d) => (d['steps'].prep.actions[1].level = 'trace')),
      `${at}.actions[1].level`,
      'must be debug, info, warn or error',
    );
  });
});

describe('terminal steps', () => {
  test('result required and an object, code a non-empty string, message a string', () => {
    onlyProblem(
      mutate((d) => delete d['steps'].deny.result),
      'steps.deny.result',
      /^required/,
    );
    onlyProblem(
      mutate((d) => (d['steps'].deny.result = 'DENY')),
      'steps.deny.result',
      'must be an object',
    );
    onlyProblem(
      mutate((d) => delete d['steps'].deny.result.code),
      'steps.deny.result.code',
      'required',
    );
    onlyProblem(
      mutate((d) => (d['steps'].deny.result.code = 4)),
      'steps.deny.result.code',
      'must be a non-empty string',
    );
    onlyProblem(
      mutate((d) => (d['steps'].deny.result.code = '')),
      'steps.deny.result.code',
      'must be a non-empty string',
    );
    onlyProblem(
      mutate((d) => (d['steps'].deny.result.message = null)),
      'steps.deny.result.message',
      'must be a string',
    );
  });
  test('output maps keys to expression strings that parse', () => {
    onlyProblem(
      mutate((d) => (d['steps'].ok.output = ['$limit'])),
      'steps.ok.output',
      /^must be an object/,
    );
    onlyProblem(
      mutate((d) => (d['steps'].ok.output.n = 5)),
      'steps.ok.output.n',
      'must be an expression string',
    );
    onlyProblem(
      mutate((d) => (d['steps'].ok.output['a b'] = '(')),
      'steps.ok.output["a b"]',
      / at \d+$/,
    );
  });
  test('__proto__ is not accepted as an output or result key', () => {
    const doc = JSON.parse('{"result": {"code": "X", "__proto__": 1}, "output": {"__proto__": "1"}}') as Doc;
    const problems = lines(mutate((d) => (d['steps'].deny = { type: 'terminal', ...doc })));
    assert.deepEqual(problems, [
      `steps.deny.result.__proto__: the key '__proto__' is not allowed`,
      `steps.deny.output.__proto__: the key '__proto__' is not allowed`,
    ]);
  });
});
