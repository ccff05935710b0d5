/**
 * Date functions through the real built server over HTTP (EXTENSIONS.md 3 "Dates and time"):
 * the optional top-level `"now"` of execute, batch, eval and filter bodies is the time now()
 * reads; without it the clock is; a bad `"now"` is 400 BAD_REQUEST; a filter folds now() and the
 * date functions of known values into the generated SQL, per request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { http, startServer, type ServerProcess } from '../helpers/server-process.js';

const RULES = {
  config: { name: 'renewal', entry_step: 'check' },
  steps: {
    check: {
      type: 'decision',
      branches: [{ condition: 'user.expires < date_add(now(), 30, "days")', next_step: 'due' }],
      default_next: 'fine',
    },
    due: { type: 'terminal', result: { code: 'DUE' }, output: { at: 'now()', left: 'date_diff(now(), user.expires, "days")', weekday: 'weekday(now())' } },
    fine: { type: 'terminal', result: { code: 'FINE' }, output: { at: 'now()' } },
  },
};

let server: ServerProcess;

before(async () => {
  server = await startServer([]);
  const res = await http(server.url, 'POST', '/api/v1/rulesets', RULES);
  assert.equal(res.status, 200, JSON.stringify(res.body));
});

after(async () => {
  await server?.stop();
});

const input = { user: { expires: '2026-12-10T00:00:00Z' } };

describe('execute', () => {
  it('reads the body\'s "now", canonicalised, in every expression of the execution', async () => {
    const res = await http(server.url, 'POST', '/api/v1/execute/renewal', { input, now: '2026-11-24T01:00:00+01:00' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.code, 'DUE');
    assert.deepEqual(res.body.output, { at: '2026-11-24T00:00:00.000Z', left: 16, weekday: 2 });
    const later = await http(server.url, 'POST', '/api/v1/execute/renewal', { input, now: '2026-10-01', trace: true });
    assert.equal(later.body.code, 'FINE');
    assert.deepEqual(later.body.output, { at: '2026-10-01T00:00:00.000Z' });
  });

  it('reads the clock without "now"', async () => {
    const before = Date.now();
    const res = await http(server.url, 'POST', '/api/v1/execute/renewal', { input: { user: { expires: '9999-01-01' } } });
    const after = Date.now();
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const at = Date.parse(res.body.output.at as string);
    assert.ok(at >= before - 1000 && at <= after + 1000, `now() ${res.body.output.at} is the server's clock`);
  });

  for (const bad of ['2026-02-30', 'yesterday', 17, true, {}]) {
    it(`answers 400 BAD_REQUEST for "now": ${JSON.stringify(bad)}`, async () => {
      const res = await http(server.url, 'POST', '/api/v1/execute/renewal', { input, now: bad });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.code, 'BAD_REQUEST');
      assert.match(res.body.error as string, /now must be an ISO 8601 date/);
    });
  }

  it('an invalid date in the input is an evaluation error naming the value', async () => {
    const res = await http(server.url, 'POST', '/api/v1/execute/renewal', { input: { user: { expires: '2026-00-45' } }, now: '2026-11-24' });
    assert.equal(res.status, 500, JSON.stringify(res.body));
    assert.match(JSON.stringify(res.body), /invalid date \\"2026-00-45\\"/);
  });
});

describe('batch and eval', () => {
  it('a batch runs every item at the body\'s "now"', async () => {
    const res = await http(server.url, 'POST', '/api/v1/execute/renewal/batch', { inputs: [input, { user: { expires: '2027-06-01' } }], now: '2026-11-24' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.results.map((r: { code: string; output: unknown }) => [r.code, r.output]),
      [
        ['DUE', { at: '2026-11-24T00:00:00.000Z', left: 16, weekday: 2 }],
        ['FINE', { at: '2026-11-24T00:00:00.000Z' }],
      ],
    );
    const bad = await http(server.url, 'POST', '/api/v1/execute/renewal/batch', { inputs: [input], now: 'soon' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'BAD_REQUEST');
  });

  it('/eval reads the body\'s "now"', async () => {
    const res = await http(server.url, 'POST', '/api/v1/eval', { expression: 'date_diff(d, now(), "years")', context: { d: '2000-05-15' }, now: '2026-05-14' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.result, 25);
    const bad = await http(server.url, 'POST', '/api/v1/eval', { expression: 'now()', now: '2026-11-24T25:00' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'BAD_REQUEST');
  });
});

describe('filter', () => {
  const body = (now?: string) => ({
    known_input: {},
    target_results: ['DUE'],
    field_mapping: { 'user.expires': 'expires' },
    ...(now === undefined ? {} : { now }),
  });

  it('folds now() and date_add into the SQL, per request', async () => {
    const a = await http(server.url, 'POST', '/api/v1/rulesets/renewal/filter', body('2026-11-24'));
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.match(a.body.filter as string, /expires.*'2026-12-24T00:00:00\.000Z'/);
    const b = await http(server.url, 'POST', '/api/v1/rulesets/renewal/filter', body('2027-01-01T12:00:00Z'));
    assert.match(b.body.filter as string, /'2027-01-31T12:00:00\.000Z'/, "a second request is not served the first one's time");
    const c = await http(server.url, 'POST', '/api/v1/rulesets/renewal/filter', body());
    assert.equal(c.status, 200, JSON.stringify(c.body));
    const folded = /'(\d{4}-\d{2}-\d{2}T[^']+)'/.exec(c.body.filter as string)?.[1];
    assert.ok(folded !== undefined && Math.abs(Date.parse(folded) - (Date.now() + 30 * 86_400_000)) < 60_000, `clock at request time: ${c.body.filter}`);
  });

  it('a bad "now" is 400 BAD_REQUEST', async () => {
    const res = await http(server.url, 'POST', '/api/v1/rulesets/renewal/filter', body('2026-11-31'));
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.code, 'BAD_REQUEST');
  });
});
