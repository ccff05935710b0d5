/**
 * EXTENSIONS.md 6: a reserved ruleset name is refused at validation (400 with the reason), from
 * the same list the file store refuses (src/ruleset/reserved-names.ts), instead of a 500 storage
 * failure no retry can fix.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RESERVED_RULESET_NAMES } from '../../../src/ruleset/reserved-names.js';
import { validateRuleset } from '../../../src/ruleset/validate.js';
import { isReservedName, TENANTS_FILE } from '../../../src/store/layout.js';
import { ageRules, assertError, makeHarness, type Harness } from '../http/harness.js';

describe('reserved ruleset names', () => {
  it('the list covers every name the file store refuses at the root', () => {
    assert.ok(RESERVED_RULESET_NAMES.has(TENANTS_FILE.replace(/\.json$/, '')));
    for (const name of RESERVED_RULESET_NAMES.keys()) assert.equal(isReservedName('default', name), true);
    assert.equal(isReservedName('default', 'loan'), false);
  });
  it('validation refuses them with the reason', () => {
    const problems = validateRuleset(ageRules('tenants'));
    assert.deepEqual(
      problems.map((p) => p.path),
      ['config.name'],
    );
    assert.match(problems[0]!.message, /reserved.*tenants\.json/);
    assert.deepEqual(validateRuleset(ageRules('tenants2')), []);
  });

  for (const persistent of [false, true]) {
    describe(persistent ? 'file store' : 'memory store', () => {
      let h: Harness;
      before(async () => {
        h = await makeHarness(persistent ? { rulesDir: true } : {});
      });
      after(() => h.close());
      it('POST a ruleset named tenants is 400 BAD_REQUEST naming the reason', async () => {
        const body = assertError(await h.request('POST', '/api/v1/rulesets', ageRules('tenants')), 400, 'BAD_REQUEST');
        assert.match(JSON.stringify(body['problems']), /config\.name.*reserved/);
        assert.equal((await h.request('GET', '/api/v1/rulesets/tenants')).status, 404);
      });
    });
  }
});
