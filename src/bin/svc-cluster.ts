#!/usr/bin/env node
/**
 * svc-cluster: runs N identical svc-server workers on one machine with node:cluster, sharing
 * the HTTP and gRPC ports (the primary accepts connections and hands them to the workers in
 * turn), so a server uses every core (docs/performance.md "Using every core").
 *
 *   svc-cluster --workers 4 --role reader --sync-url nats://127.0.0.1:4222 [svc-server flags]
 *   svc-cluster --workers 2 --rules-dir ./rules --watch-rules [svc-server flags]
 *
 * `--workers` (or SVC_WORKERS) defaults to the number of cores. Each worker gets the same flags
 * and its own instance id (`<id>-w<k>`, so each has its own durable broker consumer). SIGTERM /
 * SIGINT are passed to every worker, which shut down gracefully; the primary exits when they
 * have (0 when all exited 0). A worker that dies on its own is replaced, unless it died within
 * 5 s of its start (a configuration or port problem): then every worker is stopped and the
 * primary exits 1. Wiring only: the decisions are in src/cluster/plan.ts.
 */
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadConfigOrExit } from '../config/index.js';
import { clusterProblem, parseWorkers, takeWorkersFlag, withoutInstanceId, workerInstanceId } from '../cluster/plan.js';

const FAST_EXIT_MS = 5000;

function fail(message: string, code = 2): never {
  process.stderr.write(`svc-cluster: ${message}\n`);
  process.exit(code);
}

let parsed: ReturnType<typeof takeWorkersFlag>;
let workers: number;
try {
  parsed = takeWorkersFlag(process.argv.slice(2));
  const fromEnv = process.env['SVC_WORKERS'];
  workers = parsed.workers ?? (fromEnv !== undefined && fromEnv !== '' ? parseWorkers(fromEnv, 'SVC_WORKERS') : availableParallelism());
} catch (err) {
  fail((err as Error).message);
}
// The same parsing and errors as svc-server (help, version, bad flags exit here).
const config = loadConfigOrExit(parsed.rest, process.env);
const problem = clusterProblem(config);
if (problem !== null) fail(problem);

const args = withoutInstanceId(parsed.rest);
/** Live workers by cluster id, with their start time. */
const live = new Map<number, { worker: Worker; startedAt: number }>();
let stopping = false;
let exitCode = 0;

function log(level: string, msg: string, fields: Record<string, unknown> = {}): void {
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), msg, ...fields })}\n`);
}

function fork(k: number): Worker {
  const worker = cluster.fork({ SVC_INSTANCE_ID: workerInstanceId(config.instanceId, k), SVC_CLUSTER_WORKER: String(k) });
  live.set(worker.id, { worker, startedAt: Date.now() });
  worker.on('exit', (code, signal) => {
    const lived = Date.now() - (live.get(worker.id)?.startedAt ?? 0);
    live.delete(worker.id);
    if (stopping) {
      if (code !== 0) exitCode = 1;
    } else if (lived < FAST_EXIT_MS) {
      log('error', 'a worker exited right after its start; stopping', { worker: k, code, signal });
      exitCode = 1;
      stopAll();
    } else {
      log('warn', 'a worker exited; starting a new one', { worker: k, code, signal });
      fork(k);
    }
    if (stopping && live.size === 0) process.exit(exitCode);
  });
  return worker;
}

function stopAll(): void {
  if (stopping) return;
  stopping = true;
  for (const { worker } of live.values()) worker.process.kill('SIGTERM');
  if (live.size === 0) process.exit(exitCode);
}

log('info', 'svc-cluster starting', { workers, role: config.role });
cluster.setupPrimary({ exec: fileURLToPath(new URL('./svc-server.js', import.meta.url)), args });
for (let k = 1; k <= workers; k++) fork(k);
process.on('SIGTERM', stopAll);
process.on('SIGINT', stopAll);
