/**
 * Signature checks on synchronized rules (EXTENSIONS.md 1): a reader with signature
 * verification on verifies every rule it receives from the broker exactly as a local rule file.
 * Forged events published straight to the subject on a real nats-server (unsigned, signed by an
 * untrusted key, a signed body tampered with) are logged and not applied, at the live consumer
 * and at a later reader's bootstrap; rules signed by a trusted key, published by the writer, are.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { generateKeyPair, signDoc, toBase64 } from '../../src/signing/index.js';
import { encodeEnvelope, ruleSubject, type SyncEnvelope } from '../../src/sync/events.js';
import { loadNatsApi } from '../../src/sync/nats-api.js';
import { http, type ServerProcess } from '../helpers/server-process.js';
import { SyncCluster, ruleset, servedVersion, waitConnected, waitFor } from '../helpers/sync-cluster.js';

const SKIPPED = 'synchronized rule skipped; the loaded version keeps serving';
const trusted = generateKeyPair();
const stranger = generateKeyPair();
const TRUSTED = toBase64(trusted.publicKeyRaw);

/** Publishes a `RulePut` for `doc` straight to the stream, as another instance would. */
async function forge(url: string, doc: Record<string, unknown>): Promise<void> {
  const loaded = await loadNatsApi();
  assert.ok(loaded.ok, 'the NATS client is installed');
  const nc = await loaded.api.connect({ servers: [url] });
  try {
    const config = doc['config'] as { name: string; version: string };
    const envelope: SyncEnvelope = {
      instance_id: 'forger',
      timestamp_ms: Date.now(),
      event: { type: 'RulePut', tenant_id: 'default', name: config.name, ruleset_json: JSON.stringify(doc), version: config.version },
    };
    await loaded.api.jetstream(nc).publish(ruleSubject('svc.rules', 'default', config.name), encodeEnvelope(envelope), { msgID: randomUUID(), timeout: 5000 });
  } finally {
    await nc.close();
  }
}

const code = async (proc: ServerProcess, name: string) => (await http(proc.url, 'POST', `/api/v1/execute/${name}`, { input: {} })).body.code as string;

describe('broker sync: a verifying reader checks the signature of every synchronized rule', () => {
  const cluster = new SyncCluster();
  after(() => cluster.dispose());
  const verifying = ['--signature-enabled', '--signature-require', '--signature-allow-unsigned-local=false', '--signature-trusted-keys', TRUSTED];

  it('applies rules signed by a trusted key and skips forged ones, keeping the previous version', async () => {
    const nats = await cluster.startNats();
    const writer = await cluster.writer(['--instance-id', 'sig-writer', '--signature-enabled', '--signature-trusted-keys', TRUSTED]);
    const reader = await cluster.reader(['--instance-id', 'sig-reader', ...verifying]);
    await Promise.all([waitConnected(writer), waitConnected(reader)]);

    // A signed rule published by the writer is applied.
    const v1 = signDoc(ruleset('pricing', '1.0.0', 'GOOD1'), trusted.privateKey);
    assert.equal((await http(writer.url, 'POST', '/api/v1/rulesets', v1)).body.status, 'created');
    await waitFor('pricing 1.0.0 on the reader', async () => (await servedVersion(reader.url, 'pricing')) === '1.0.0');

    // Forged events straight to the subject: each is logged with tenant, name and reason, and not applied.
    const signedV3 = signDoc(ruleset('pricing', '3.0.0', 'GOOD3'), trusted.privateKey);
    const forged: Array<[string, Record<string, unknown>, string]> = [
      ['unsigned', ruleset('pricing', '2.0.0', 'EVIL'), 'no signature found'],
      ['untrusted key', signDoc(ruleset('pricing', '2.1.0', 'EVIL'), stranger.privateKey), 'untrusted public key'],
      ['tampered body', { ...signedV3, steps: { t: { type: 'terminal', result: { code: 'EVIL' } } } }, 'invalid signature'],
    ];
    for (const [what, doc, reason] of forged) {
      const seen = reader.logs.filter((l) => l['msg'] === SKIPPED).length;
      await forge(nats.url, doc);
      await waitFor(`${what}: skip logged`, () => reader.logs.filter((l) => l['msg'] === SKIPPED).length > seen);
      const line = reader.logs.filter((l) => l['msg'] === SKIPPED).at(-1)!;
      assert.deepEqual(
        [line['level'], line['tenant'], line['name'], line['reason']],
        ['warn', 'default', 'pricing', `signature verification failed: ${reason}`],
        what,
      );
      assert.equal(await servedVersion(reader.url, 'pricing'), '1.0.0', `${what}: the previous version keeps serving`);
      assert.equal(await code(reader, 'pricing'), 'GOOD1', what);
    }
    await forge(nats.url, ruleset('intruder', '1.0.0', 'EVIL'));
    await waitFor('intruder skip logged', () => reader.logs.some((l) => l['msg'] === SKIPPED && l['name'] === 'intruder'));
    assert.equal((await http(reader.url, 'GET', '/api/v1/rulesets/intruder')).status, 404);
    const health = await http(reader.url, 'GET', '/health');
    assert.ok(health.body.sync.broker.skipped >= 4, JSON.stringify(health.body.sync.broker));

    // The writer's next signed version is applied after the forged ones.
    assert.equal(
      (await http(writer.url, 'POST', '/api/v1/rulesets', signDoc(ruleset('pricing', '4.0.0', 'GOOD4'), trusted.privateKey))).body.status,
      'updated',
    );
    await waitFor('pricing 4.0.0 on the reader', async () => (await servedVersion(reader.url, 'pricing')) === '4.0.0');
    assert.equal(await code(reader, 'pricing'), 'GOOD4');

    // A reader started now replays the latest event of every subject: the forged one is skipped there too.
    const late = await cluster.reader(['--instance-id', 'sig-late', ...verifying]);
    await waitFor('late reader bootstrapped', async () => (await http(late.url, 'GET', '/health')).body.sync?.broker?.bootstrapped === true);
    assert.equal(await servedVersion(late.url, 'pricing'), '4.0.0');
    assert.equal((await http(late.url, 'GET', '/api/v1/rulesets/intruder')).status, 404);
    const lateSkip = late.logs.find((l) => l['msg'] === SKIPPED && l['name'] === 'intruder');
    assert.equal(lateSkip?.['reason'], 'signature verification failed: no signature found');
  });
});
