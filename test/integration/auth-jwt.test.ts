/**
 * JWT authentication over HTTP (EXTENSIONS.md 1) against the real built server process started
 * with --auth-jwt-jwks-file, --auth-jwt-issuer and --auth-jwt-audience, together with an API
 * keys file: editors write (audit `principal` = the token's `sub`), viewers get 403 naming
 * the missing permission, expired, garbage, wrongly signed and wrong issuer/audience tokens
 * get 401 with `WWW-Authenticate: Bearer`, and API keys work beside JWTs.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bearer, makeSigningKey, makeTestKey, signToken, writeJwks, writeKeysFile, type SigningKey, type TokenClaims } from '../helpers/auth-jwt.js';
import { http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

const ISS = 'https://idp.example';
const AUD = 'svc-api';

/** A ruleset named `name` answering `code`. */
function rules(name: string, code: string): Record<string, unknown> {
  return {
    config: { name, entry_step: 'done' },
    steps: { done: { type: 'terminal', result: { code, message: code } } },
  };
}

describe('JWT authentication over HTTP (with an API keys file beside it)', () => {
  const dir = tempDir('svc-auth-jwt-');
  const apiEditor = makeTestKey('deployer', 'editor');
  let rsa: SigningKey;
  let ed: SigningKey;
  let stranger: SigningKey;
  let server: ServerProcess | undefined;

  /** A token from the configured issuer for the configured audience, signed by `key` (default RS256). */
  const token = (claims: TokenClaims, key: SigningKey = rsa) => signToken(key, { iss: ISS, aud: AUD, ...claims });
  const as = async (claims: TokenClaims, key?: SigningKey) => ({ authorization: bearer(await token(claims, key)) });

  const auditLine = async (event: string, pred: (l: Record<string, unknown>) => boolean) => {
    for (let i = 0; i < 100; i++) {
      const line = server!.stdout.find((l) => l['event'] === event && pred(l));
      if (line) return line;
      await new Promise((r) => setTimeout(r, 50));
    }
    return assert.fail(`no ${event} audit line; stdout: ${JSON.stringify(server!.stdout)}`);
  };

  /** Asserts a 401 UNAUTHENTICATED with WWW-Authenticate: Bearer. */
  const assert401 = (res: { status: number; body: any; headers: Headers }, what: string) => {
    assert.equal(res.status, 401, `${what}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.code, 'UNAUTHENTICATED', what);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer\b/, what);
  };

  before(async () => {
    rsa = await makeSigningKey('RS256', 'rsa-1');
    ed = await makeSigningKey('EdDSA', 'ed-1');
    stranger = await makeSigningKey('RS256', 'rsa-1');
    const jwksPath = join(dir.path, 'jwks.json');
    const keysPath = join(dir.path, 'keys.yaml');
    writeJwks(jwksPath, [rsa, ed]);
    writeKeysFile(keysPath, [apiEditor]);
    server = await startServer([
      '--auth-jwt-jwks-file',
      jwksPath,
      '--auth-jwt-issuer',
      ISS,
      '--auth-jwt-audience',
      AUD,
      '--auth-keys-file',
      keysPath,
      '--audit-sample-rate',
      '100',
    ]);
  });

  after(async () => {
    await server?.stop();
    dir.remove();
  });

  it('an editor JWT creates, updates and deletes a ruleset; each audit line carries principal = sub', async () => {
    const editor = await as({ sub: 'alice@example', role: 'editor' });
    const created = await http(server!.url, 'POST', '/api/v1/rulesets', rules('jwt-rules', 'ONE'), editor);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal((await auditLine('rule_created', (l) => l['rule_name'] === 'jwt-rules'))['principal'], 'alice@example');
    const edEditor = await as({ sub: 'bob@example', role: 'editor' }, ed);
    assert.equal(
      (
        await http(
          server!.url,
          'POST',
          '/api/v1/rulesets',
          { ...rules('jwt-rules', 'TWO'), config: { name: 'jwt-rules', entry_step: 'done', version: '2.0.0' } },
          edEditor,
        )
      ).status,
      200,
    );
    assert.equal((await auditLine('rule_updated', (l) => l['rule_name'] === 'jwt-rules'))['principal'], 'bob@example');
    const exec = await http(server!.url, 'POST', '/api/v1/execute/jwt-rules', { input: {} }, edEditor);
    assert.equal(exec.status, 200);
    assert.equal(exec.body.code, 'TWO');
    assert.equal((await auditLine('rule_executed', (l) => l['rule_name'] === 'jwt-rules'))['principal'], 'bob@example');
    assert.equal((await http(server!.url, 'DELETE', '/api/v1/rulesets/jwt-rules', undefined, editor)).status, 204);
    assert.equal((await auditLine('rule_deleted', (l) => l['rule_name'] === 'jwt-rules'))['principal'], 'alice@example');
  });

  it('a viewer JWT reads and executes but gets 403 naming "write" on writes', async () => {
    assert.equal((await http(server!.url, 'POST', '/api/v1/rulesets', rules('seen', 'S'), await as({ sub: 'alice', role: 'editor' }))).status, 200);
    const viewer = await as({ sub: 'vera', role: 'viewer' });
    assert.equal((await http(server!.url, 'GET', '/api/v1/rulesets/seen', undefined, viewer)).status, 200);
    assert.equal((await http(server!.url, 'POST', '/api/v1/execute/seen', { input: {} }, viewer)).status, 200);
    for (const [method, path, body] of [
      ['POST', '/api/v1/rulesets', rules('nope', 'N')],
      ['DELETE', '/api/v1/rulesets/seen', undefined],
    ] as const) {
      const res = await http(server!.url, method, path, body, viewer);
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.body.code, 'FORBIDDEN');
      assert.equal(res.body.missing_permission, 'write');
    }
    assert.equal((await http(server!.url, 'GET', '/api/v1/rulesets/nope', undefined, viewer)).status, 404, 'the refused write did not happen');
    assert.equal((await http(server!.url, 'GET', '/api/v1/rulesets/seen', undefined, viewer)).status, 200, 'the refused delete did not happen');
  });

  it('admin routes: an admin JWT for all tenants may set the sample rate; one for a single tenant gets 403 missing_tenant "*"', async () => {
    const global = await http(server!.url, 'PUT', '/api/v1/config/audit-sample-rate', { sample_rate: 100 }, await as({ sub: 'root', role: 'admin' }));
    assert.equal(global.status, 200, JSON.stringify(global.body));
    const one = await http(
      server!.url,
      'PUT',
      '/api/v1/config/audit-sample-rate',
      { sample_rate: 100 },
      await as({ sub: 'root', role: 'admin', tenants: ['acme'] }),
    );
    assert.equal(one.status, 403);
    assert.equal(one.body.missing_tenant, '*');
    const editor = await http(server!.url, 'PUT', '/api/v1/config/audit-sample-rate', { sample_rate: 100 }, await as({ sub: 'ed', role: 'editor' }));
    assert.equal(editor.status, 403);
    assert.equal(editor.body.missing_permission, 'admin');
  });

  it('a token whose role names no role is authenticated but allowed nothing (403, not 401)', async () => {
    const res = await http(server!.url, 'GET', '/api/v1/rulesets', undefined, await as({ sub: 'x', role: 'superuser' }));
    assert.equal(res.status, 403);
    assert.equal(res.body.missing_permission, 'read');
  });

  it('expired, garbage, wrongly signed, wrong issuer or audience, unsigned: 401 with WWW-Authenticate, the same answer for each', async () => {
    const now = Math.floor(Date.now() / 1000);
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const cases: Array<[string, string]> = [
      ['expired', await token({ sub: 'alice', role: 'admin', expIn: -120 })],
      ['garbage', 'abc.def.ghi'],
      ['not a token at all', 'hello'],
      ['wrongly signed (same kid, other key)', await token({ sub: 'alice', role: 'admin' }, stranger)],
      ['wrong issuer', await signToken(rsa, { sub: 'alice', role: 'admin', iss: 'https://evil.example', aud: AUD })],
      ['no audience', await signToken(rsa, { sub: 'alice', role: 'admin', iss: ISS })],
      ['wrong audience', await signToken(rsa, { sub: 'alice', role: 'admin', iss: ISS, aud: 'other' })],
      ['alg none', `${b64({ alg: 'none' })}.${b64({ sub: 'alice', svc_role: 'admin', svc_tenants: ['*'], iss: ISS, aud: AUD, exp: now + 300 })}.x`],
    ];
    const bodies = new Set<string>();
    for (const [what, credential] of cases) {
      const res = await http(server!.url, 'GET', '/api/v1/rulesets', undefined, { authorization: bearer(credential) });
      assert401(res, what);
      bodies.add(JSON.stringify(res.body));
    }
    assert.equal(bodies.size, 1, `one answer for every bad token: ${[...bodies].join(' | ')}`);
    const missing = await http(server!.url, 'GET', '/api/v1/rulesets');
    assert401(missing, 'no credential');
    const failed = server!.stdout.filter((l) => l['event'] === 'auth_failed');
    assert.ok(failed.length > 0);
    assert.ok(
      failed.some((l) => l['reason'] === 'expired' || l['reason'] === 'invalid_token'),
      JSON.stringify(failed),
    );
  });

  it('an API key from the keys file works beside the JWKS (principal = key id)', async () => {
    const key = { authorization: bearer(apiEditor.key) };
    assert.equal((await http(server!.url, 'POST', '/api/v1/rulesets', rules('by-key', 'K'), key)).status, 200);
    assert.equal((await auditLine('rule_created', (l) => l['rule_name'] === 'by-key'))['principal'], 'deployer');
    const ghost = makeTestKey('deployer', 'editor');
    assert401(await http(server!.url, 'GET', '/api/v1/rulesets', undefined, { authorization: bearer(ghost.key) }), 'unknown API key');
  });
});
