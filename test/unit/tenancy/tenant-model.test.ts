/**
 * Tenant records: validation with every problem at once, defaults, the `tenants.json`
 * document, and the registry file (atomic writes, broken files refused).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ServiceError } from '../../../src/service/errors.js';
import { checkTenantRecord, parseTenantRecord, parseTenantsDocument, tenantsDocument } from '../../../src/service/tenant-model.js';
import { TenantFile } from '../../../src/store/tenant-file.js';

test('a minimal record gets its defaults: name = id, enabled, no limits', () => {
  assert.deepEqual(parseTenantRecord({ id: 'acme' }), {
    id: 'acme',
    name: 'acme',
    enabled: true,
    qps_limit: null,
    burst: null,
    execution_timeout_ms: null,
    max_rulesets: null,
  });
});

test('a full record is kept as given', () => {
  const body = { id: 'a.b-c_1', name: 'ACME Corp', enabled: false, qps_limit: 0.5, burst: 3, execution_timeout_ms: 0, max_rulesets: 0 };
  assert.deepEqual(parseTenantRecord(body), body);
});

test('every problem is reported at once, located by field', () => {
  const out = checkTenantRecord({
    id: '../etc',
    name: '',
    enabled: 'yes',
    qps_limit: -1,
    burst: 1.5,
    execution_timeout_ms: -3,
    max_rulesets: 'ten',
    qps: 5,
  });
  assert.equal(out.ok, false);
  const paths = (out as { problems: Array<{ path: string }> }).problems.map((p) => p.path).sort();
  assert.deepEqual(paths, ['burst', 'enabled', 'execution_timeout_ms', 'id', 'max_rulesets', 'name', 'qps', 'qps_limit']);
});

test('parseTenantRecord throws 400 BAD_REQUEST with the problems as a detail', () => {
  try {
    parseTenantRecord({ id: 'x', burst: 2 });
    assert.fail('should throw');
  } catch (err) {
    assert.ok(err instanceof ServiceError);
    assert.equal(err.code, 'BAD_REQUEST');
    assert.match(err.message, /burst: needs qps_limit/);
    assert.deepEqual(err.details?.['problems'], [{ path: 'burst', message: 'needs qps_limit (a burst without a rate limit means nothing)' }]);
  }
  assert.throws(() => parseTenantRecord([]), /must be a JSON object/);
  assert.throws(() => parseTenantRecord({}), /id: is required/);
});

test('with an id from the path, the body id may be omitted or must match', () => {
  assert.equal(parseTenantRecord({ name: 'n' }, 'acme').id, 'acme');
  assert.equal(parseTenantRecord({ id: 'acme' }, 'acme').id, 'acme');
  assert.throws(() => parseTenantRecord({ id: 'other' }, 'acme'), /must equal the id in the path/);
});

test('the default tenant cannot be disabled', () => {
  assert.throws(() => parseTenantRecord({ id: 'default', enabled: false }), /cannot be disabled/);
  assert.equal(parseTenantRecord({ id: 'default', qps_limit: 100 }).qps_limit, 100);
});

test('tenants.json: sorted by id, duplicates and bad records refused as a whole', () => {
  const doc = tenantsDocument([parseTenantRecord({ id: 'b' }), parseTenantRecord({ id: 'a', max_rulesets: 2 })]);
  assert.deepEqual(
    doc.tenants.map((t) => t.id),
    ['a', 'b'],
  );
  assert.deepEqual(parseTenantsDocument(JSON.parse(JSON.stringify(doc))), doc.tenants);
  assert.throws(() => parseTenantsDocument({ tenants: [{ id: 'a' }, { id: 'a' }] }), /tenants\[1\]\.id: duplicate id 'a'/);
  assert.throws(() => parseTenantsDocument({ tenants: [{ id: 'ok' }, { id: 'bad', qps_limit: 0 }] }), /tenants\[1\]\.qps_limit/);
  assert.throws(() => parseTenantsDocument([]), /"tenants"/);
});

test('TenantFile: missing file is null; writes are atomic (no temp file left) and read back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-tenant-file-'));
  try {
    const file = new TenantFile(dir);
    assert.equal(await file.read(), null);
    const records = [parseTenantRecord({ id: 'zeta' }), parseTenantRecord({ id: 'alpha', qps_limit: 5 })];
    await file.write(records);
    assert.deepEqual(readdirSync(dir), ['tenants.json']);
    const onDisk = JSON.parse(readFileSync(join(dir, 'tenants.json'), 'utf8'));
    assert.deepEqual(
      onDisk.tenants.map((t: { id: string }) => t.id),
      ['alpha', 'zeta'],
    );
    assert.deepEqual(await file.read(), tenantsDocument(records).tenants);
    writeFileSync(join(dir, 'tenants.json'), '{"tenants": [');
    await assert.rejects(file.read(), /tenants\.json is not valid JSON/);
    writeFileSync(join(dir, 'tenants.json'), '{"tenants": [{"id": "x", "enabled": 1}]}');
    await assert.rejects(file.read(), /tenants\.json is invalid: tenants\[0\]\.enabled/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
