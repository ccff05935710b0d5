/**
 * The client's hand-written answer types fit what the server builds: each façade method's return
 * type (what the route answers) must be assignable to the client's type of that answer. Checked
 * by the type checker (`tsc -p tsconfig.test.json`): a field renamed, retyped or added as
 * required on either side fails to compile here. Where the server types a field more loosely
 * than its answers are (`warnings: unknown[]`, `input: unknown`), that field is left out.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type * as client from '../../../client/src/index.js';
import type { DataServiceApi } from '../../../src/service/data-service.js';
import type { DebugRuleset } from '../../../src/service/debug-view.js';
import type { TenantManagerApi } from '../../../src/service/tenant-manager.js';
import type { RuleServiceApi } from '../../../src/service/types.js';

/** `T` without `readonly` anywhere (the server's answers are readonly; the client's are not). */
type Writable<T> = T extends ReadonlyArray<infer U> ? Writable<U>[] : T extends object ? { -readonly [K in keyof T]: Writable<T[K]> } : T;

/** The answer of façade method `M`. */
type Answer<M extends keyof RuleServiceApi> = RuleServiceApi[M] extends (...args: never[]) => infer R ? Writable<Awaited<R>> : never;

/** Compiles only when `Server` is assignable to `Client`. */
function fits<Server, Client>(ok: [Server] extends [Client] ? true : false): boolean {
  return ok;
}

describe('svc-client answer types', () => {
  it("every answer the server builds fits the client's type", () => {
    const checks = [
      fits<Answer<'listRulesets'>, client.RulesetInfo[]>(true),
      fits<Omit<Answer<'putRuleset'>, 'warnings'>, client.PutRulesetResult>(true),
      fits<Answer<'getRuleset'>, client.RulesetDocument>(true),
      fits<Answer<'versions'>, client.VersionsResult>(true),
      fits<Answer<'analysis'>, client.AnalysisResult>(true),
      fits<Answer<'rollback'>, client.RollbackResult>(true),
      fits<Answer<'filter'>, client.FilterResult>(true),
      fits<Answer<'inputSchema'>, client.InputSchemaResult>(true),
      fits<Answer<'testRuleset'>, client.TestReport>(true),
      fits<Omit<Answer<'diff'>, 'behavior'>, Omit<client.DiffResult, 'behavior'>>(true),
      fits<Omit<NonNullable<Answer<'diff'>['behavior']>, 'regions'>, Omit<client.Behavior, 'regions'>>(true),
      fits<Omit<Answer<'impact'>, 'examples'>, Omit<client.ImpactResult, 'examples'>>(true),
      fits<Answer<'draftValidate'>, client.DraftValidation>(true),
      fits<Answer<'execute'>, client.ExecutionResult>(true),
      fits<Answer<'execute'>, client.ExecuteResult>(true),
      fits<Answer<'executeBatch'>, client.BatchResult>(true),
      fits<Answer<'evaluate'>, client.EvalResult>(true),
      fits<Answer<'draftExecute'>, client.ExecutionResult>(true),
      fits<Answer<'draftFilter'>, client.FilterResult>(true),
      fits<Answer<'draftTest'>, client.TestReport>(true),
      fits<Omit<Answer<'putShadow'>, 'warnings'>, client.ShadowPutResult>(true),
      fits<Omit<Answer<'getShadow'>, 'examples'>, Omit<client.ShadowState, 'examples'>>(true),
      fits<Omit<Answer<'promoteShadow'>, 'warnings'>, client.ShadowPromoteResult>(true),
      fits<Answer<'getAuditSampleRate'>, client.AuditSampleRate>(true),
      fits<Answer<'setAuditSampleRate'>, client.AuditSampleRateChange>(true),
      fits<Answer<'health'>, client.HealthInfo>(true),
      fits<Writable<ReturnType<DataServiceApi['list']>>, client.DataInfo[]>(true),
      fits<Writable<Awaited<ReturnType<DataServiceApi['put']>>>, client.DataPutResult>(true),
      fits<Writable<ReturnType<TenantManagerApi['list']>>, client.Tenant[]>(true),
      fits<Writable<ReturnType<TenantManagerApi['get']>>, client.Tenant>(true),
      fits<Writable<DebugRuleset>, client.DebugRuleset>(true),
    ];
    assert.ok(checks.every((c) => c));
  });
});
