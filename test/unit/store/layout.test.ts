import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { historyDir, historyFileName, isoFromUnixSeconds, parseHistoryFileName, parseRuleFileName, rulePath, tenantDir } from '../../../src/store/layout.js';

const ROOT = '/rules';

describe('store layout', () => {
  it('puts the default tenant at the root and others under tenants/<id>/', () => {
    assert.equal(tenantDir(ROOT, 'default'), ROOT);
    assert.equal(tenantDir(ROOT, 'acme'), join(ROOT, 'tenants', 'acme'));
    assert.equal(rulePath(ROOT, 'default', 'a'), join(ROOT, 'a.json'));
    assert.equal(rulePath(ROOT, 'acme', 'a', '.yaml'), join(ROOT, 'tenants', 'acme', 'a.yaml'));
    assert.equal(historyDir(ROOT, 'default', 'a'), join(ROOT, '.versions', 'a'));
    assert.equal(historyDir(ROOT, 'acme', 'a'), join(ROOT, 'tenants', 'acme', '.versions', 'a'));
  });

  it('throws on names and tenant ids that could leave the rules dir', () => {
    for (const bad of ['../etc/passwd', '..', '.hidden', 'a/b', 'a\\b', 'a\0b', 'x'.repeat(129), '']) {
      assert.throws(() => rulePath(ROOT, 'default', bad), /invalid ruleset name/);
      assert.throws(() => historyDir(ROOT, 'default', bad), /invalid ruleset name/);
      assert.throws(() => tenantDir(ROOT, bad), /invalid tenant id/);
      assert.throws(() => rulePath(ROOT, bad, 'a'), /invalid tenant id/);
    }
  });

  it('names history files v<seq>_<unix-seconds>.json and parses them back', () => {
    assert.equal(historyFileName(3, 1700000000), 'v3_1700000000.json');
    assert.deepEqual(parseHistoryFileName('v3_1700000000.json'), { seq: 3, unixSeconds: 1700000000 });
    for (const other of ['v0_1.json', 'v1_1.json.tmp', '.v1_1.json.123.tmp', 'v1.json', 'x1_1.json', 'v01_1.json']) {
      assert.equal(parseHistoryFileName(other), undefined, other);
    }
    assert.throws(() => historyFileName(0, 1));
  });

  it('formats ISO 8601 UTC timestamps without fractional seconds', () => {
    assert.equal(isoFromUnixSeconds(1700000000), '2023-11-14T22:13:20Z');
  });

  it('splits rule file names on the last rule extension only', () => {
    assert.deepEqual(parseRuleFileName('a.json'), { name: 'a', ext: '.json' });
    assert.deepEqual(parseRuleFileName('a.yaml.json'), { name: 'a.yaml', ext: '.json' });
    assert.deepEqual(parseRuleFileName('a.b.svc'), { name: 'a.b', ext: '.svc' });
    assert.equal(parseRuleFileName('a.txt'), undefined);
    assert.equal(parseRuleFileName('.json'), undefined);
  });
});
