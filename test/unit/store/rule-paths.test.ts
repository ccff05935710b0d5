import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { classifyRulePath, isIgnoredPath } from '../../../src/store/rule-paths.js';

const dir = '/srv/rules';
const at = (...p: string[]) => join(dir, ...p);

describe('rule paths seen by the watcher', () => {
  it('maps rule files of the default tenant and of other tenants', () => {
    assert.deepEqual(classifyRulePath(dir, at('pricing.json')), { kind: 'rule', tenant: 'default', name: 'pricing' });
    assert.deepEqual(classifyRulePath(dir, at('a.b.yaml')), { kind: 'rule', tenant: 'default', name: 'a.b' });
    assert.deepEqual(classifyRulePath(dir, at('x.yml')), { kind: 'rule', tenant: 'default', name: 'x' });
    assert.deepEqual(classifyRulePath(dir, at('x.svc')), { kind: 'rule', tenant: 'default', name: 'x' });
    assert.deepEqual(classifyRulePath(dir, at('tenants', 'acme', 'r.json')), { kind: 'rule', tenant: 'acme', name: 'r' });
  });

  it('recognises the tenant registry and tenant directories', () => {
    assert.deepEqual(classifyRulePath(dir, at('tenants.json')), { kind: 'tenants-file' });
    assert.deepEqual(classifyRulePath(dir, at('tenants', 'acme')), { kind: 'tenant-dir', tenant: 'acme' });
    assert.deepEqual(classifyRulePath(dir, at('tenants')), { kind: 'tenants-root' });
  });

  it('ignores history, temp files, the probe, other extensions and odd places', () => {
    for (const p of [
      at('.versions', 'r', 'v1_1.json'),
      at('.r.json.123.abc.tmp'),
      at('.health_probe'),
      at('notes.txt'),
      at('tenants', 'default', 'r.json'),
      at('tenants', 'acme', '.versions', 'r', 'v1_1.json'),
      at('sub', 'r.json'),
      '/elsewhere/r.json',
    ]) {
      assert.equal(classifyRulePath(dir, p).kind, 'other', p);
    }
    assert.equal(isIgnoredPath(dir, at('.versions')), true);
    assert.equal(isIgnoredPath(dir, at('.x.tmp')), true);
    assert.equal(isIgnoredPath(dir, dir), false);
    assert.equal(isIgnoredPath(dir, at('tenants')), false);
    assert.equal(isIgnoredPath(dir, at('tenants', 'acme', 'r.json')), false);
  });

  it('maps shadow files and shadows directories of every tenant, and keeps them watched', () => {
    assert.deepEqual(classifyRulePath(dir, at('shadows', 'pricing.json')), { kind: 'shadow', tenant: 'default', name: 'pricing' });
    assert.deepEqual(classifyRulePath(dir, at('tenants', 'acme', 'shadows', 'r.json')), { kind: 'shadow', tenant: 'acme', name: 'r' });
    assert.deepEqual(classifyRulePath(dir, at('shadows')), { kind: 'shadow-dir', tenant: 'default' });
    assert.deepEqual(classifyRulePath(dir, at('tenants', 'acme', 'shadows')), { kind: 'shadow-dir', tenant: 'acme' });
    for (const p of [
      at('shadows', 'r.yaml'),
      at('shadows', '.r.json.1.tmp'),
      at('shadows', 'x', 'r.json'),
      at('tenants', 'acme', 'shadows', 'bad name.json'),
    ]) {
      assert.equal(classifyRulePath(dir, p).kind, 'other', p);
    }
    assert.equal(isIgnoredPath(dir, at('tenants', 'acme', 'shadows', 'r.json')), false);
    assert.equal(isIgnoredPath(dir, at('tenants', 'acme', 'other', 'r.json')), true);
  });
});
