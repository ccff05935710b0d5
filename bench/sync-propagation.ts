/**
 * Writer-to-reader propagation of rule changes, for broker sync (NATS JetStream) and
 * for the file watcher on a shared rules dir. Starts a real nats-server and real server
 * processes, then makes 200 sequential updates of one rule on the writer. Each sample is the
 * time from sending the update to the writer until the reader logs that it applied that exact
 * version (its log line reaches this process through a pipe). The writer persists to a rules
 * dir in both modes (fsync per write).
 *
 * Run: `node --import tsx bench/sync-propagation.ts` (after `npx tsc -p tsconfig.json`), or
 * `bash bench/run.sh sync-propagation`. Results: bench/results/sync-propagation-<time>.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { http, type ServerProcess } from '../test/helpers/server-process.js';
import { ROOT } from '../test/helpers/server-process.js';
import { SyncCluster, ruleset, waitConnected } from '../test/helpers/sync-cluster.js';

const UPDATES = Number(process.env['SYNC_BENCH_UPDATES'] ?? 200);
const WARMUP = 10;

interface Summary {
  mode: string;
  samples: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  mean_ms: number;
}

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

function summarize(mode: string, samples: number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const r = (v: number) => Math.round(v * 100) / 100;
  return {
    mode,
    samples: s.length,
    p50_ms: r(percentile(s, 50)),
    p90_ms: r(percentile(s, 90)),
    p99_ms: r(percentile(s, 99)),
    max_ms: r(s.at(-1)!),
    mean_ms: r(s.reduce((a, b) => a + b, 0) / s.length),
  };
}

/** Samples of one mode: from sending the update, and from the writer's answer. */
interface Samples {
  fromSend: number[];
  fromAck: number[];
}

/** Sequential updates of rule `bench` on the writer; the time until `appliedMsg` shows each version on the reader. */
async function measure(writer: ServerProcess, reader: ServerProcess, appliedMsg: string, label: string): Promise<Samples> {
  const samples: Samples = { fromSend: [], fromAck: [] };
  for (let i = 0; i < WARMUP + UPDATES; i++) {
    const version = `${label}-${i}`;
    const seen = reader.waitForLog((l) => l['msg'] === appliedMsg && l['name'] === 'bench' && l['version'] === version, 30_000);
    const t0 = performance.now();
    const res = await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('bench', version, `C${i}`));
    const acked = performance.now();
    if (res.status !== 200) throw new Error(`update ${i} failed: ${res.status} ${JSON.stringify(res.body)}`);
    await seen;
    const t1 = performance.now();
    if (i >= WARMUP) {
      samples.fromSend.push(t1 - t0);
      samples.fromAck.push(t1 - acked);
    }
  }
  return samples;
}

async function brokerMode(cluster: SyncCluster): Promise<Samples> {
  await cluster.startNats();
  const writer = await cluster.writer(['--rules-dir', cluster.dir(), '--instance-id', 'bench-writer']);
  const reader = await cluster.reader(['--instance-id', 'bench-reader']);
  await Promise.all([waitConnected(writer), waitConnected(reader)]);
  return measure(writer, reader, 'sync event applied', 'broker');
}

async function watcherMode(cluster: SyncCluster): Promise<Samples> {
  const dir = cluster.dir('svc-bench-shared-');
  const writer = await cluster.start(['--role', 'writer', '--rules-dir', dir]);
  const reader = await cluster.start(['--role', 'reader', '--rules-dir', dir, '--watch-rules']);
  await reader.waitForLog((l) => l['msg'] === 'rule watcher ready');
  return measure(writer, reader, 'rule reloaded from file', 'watch');
}

const results: Summary[] = [];
for (const [mode, run] of [
  ['broker (NATS JetStream)', brokerMode],
  ['file watcher (shared dir, native events)', watcherMode],
] as const) {
  const cluster = new SyncCluster();
  try {
    const samples = await run(cluster);
    results.push(summarize(`${mode}, from sending the write`, samples.fromSend));
    results.push(summarize(`${mode}, from the writer's answer`, samples.fromAck));
  } finally {
    await cluster.dispose();
  }
}

console.log(`writer-to-reader propagation over ${UPDATES} sequential updates (ms)`);
console.table(results);
const out = { suite: 'sync-propagation', at: new Date().toISOString(), node: process.version, updates: UPDATES, results };
mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
const file = join(ROOT, 'bench', 'results', `sync-propagation-${out.at.replace(/[:.]/g, '-')}.json`);
writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
console.log(`saved ${file}`);
