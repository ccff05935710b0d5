/**
 * Keeps the one error catalog (src/service/errors.ts), the transports (HTTP and gRPC) and
 * docs/errors.md in agreement (architecture guide, point 4; DECISIONS.md 3 and 5).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { status as grpcJsStatus } from '@grpc/grpc-js';
import { ERROR_CATALOG, GrpcStatus, ServiceError, type ErrorCode } from '../../../src/service/errors.js';
import { toGrpcStatus } from '../../../src/transport/grpc/status.js';
import { toHttpError } from '../../../src/transport/http/errors.js';
import { ROOT } from '../../helpers/server-process.js';

const CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];
const GRPC_NAME_OF = new Map<number, string>(Object.entries(GrpcStatus).map(([name, n]) => [n, name]));

/** Rows of the "The catalog" table of docs/errors.md: code → {http, grpc}. */
function docsCatalog(): Map<string, { http: number; grpc: string }> {
  const text = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
  const start = text.indexOf('## The catalog');
  assert.ok(start >= 0, 'docs/errors.md has a "## The catalog" section');
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  const rows = new Map<string, { http: number; grpc: string }>();
  for (const line of section.split('\n')) {
    const m = /^\|\s*`([A-Z_]+)`\s*\|\s*(\d{3})\s*\|\s*([A-Z_]+)\s*\|/.exec(line);
    if (!m) continue;
    assert.equal(rows.has(m[1]!), false, `docs/errors.md lists ${m[1]} once`);
    rows.set(m[1]!, { http: Number(m[2]), grpc: m[3]! });
  }
  return rows;
}

/** Every .ts file under a directory. */
function sources(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

describe('error catalog', () => {
  it('matches the HTTP statuses of DECISIONS.md 3', () => {
    const http: Record<ErrorCode, number> = {
      BAD_REQUEST: 400,
      INPUT_INVALID: 400,
      UNAUTHENTICATED: 401,
      FORBIDDEN: 403,
      NOT_FOUND: 404,
      TENANT_NOT_FOUND: 404,
      METHOD_NOT_ALLOWED: 405,
      REQUEST_TIMEOUT: 408,
      READ_ONLY: 409,
      CONFLICT: 409,
      PAYLOAD_TOO_LARGE: 413,
      UNSUPPORTED_MEDIA_TYPE: 415,
      TESTS_FAILED: 422,
      RATE_LIMITED: 429,
      INTERNAL_ERROR: 500,
      CALL_FAILED: 500,
      TIMEOUT: 500,
      LIMIT_EXCEEDED: 500,
      NOT_READY: 503,
    };
    assert.deepEqual(Object.fromEntries(CODES.map((c) => [c, ERROR_CATALOG[c].http])), http);
  });

  it('matches the gRPC statuses of DECISIONS.md 5', () => {
    const fixed: Partial<Record<ErrorCode, keyof typeof GrpcStatus>> = {
      NOT_FOUND: 'NOT_FOUND',
      BAD_REQUEST: 'INVALID_ARGUMENT',
      INTERNAL_ERROR: 'INTERNAL',
      TIMEOUT: 'DEADLINE_EXCEEDED',
      READ_ONLY: 'FAILED_PRECONDITION',
      RATE_LIMITED: 'RESOURCE_EXHAUSTED',
    };
    for (const [code, name] of Object.entries(fixed)) {
      assert.equal(GRPC_NAME_OF.get(ERROR_CATALOG[code as ErrorCode].grpc), name, code);
    }
  });

  it('GrpcStatus numbers are the ones of @grpc/grpc-js', () => {
    for (const [name, n] of Object.entries(GrpcStatus)) {
      assert.equal((grpcJsStatus as unknown as Record<string, number>)[name], n, name);
    }
  });

  it('docs/errors.md has a row for every catalog code with the same HTTP and gRPC status', () => {
    const docs = docsCatalog();
    for (const code of CODES) {
      const row = docs.get(code);
      assert.ok(row, `docs/errors.md documents ${code}`);
      assert.equal(row.http, ERROR_CATALOG[code].http, `HTTP status of ${code}`);
      assert.equal(row.grpc, GRPC_NAME_OF.get(ERROR_CATALOG[code].grpc), `gRPC status of ${code}`);
    }
  });

  it('every code documented in docs/errors.md exists in the catalog', () => {
    const text = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
    for (const code of docsCatalog().keys()) assert.ok(code in ERROR_CATALOG, `${code} of docs/errors.md is in the catalog`);
    // the detail-field table and the examples name catalog codes only (an answer's analysis
    // `warnings` carry warning codes, which are not errors)
    const errorText = text
      .split('\n')
      .filter((line) => !line.includes('"warnings"'))
      .join('\n');
    for (const m of errorText.matchAll(/"code":\s*"([A-Z_]+)"|^\|\s*`([A-Z_]+)`/gm)) {
      const code = m[1] ?? m[2]!;
      assert.ok(code in ERROR_CATALOG, `${code} mentioned in docs/errors.md is in the catalog`);
    }
  });

  it('every error code written in src/ is a catalog code (and so documented)', () => {
    const docs = docsCatalog();
    const used = new Set<string>();
    for (const file of sources(join(ROOT, 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/ServiceError\(\s*['"]([A-Z_]+)['"]/g)) {
        assert.ok(m[1]! in ERROR_CATALOG, `${relative(ROOT, file)} uses ${m[1]}, which the catalog lacks`);
        used.add(m[1]!);
      }
    }
    for (const code of used) assert.ok(docs.has(code), `${code} is documented`);
    assert.ok(used.size >= 8, `found the codes in use (${[...used].join(', ')})`);
  });

  it('HTTP: every catalog code answers its catalog status and {error, code} body', () => {
    for (const code of CODES) {
      const e = toHttpError(new ServiceError(code, `message of ${code}`, { extra: 1 }));
      assert.equal(e.httpStatus, ERROR_CATALOG[code].http);
      assert.deepEqual(e.toBody(), { error: `message of ${code}`, code, extra: 1 });
    }
  });

  it('HTTP: framework errors map by status to the catalog code of that status', () => {
    for (const status of [400, 403, 404, 405, 408, 413, 415, 429]) {
      const e = toHttpError(Object.assign(new Error(`fastify says ${status}`), { statusCode: status, code: 'FST_ERR_SOMETHING' }));
      assert.equal(e.httpStatus, status, `status ${status} -> ${e.code}`);
    }
    const media = toHttpError(Object.assign(new Error('x'), { statusCode: 415, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }));
    assert.equal(media.code, 'UNSUPPORTED_MEDIA_TYPE');
    assert.equal(toHttpError(new Error('boom')).code, 'INTERNAL_ERROR');
    assert.equal(toHttpError(Object.assign(new Error('x'), { statusCode: 502 })).httpStatus, 500);
  });

  it('gRPC: every catalog code answers its catalog status, with the code in the trailing metadata', () => {
    for (const code of CODES) {
      const s = toGrpcStatus(new ServiceError(code, `message of ${code}`));
      assert.equal(s.code, ERROR_CATALOG[code].grpc, code);
      assert.equal(s.details, `message of ${code}`);
      assert.deepEqual(s.metadata?.get('svc-error-code'), [code]);
    }
    assert.equal(toGrpcStatus(new Error('boom')).code, GrpcStatus.INTERNAL);
  });
});
