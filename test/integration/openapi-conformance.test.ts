/**
 * The OpenAPI document against real servers (`svc-server` child processes): a corpus of good
 * and bad requests on every route (missing fields, unknown names, wrong methods, bad JSON,
 * 413, 415, 401/403 with authentication on, 409 on a conflict, 422 failing tests, 429 tenant
 * rate limit and failed-authentication limit), and for each answer:
 *
 * - the (route, status, code) is documented for that route by the document the server itself
 *   serves (`GET /api/v1/openapi.json`), a 405 by the operations of its path;
 * - every success body validates against the documented answer schema, every error body
 *   against the documented error schema of its status (ajv, JSON Schema 2020-12);
 * - `Retry-After` and `X-Svc-Decision-Id`, when sent, are documented.
 *
 * A missing status or code in the document (or a body that strays from its schema) fails here.
 * Not driven here: 408 (a body that stalls), 503 (a server draining) and 500s; they are
 * documented on every route by rule (src/transport/http/openapi.ts `routeErrors`).
 * The reader role (409 READ_ONLY) is covered in-process (../unit/http/harness.ts): a reader
 * needs no broker there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';
import { ROLE_KEYS, bearer, writeKeysFile, type KeysFile } from '../helpers/auth-fixtures.js';
import { DocSchemas, matchOperation, operations, responseSchemaPointer } from '../unit/http/openapi-support.js';
import { ageRules, makeHarness, type Harness } from '../unit/http/harness.js';
import { rawRequest, type RawReply } from './http-support.js';

const API = '/api/v1';

/** What one request showed: the operation it reached, its status and error code. */
interface Seen {
  readonly op: string;
  readonly status: number;
  readonly code: string | null;
}

/** Checks every answer of one server against the document it serves. */
class Conformance {
  readonly seen: Seen[] = [];
  private readonly schemas: DocSchemas;

  constructor(readonly doc: any) {
    this.schemas = new DocSchemas(doc);
  }

  /** Asserts that `reply` to `method url` is what the document says; returns it. */
  check(method: string, url: string, reply: { status: number; headers: Record<string, unknown>; text: string; body: any }): void {
    const where = `${method} ${url} -> ${reply.status} ${reply.text.slice(0, 200)}`;
    const found = matchOperation(this.doc, method, url);
    const code = reply.status >= 400 ? this.assertErrorBody(reply, where) : null;
    if (found === null) {
      // No operation: another method on a documented path (405), or no route at all (404).
      const path = url.split('?')[0] ?? url;
      const sameP = operations(this.doc).filter((o) => matchOperation({ paths: { [o.path]: { [o.method.toLowerCase()]: o.op } } }, o.method, path));
      if (reply.status === 405) {
        assert.ok(sameP.length > 0, `${where}: 405 on an undocumented path`);
        for (const o of sameP) assert.ok(this.codes(o.op, 405).includes('METHOD_NOT_ALLOWED'), `${where}: ${o.op.operationId} documents 405`);
        const allow = String(reply.headers['allow']).split(', ').sort();
        assert.deepEqual(allow, sameP.map((o) => o.method).sort(), `${where}: Allow lists the documented methods`);
      } else {
        assert.equal(reply.status, 404, `${where}: an undocumented request is 404`);
        assert.equal(code, 'NOT_FOUND', where);
      }
      this.seen.push({ op: `(none) ${method}`, status: reply.status, code });
      return;
    }
    const { op, path } = found;
    this.seen.push({ op: op.operationId, status: reply.status, code });
    const response = op.responses[String(reply.status)];
    assert.ok(response, `${where}: status ${reply.status} is documented for ${op.operationId} (has ${Object.keys(op.responses).join(', ')})`);
    if (code !== null) assert.ok(this.codes(op, reply.status).includes(code), `${where}: code ${code} is documented for ${op.operationId} ${reply.status}`);
    if (reply.status === 204) {
      assert.equal(reply.text, '', where);
      return;
    }
    const media = Object.keys(response.content ?? {});
    assert.equal(media.length, 1, `${where}: one documented media type`);
    const contentType = String(reply.headers['content-type']);
    assert.ok(contentType.startsWith(media[0]!), `${where}: content type ${contentType} is ${media[0]}`);
    if (media[0] === 'application/json') {
      const problems = this.schemas.check(responseSchemaPointer(path, method, reply.status), reply.body);
      assert.equal(problems, null, `${where}: the body matches the documented schema`);
    }
    for (const header of ['retry-after', 'x-svc-decision-id']) {
      if (reply.headers[header] === undefined) continue;
      const documented = Object.keys(response.headers ?? {}).map((h) => h.toLowerCase());
      assert.ok(documented.includes(header), `${where}: header ${header} is documented`);
    }
  }

  /** The codes the document lists for `op` and `status`. */
  private codes(op: any, status: number): string[] {
    return op.responses[String(status)]?.content?.['application/json']?.schema?.properties?.code?.enum ?? [];
  }

  /** An error body is the catalog body: `{error: <text>, code: <CODE>, ...}`. */
  private assertErrorBody(reply: { body: any; text: string }, where: string): string {
    assert.equal(typeof reply.body, 'object', `${where}: a JSON error body`);
    assert.equal(typeof reply.body.error, 'string', `${where}: error`);
    // The text to show is `message` when present (only READ_ONLY and a refused signature keep a
    // token in `error`, their bodies being fixed by the protocol), else `error`: words, never a token.
    const shown: unknown = reply.body.message ?? reply.body.error;
    assert.equal(typeof shown, 'string', `${where}: a human text`);
    assert.match(shown as string, /\S\s+\S/, `${where}: the shown text is words`);
    if (reply.body.message !== undefined)
      assert.ok(['READ_ONLY', 'FORBIDDEN'].includes(reply.body.code), `${where}: only READ_ONLY and a refused signature carry message`);
    assert.match(reply.body.code, /^[A-Z_]+$/, `${where}: code`);
    return reply.body.code as string;
  }

  /** The (status) values seen, sorted. */
  statuses(): number[] {
    return [...new Set(this.seen.map((s) => s.status))].sort((a, b) => a - b);
  }
}

/** A ruleset whose own test fails (422 TESTS_FAILED). */
function failingTests(): Record<string, unknown> {
  return { ...ageRules('failing'), tests: [{ name: 'wrong', input: { user: { age: 30 } }, expect: { code: 'MINOR' } }] };
}

/** A ruleset with an input schema (INPUT_INVALID). */
function typed(): Record<string, unknown> {
  const doc = ageRules('typed');
  const config = doc['config'] as Record<string, unknown>;
  return {
    ...doc,
    config: {
      ...config,
      input_schema: {
        type: 'object',
        properties: { user: { type: 'object', properties: { age: { type: 'integer' } }, required: ['age'] } },
        required: ['user'],
      },
    },
  };
}

/** Sends one request to a child-process server and checks it. */
function sender(conf: () => Conformance, base: () => string, defaults: Record<string, string> = {}) {
  return async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<RawReply> => {
    const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const reply = await rawRequest(base(), method, url, text, { ...defaults, ...headers });
    conf().check(method, url, { status: reply.status, headers: reply.headers, text: reply.text, body: reply.body });
    return reply;
  };
}

describe('OpenAPI conformance: plain server (debug mode, decision log), every route', () => {
  const dir = tempDir('svc-openapi-');
  let server: ServerProcess;
  let conf: Conformance;
  before(async () => {
    server = await startServer([
      '--disable-grpc',
      '--rules-dir',
      `${dir.path}/rules`,
      '--decision-log',
      `${dir.path}/decisions`,
      '--debug-mode',
      '--max-request-body-bytes',
      '20000',
      '--max-data-bytes',
      '200',
    ]);
    const r = await rawRequest(server.url, 'GET', `${API}/openapi.json`);
    assert.equal(r.status, 200);
    conf = new Conformance(r.body);
  });
  after(async () => {
    await server?.stop();
    dir.remove();
  });

  it('good and bad requests on every route answer as documented', async () => {
    const send = sender(
      () => conf,
      () => server.url,
    );
    // operations
    await send('GET', `${API}/openapi.json`);
    await send('GET', '/health');
    await send('GET', '/healthz/live');
    await send('GET', '/healthz/ready');
    await send('GET', '/metrics');
    await send('POST', '/health', {});
    await send('GET', '/nothing/here');
    // rulesets
    assert.equal((await send('POST', `${API}/rulesets`, ageRules('age'))).status, 200);
    assert.equal((await send('POST', `${API}/rulesets`, ageRules('age', { version: '2.0.0', adultCode: 'GROWN' }))).status, 200);
    assert.equal((await send('POST', `${API}/rulesets`, typed())).status, 200);
    await send('POST', `${API}/rulesets`, {});
    await send('POST', `${API}/rulesets`, '{"config": ');
    await send('POST', `${API}/rulesets`, 'config', { 'content-type': 'text/plain' });
    await send('POST', `${API}/rulesets`, { config: { name: 'big', entry_step: 'x' }, steps: { pad: 'x'.repeat(30000) } });
    assert.equal((await send('POST', `${API}/rulesets`, failingTests())).status, 422);
    await send('PATCH', `${API}/rulesets`, {});
    await send('GET', `${API}/rulesets`);
    await send('GET', `${API}/rulesets/age`);
    await send('GET', `${API}/rulesets/nope`);
    await send('GET', `${API}/rulesets/${'n'.repeat(200)}`);
    await send('GET', `${API}/rulesets/age/versions`);
    await send('GET', `${API}/rulesets/nope/versions`);
    await send('GET', `${API}/rulesets/age/analysis`);
    await send('GET', `${API}/rulesets/age/schema`);
    await send('GET', `${API}/rulesets/typed/schema`);
    await send('POST', `${API}/rulesets/age/test`, {});
    await send('POST', `${API}/rulesets/age/test`, { tests: [{ name: 't', input: { user: { age: 3 } }, expect: { code: 'MINOR' } }] });
    await send('POST', `${API}/rulesets/age/test`, { tests: [{ input: 1 }] });
    await send('POST', `${API}/rulesets/age/filter`, { known_input: {}, target_results: ['MINOR'] });
    await send('POST', `${API}/rulesets/age/filter`, { known_input: {}, target_results: ['MINOR'], format: 'mongo' });
    await send('POST', `${API}/rulesets/age/filter`, { known_input: {}, target_results: [] });
    await send('POST', `${API}/rulesets/nope/filter`, { known_input: {}, target_results: ['X'] });
    await send('POST', `${API}/rulesets/age/diff`, { from: 1, to: 'current' });
    await send('POST', `${API}/rulesets/age/diff`, { from: ageRules('age'), to: 2 });
    await send('POST', `${API}/rulesets/age/diff`, { from: 'latest', to: 1 });
    await send('POST', `${API}/rulesets/age/diff`, { from: 99, to: 1 });
    await send('POST', `${API}/rulesets/age/impact`, { candidate: { seq: 1 }, inputs: [{ user: { age: 30 } }, { user: {} }] });
    await send('POST', `${API}/rulesets/age/impact`, { candidate: ageRules('age'), inputs: [{ user: { age: 3 } }] });
    await send('POST', `${API}/rulesets/age/impact`, { inputs: [] });
    // drafts
    await send('POST', `${API}/draft/validate`, { ruleset: ageRules('d') });
    await send('POST', `${API}/draft/validate`, { ruleset: { config: {}, steps: {} } });
    await send('POST', `${API}/draft/execute`, { ruleset: ageRules('d'), input: { user: { age: 30 } }, trace: true });
    await send('POST', `${API}/draft/execute`, { ruleset: typed(), input: { user: { age: 'x' } } });
    await send('POST', `${API}/draft/execute`, { input: {} });
    await send('POST', `${API}/draft/filter`, { ruleset: ageRules('d'), known_input: {}, target_results: ['ADULT'], format: 'json' });
    await send('POST', `${API}/draft/test`, { ruleset: failingTests() });
    await send('POST', `${API}/draft/test`, {});
    // execution (the hot dispatcher is off in debug mode; the plain requests of the other server take it)
    const executed = await send('POST', `${API}/execute/age`, { input: { user: { age: 30 } } });
    assert.match(String(executed.headers['x-svc-decision-id']), /./, 'the decision log names the execution');
    await send('POST', `${API}/execute/age`, { input: { user: { age: 30 } }, trace: true });
    await send('POST', `${API}/execute/typed`, { input: { user: { age: 'old' } } });
    await send('POST', `${API}/execute/nope`, { input: {} });
    await send('POST', `${API}/execute/age`, { nope: 1 });
    await send('POST', `${API}/execute/age`, '[1');
    await send('GET', `${API}/execute/age`);
    await send('POST', `${API}/execute/age/batch`, { inputs: [{ user: { age: 30 } }, { user: { age: 'x' } }] });
    await send('POST', `${API}/execute/typed/batch`, { inputs: [{ user: { age: 30 } }, { user: { age: 'x' } }] });
    await send('POST', `${API}/execute/age/batch`, { inputs: [] });
    await send('POST', `${API}/eval`, { expression: '1 + 2' });
    await send('POST', `${API}/eval`, { expression: 'x.y', context: { x: { y: [1, 'a'] } } });
    await send('POST', `${API}/eval`, { expression: '1 +' });
    await send('POST', `${API}/eval`, { expression: 'repeat("ab", 100000000)' });
    // versions
    await send('POST', `${API}/rulesets/age/rollback`, { seq: 1 });
    await send('POST', `${API}/rulesets/age/rollback`, { seq: 99 });
    await send('POST', `${API}/rulesets/age/rollback`, { seq: 'one' });
    await send('POST', `${API}/rulesets/nope/rollback`, { seq: 1 });
    // config
    await send('GET', `${API}/config/audit-sample-rate`);
    await send('PUT', `${API}/config/audit-sample-rate`, { sample_rate: 50 });
    await send('PUT', `${API}/config/audit-sample-rate`, { sample_rate: 500 });
    await send('DELETE', `${API}/config/audit-sample-rate`);
    // shadow runs
    await send('GET', `${API}/rulesets/age/shadow`);
    await send('PUT', `${API}/rulesets/age/shadow`, { candidate: ageRules('age', { adultCode: 'GROWN_UP' }), sample_rate: 100 });
    await send('PUT', `${API}/rulesets/age/shadow`, { candidate: ageRules('other'), sample_rate: 100 });
    await send('PUT', `${API}/rulesets/age/shadow`, { candidate: ageRules('age'), sample_rate: 0 });
    await send('PUT', `${API}/rulesets/age/shadow`, { candidate: failingTests(), sample_rate: 10 });
    await send('POST', `${API}/execute/age`, { input: { user: { age: 30 } } });
    await send('GET', `${API}/rulesets/age/shadow`);
    await send('POST', `${API}/rulesets/age/shadow/promote`, {});
    await send('POST', `${API}/rulesets/age/shadow/promote`);
    await send('PUT', `${API}/rulesets/age/shadow`, { candidate: ageRules('age', { adultCode: 'AGAIN' }), sample_rate: 5 });
    await send('DELETE', `${API}/rulesets/age/shadow`);
    await send('DELETE', `${API}/rulesets/age/shadow`);
    // reference data
    await send('GET', `${API}/data`);
    await send('PUT', `${API}/data/countries`, { fr: 'France', de: 'Germany' });
    await send('PUT', `${API}/data/countries`, ['fr', 'de']);
    await send('PUT', `${API}/data/huge`, { text: 'x'.repeat(500) });
    await send('PUT', `${API}/data/bad`, '{');
    await send('GET', `${API}/data`);
    await send('GET', `${API}/data/countries`);
    await send('GET', `${API}/data/nope`);
    await send('DELETE', `${API}/data/countries`);
    await send('DELETE', `${API}/data/countries`);
    // debug
    await send('GET', `${API}/debug/rulesets/age`);
    await send('GET', `${API}/debug/rulesets/nope`);
    // delete
    await send('DELETE', `${API}/rulesets/typed`);
    await send('DELETE', `${API}/rulesets/typed`);
    await send('DELETE', `${API}/rulesets/age`, 'x', { 'content-type': 'text/plain' });

    const statuses = conf.statuses();
    for (const s of [200, 204, 400, 404, 405, 413, 415, 422]) assert.ok(statuses.includes(s), `the corpus saw a ${s} (saw ${statuses.join(', ')})`);
    const ops = new Set(conf.seen.map((s) => s.op));
    const missing = operations(conf.doc)
      .map((o) => o.op.operationId as string)
      .filter((id) => !ops.has(id) && !TENANT_OPS.includes(id));
    assert.deepEqual(missing, [], 'every operation of this server was called');
    assert.ok(
      conf.seen.some((s) => s.op === 'execute' && s.status === 200),
      'execute answered',
    );
  });
});

const TENANT_OPS = ['listTenants', 'createTenant', 'getTenant', 'updateTenant', 'deleteTenant'];

describe('OpenAPI conformance: multi-tenancy and authentication (hot dispatcher on)', () => {
  const dir = tempDir('svc-openapi-auth-');
  let server: ServerProcess;
  let keys: KeysFile;
  let conf: Conformance;
  before(async () => {
    keys = writeKeysFile(dir.path, [...ROLE_KEYS, { id: 'acme-admin', role: 'admin', tenants: ['acme'] }]);
    server = await startServer(['--disable-grpc', '--rules-dir', `${dir.path}/rules`, '--multi-tenancy-enabled', '--auth-keys-file', keys.path]);
    const r = await rawRequest(server.url, 'GET', `${API}/openapi.json`);
    assert.equal(r.status, 200, 'the document is public');
    conf = new Conformance(r.body);
  });
  after(async () => {
    await server?.stop();
    dir.remove();
  });

  it('tenants, 401/403, tenant rate limit 429 with Retry-After, then the failed-authentication limit', async () => {
    const admin = bearer(keys.keys['admin']!);
    const send = sender(
      () => conf,
      () => server.url,
      admin,
    );
    await send('GET', '/health', undefined, { authorization: '' });
    await send('GET', `${API}/tenants`);
    assert.equal((await send('POST', `${API}/tenants`, { id: 'acme' })).status, 201);
    await send('POST', `${API}/tenants`, { id: 'acme' });
    await send('POST', `${API}/tenants`, { id: 'slow', qps_limit: 0.001, burst: 1 });
    await send('POST', `${API}/tenants`, { id: '', burst: 'x' });
    await send('GET', `${API}/tenants/acme`);
    await send('GET', `${API}/tenants/nope`);
    await send('PUT', `${API}/tenants/acme`, { name: 'Acme Corp', qps_limit: 100, burst: 200 });
    await send('PUT', `${API}/tenants/nope`, {});
    await send('POST', `${API}/rulesets`, ageRules('age'), { 'x-tenant-id': 'acme' });
    await send('DELETE', `${API}/tenants/acme`);
    await send('DELETE', `${API}/tenants/default`);
    await send('POST', `${API}/rulesets`, ageRules('age'), { 'x-tenant-id': 'nope' });
    await send('POST', `${API}/execute/age`, { input: { user: { age: 30 } } }, { 'x-tenant-id': 'acme' });
    await send('POST', `${API}/eval`, { expression: '1' }, { 'x-tenant-id': 'acme' });
    await send('POST', `${API}/execute/age`, { input: { user: { age: 30 } } }, { 'x-tenant-id': 'nope' });
    // errors answered by the hot dispatcher
    await send('POST', `${API}/execute/age`, '[1', { 'x-tenant-id': 'acme' });
    await send('POST', `${API}/execute/age`, { nope: 1 }, { 'x-tenant-id': 'acme' });
    await send('POST', `${API}/execute/nope`, { input: {} }, { 'x-tenant-id': 'acme' });
    await send('POST', `${API}/eval`, { expression: '1 +' }, { 'x-tenant-id': 'acme' });
    await send('POST', `${API}/eval`, { expression: '1' }, { 'x-tenant-id': 'acme', 'content-type': 'text/plain' });
    // rate limit of a tenant: a burst of 1 (executions take a token, writes do not)
    await send('POST', `${API}/rulesets`, ageRules('age'), { 'x-tenant-id': 'slow' });
    await send('POST', `${API}/execute/age`, { input: { user: { age: 30 } } }, { 'x-tenant-id': 'slow' });
    const limited = await send('POST', `${API}/execute/age`, { input: { user: { age: 30 } } }, { 'x-tenant-id': 'slow' });
    assert.equal(limited.status, 429, limited.text);
    assert.ok(limited.headers['retry-after'], 'Retry-After');
    // authorization
    const viewer = bearer(keys.keys['viewer']!);
    await send('POST', `${API}/rulesets`, ageRules('age'), { ...viewer, 'x-tenant-id': 'acme' });
    await send('GET', `${API}/rulesets`, undefined, { ...viewer, 'x-tenant-id': 'acme' });
    await send('GET', `${API}/tenants`, undefined, bearer(keys.keys['acme-admin']!));
    await send('GET', '/metrics', undefined, viewer);
    await send('GET', `${API}/rulesets`, undefined, { authorization: '' });
    await send('POST', `${API}/execute/age`, { input: {} }, { authorization: '', 'x-tenant-id': 'acme' });
    await send('GET', `${API}/rulesets`, undefined, { authorization: 'Bearer nope' });
    await send('DELETE', `${API}/tenants/acme`);
    await send('DELETE', `${API}/rulesets/age`, undefined, { 'x-tenant-id': 'acme' });
    await send('DELETE', `${API}/tenants/acme`);
    // failed authentication: the 22nd attempt from one address is 429 (keep last: it blocks this address for a minute)
    let last: RawReply | undefined;
    for (let i = 0; i < 22; i++) last = await send('GET', `${API}/rulesets`, undefined, { authorization: `Bearer wrong${i}` });
    assert.equal(last?.status, 429, last?.text);

    const statuses = conf.statuses();
    for (const s of [200, 201, 204, 400, 401, 403, 404, 409, 429]) assert.ok(statuses.includes(s), `the corpus saw a ${s} (saw ${statuses.join(', ')})`);
    for (const id of TENANT_OPS)
      assert.ok(
        conf.seen.some((s) => s.op === id && s.status < 300),
        `${id} answered`,
      );
    const codes = new Set(conf.seen.map((s) => s.code));
    for (const c of ['UNAUTHENTICATED', 'FORBIDDEN', 'TENANT_NOT_FOUND', 'CONFLICT', 'RATE_LIMITED']) assert.ok(codes.has(c), `saw ${c}`);
  });
});

describe('OpenAPI conformance: a reader refuses writes (409 READ_ONLY), as documented', () => {
  let h: Harness;
  let conf: Conformance;
  before(async () => {
    h = await makeHarness({ role: 'reader', writerAddr: 'http://writer:8080' });
    conf = new Conformance((await h.request('GET', `${API}/openapi.json`)).body);
  });
  after(() => h.close());

  it('every write route answers READ_ONLY with the catalog body', async () => {
    // NOTE: the harness has no reference data service (its routes answer 404 there).
    const writes = operations(conf.doc).filter(
      (o) => ['write', 'admin'].includes(o.op['x-svc-permission']) && o.method !== 'GET' && !o.path.startsWith(`${API}/data`),
    );
    assert.deepEqual(writes.map((o) => o.op.operationId as string).sort(), [
      'deleteRuleset',
      'deleteShadow',
      'promoteShadow',
      'putRuleset',
      'putShadow',
      'rollback',
      'setAuditSampleRate',
    ]);
    for (const o of writes) {
      const url = o.path.replace(/\{[^}]+\}/, 'age');
      const body = o.op.requestBody
        ? o.path.endsWith('/rollback')
          ? { seq: 1 }
          : o.path.endsWith('/shadow')
            ? { candidate: ageRules('age'), sample_rate: 5 }
            : o.path.includes('audit')
              ? { sample_rate: 5 }
              : ageRules('age')
        : undefined;
      const r = await h.request(o.method, url, body);
      conf.check(o.method, url, r);
      assert.equal(r.status, 409, `${o.method} ${url}: ${r.text}`);
      assert.equal(r.body.code, 'READ_ONLY');
      assert.equal(r.body.writer, 'http://writer:8080');
      assert.equal(r.body.error, 'read_only');
      assert.equal(r.body.message, 'this instance is a reader and does not accept writes');
    }
  });
});
