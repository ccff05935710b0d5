/**
 * docs/securing.md's "Roles and permissions" table is the one place a user reads which
 * permission a call needs: it must list every HTTP route of the route table and every gRPC
 * method under exactly the permission the code checks, so a route added, or a permission
 * changed, without updating the page fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { GRPC_PERMISSIONS } from '../../../src/transport/grpc/permissions.js';
import { ROUTES } from '../../../src/transport/http/routes.js';

const DOC = readFileSync(new URL('../../../docs/securing.md', import.meta.url), 'utf8');

/** The rows of the permission table: permission -> [HTTP routes, gRPC methods]. */
function permissionTable(): Map<string, { http: Set<string>; grpc: Set<string> }> {
  const lines = DOC.split('\n');
  const head = lines.findIndex((l) => l.startsWith('| Permission | HTTP routes | gRPC methods |'));
  assert.ok(head >= 0, 'docs/securing.md has the permission table');
  const rows = new Map<string, { http: Set<string>; grpc: Set<string> }>();
  for (const line of lines.slice(head + 2)) {
    if (!line.startsWith('|')) break;
    const [permission, http, grpc] = line
      .split('|')
      .slice(1, 4)
      .map((c) => c.trim());
    const codes = (cell: string | undefined): Set<string> => new Set([...(cell ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] as string));
    rows.set(permission === 'none (open)' ? 'public' : (permission as string), { http: codes(http), grpc: codes(grpc) });
  }
  return rows;
}

describe('docs/securing.md permission table', () => {
  const table = permissionTable();

  it('lists every HTTP route under the permission the route table checks, and nothing else', () => {
    const documented = new Map<string, string>();
    for (const [permission, row] of table) for (const route of row.http) documented.set(route, permission);
    for (const r of ROUTES) {
      const key = `${r.method} ${r.path}`;
      assert.equal(documented.get(key), r.permission, `${key}: documented as ${documented.get(key) ?? 'missing'}, checked as ${r.permission}`);
      documented.delete(key);
    }
    assert.deepEqual([...documented.keys()], [], 'documented routes that do not exist');
  });

  it('lists every gRPC method under the permission the gRPC server checks, and nothing else', () => {
    const documented = new Map<string, string>();
    for (const [permission, row] of table) for (const method of row.grpc) documented.set(method, permission);
    for (const [method, permission] of Object.entries(GRPC_PERMISSIONS)) {
      assert.equal(documented.get(method), permission, `${method}: documented as ${documented.get(method) ?? 'missing'}`);
      documented.delete(method);
    }
    assert.deepEqual([...documented.keys()], [], 'documented methods that do not exist');
  });
});
