/**
 * svc-cluster (src/bin/svc-cluster.ts): two workers share one HTTP port, a ruleset
 * written through one worker is executed by both (shared rules dir, --watch-rules), SIGTERM
 * stops both gracefully (two server_stopped lines, exit 0), and configurations that several
 * workers cannot serve exit 2 with the reason. The open-door warning is logged once, not once per
 * worker.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { ROOT } from '../helpers/server-process.js';

const BIN = join(ROOT, 'dist', 'bin', 'svc-cluster.js');

/** One request on a fresh connection (so the cluster hands it to the next worker). */
function post(url: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const u = new URL(url);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
      },
      (res) => {
        let data = '';
        res.on('data', (c: Buffer) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data ? JSON.parse(data) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const RULESET = { config: { name: 'c', version: '1', entry_step: 'OK' }, steps: { OK: { type: 'terminal', result: { code: 'OK' } } } };

test("two workers serve one port, see each other's writes and stop gracefully", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cluster-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const child = spawn(process.execPath, [BIN, '--workers', '2', '--rules-dir', dir, '--watch-rules', '--http-addr', '0.0.0.0:0', '--disable-grpc'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'] ?? '' },
  });
  const stdout: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (l) => stdout.push(l));
  const urls: string[] = [];
  const stderr: string[] = [];
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('workers did not listen within 20 s')), 20_000);
    createInterface({ input: child.stderr! }).on('line', (l) => {
      stderr.push(l);
      try {
        const v = JSON.parse(l) as { msg?: string; url?: string };
        if (v.msg === 'http listening' && v.url) urls.push(v.url);
      } catch {
        /* not JSON */
      }
      if (urls.length === 2) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  try {
    assert.equal(urls[0], urls[1], 'both workers listen on the same port');
    const url = urls[0]!;
    assert.equal((await post(url, '/api/v1/rulesets', RULESET)).status, 200);
    // Until the watcher of the other worker has loaded it, some connections may get a 404.
    let streak = 0;
    for (let i = 0; i < 200 && streak < 8; i++) {
      const r = await post(url, '/api/v1/execute/c', { input: {} });
      streak = r.status === 200 && r.body.code === 'OK' ? streak + 1 : 0;
      if (streak === 0) await new Promise((r2) => setTimeout(r2, 50));
    }
    assert.equal(streak, 8, 'eight executions in a row succeed across both workers');
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0);
  assert.equal(stdout.filter((l) => l.includes('"event":"server_stopped"')).length, 2);
  // Auth is off on 0.0.0.0: the open-door warning is said once, by the first worker, not per worker
  // (as a warning line, and in that worker's `ready` line).
  assert.equal(stderr.filter((l) => l.includes('authentication is off') && l.includes('"level":"warn"')).length, 1);
  assert.equal(stderr.filter((l) => l.includes('authentication is off') && l.includes('"msg":"ready"')).length, 1);
});

test('configurations several workers cannot serve exit 2 with the reason', () => {
  for (const [args, reason] of [
    [['--workers', '2', '--role', 'writer', '--rules-dir', '/tmp/x', '--sync-url', 'nats://127.0.0.1:4222'], /single process/],
    [['--workers', '2'], /--rules-dir with --watch-rules/],
    [['--workers', '0'], /--workers must be/],
  ] as const) {
    const r = spawnSync(process.execPath, [BIN, ...args, '--http-addr', '127.0.0.1:0'], { encoding: 'utf8', timeout: 15_000 });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, reason);
  }
});
