/**
 * Metrics in multi-tenancy mode: the per-ruleset series carry a `tenant` label so equal names
 * of two tenants stay apart; without multi-tenancy the labels are exactly the spec'd ones.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Metrics } from '../../../src/observe/index.js';

test('tenant label on: same ruleset name in two tenants gives two series; forgetting is per tenant', async () => {
  const m = new Metrics({ version: 't', tenantLabel: true });
  m.recordExecution('price', 0.001, true, 'OK', 'alpha');
  m.recordExecution('price', 0.001, true, 'OK', 'alpha');
  m.recordExecution('price', 0.001, false, undefined, 'beta');
  m.recordExecution('price', 0.001, true, 'OK');
  m.observeCompilation('price', 0.001, 'beta');
  let text = await m.render();
  assert.match(text, /svc_executions_total\{ruleset="price",tenant="alpha",result="success"\} 2/);
  assert.match(text, /svc_executions_total\{ruleset="price",tenant="beta",result="error"\} 1/);
  assert.match(text, /svc_executions_total\{ruleset="price",tenant="default",result="success"\} 1/);
  assert.match(text, /svc_terminal_results_total\{ruleset="price",tenant="alpha",code="OK"\} 2/);
  assert.match(text, /svc_execution_duration_seconds_count\{ruleset="price",tenant="beta"\} 1/);
  assert.match(text, /svc_compilation_duration_seconds_count\{ruleset="price",tenant="beta"\} 1/);
  m.forgetRuleset('price', 'beta');
  text = await m.render();
  assert.doesNotMatch(text, /tenant="beta"/);
  assert.match(text, /tenant="alpha"/);
  assert.match(text, /tenant="default"/);
});

test('tenant label off: the spec labels only', async () => {
  const m = new Metrics({ version: 't' });
  m.recordExecution('price', 0.001, true, 'OK', 'default');
  m.recordExecution('price', 0.001, true, 'OK');
  const text = await m.render();
  assert.match(text, /svc_executions_total\{ruleset="price",result="success"\} 2/);
  assert.doesNotMatch(text, /tenant=/);
});
