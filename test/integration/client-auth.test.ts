/**
 * svc-client with authentication on (a real server with an API keys file and a JWKS): the
 * `apiKey` and `token` options (a JWT, and a function giving it), and the typed 401 and 403.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SvcClient, SvcError, type RulesetDocument } from '../../client/src/index.js';
import { writeKeysFile, type KeysFile } from '../helpers/auth-fixtures.js';
import { makeSigningKey, signToken, writeJwks, type SigningKey } from '../helpers/auth-jwt.js';
import { startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

const DOC: RulesetDocument = { config: { name: 'door', entry_step: 'done' }, steps: { done: { type: 'terminal', result: { code: 'OPEN', message: 'open' } } } };

async function svcError(fn: () => Promise<unknown>): Promise<SvcError> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof SvcError, `not an SvcError: ${String(err)}`);
    return err;
  }
  return assert.fail('the call did not throw');
}

describe('svc-client with authentication on', () => {
  const dir = tempDir('svc-client-auth-');
  let server: ServerProcess;
  let keys: KeysFile;
  let signer: SigningKey;

  before(async () => {
    keys = writeKeysFile(dir.path, [
      { id: 'executor', role: 'executor' },
      { id: 'editor', role: 'editor' },
      { id: 'shop-viewer', role: 'viewer', tenants: ['shop'] },
    ]);
    signer = await makeSigningKey('EdDSA', 'ed-client');
    const jwks = join(dir.path, 'jwks.json');
    writeJwks(jwks, [signer]);
    server = await startServer(['--disable-grpc', '--auth-keys-file', keys.path, '--auth-jwt-jwks-file', jwks, '--multi-tenancy-enabled']);
  });

  after(async () => {
    await server.stop();
    dir.remove();
  });

  it('no credential: 401 UNAUTHENTICATED; a public route still answers', async () => {
    const anonymous = new SvcClient({ baseUrl: server.url });
    const err = await svcError(() => anonymous.listRulesets());
    assert.deepEqual([err.status, err.code], [401, 'UNAUTHENTICATED']);
    assert.match(err.message, /Authorization: Bearer/);
    assert.deepEqual(await anonymous.live(), { status: 'alive' });
  });

  it('an unknown API key: 401; a key without the permission: 403 naming it', async () => {
    const unknown = new SvcClient({ baseUrl: server.url, apiKey: `svck_${'A'.repeat(43)}` });
    assert.equal((await svcError(() => unknown.listRulesets())).status, 401);

    const executor = new SvcClient({ baseUrl: server.url, apiKey: keys.keys['executor']! });
    const forbidden = await svcError(() => executor.putRuleset(DOC));
    assert.deepEqual([forbidden.status, forbidden.code, forbidden.details.missing_permission], [403, 'FORBIDDEN', 'write']);
  });

  it('a key for another tenant: 403 naming the tenant; the tenant option makes it pass', async () => {
    const admin = new SvcClient({ baseUrl: server.url, token: await signToken(signer, { sub: 'ops', role: 'admin' }) });
    await admin.createTenant({ id: 'shop' });
    const viewer = new SvcClient({ baseUrl: server.url, apiKey: keys.keys['shop-viewer']! });
    const wrongTenant = await svcError(() => viewer.listRulesets());
    assert.deepEqual([wrongTenant.status, wrongTenant.code, wrongTenant.details.missing_tenant], [403, 'FORBIDDEN', 'default']);
    assert.deepEqual(await viewer.listRulesets({ tenant: 'shop' }), []);
  });

  it('an API key with the permission, and a JWT given by a function (called per request)', async () => {
    const editor = new SvcClient({ baseUrl: server.url, apiKey: keys.keys['editor']! });
    assert.equal((await editor.putRuleset(DOC)).status, 'created');

    let calls = 0;
    const jwtClient = new SvcClient({
      baseUrl: server.url,
      token: async () => {
        calls++;
        return signToken(signer, { sub: 'ci', role: 'viewer' });
      },
    });
    assert.equal((await jwtClient.execute('door', {})).code, 'OPEN');
    assert.equal((await jwtClient.getRuleset('door')).config.name, 'door');
    assert.equal(calls, 2);
    const denied = await svcError(() => jwtClient.deleteRuleset('door'));
    assert.deepEqual([denied.status, denied.details.missing_permission], [403, 'write']);
    await editor.deleteRuleset('door');
  });

  it('apiKey and token together are refused at construction', () => {
    assert.throws(() => new SvcClient({ baseUrl: server.url, apiKey: 'a', token: 'b' }), /apiKey or token, not both/);
  });
});
