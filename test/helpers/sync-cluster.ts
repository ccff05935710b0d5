/**
 * Helpers of the sync integration tests and the sync benchmark: start writer and reader
 * processes of the real server (always `--disable-grpc`, so these tests do not depend on the
 * gRPC transport), compare their rule state over HTTP, poll until a condition holds, and stop
 * everything that was started, by pid, even when a test fails.
 */
import { loadNatsApi } from '../../src/sync/nats-api.js';
import { http, startServer, tempDir, type ServerProcess, type StartOptions } from './server-process.js';
import { startNatsServer, type NatsServer, type NatsServerOptions } from './nats-server.js';

/** A valid ruleset document; `code` lets a test tell versions apart by executing. */
export function ruleset(name: string, version = '1.0.0', code = 'OK', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    config: { name, version, entry_step: 't', ...extra },
    steps: { t: { type: 'terminal', result: { code, message: `${name} ${version}` } } },
  };
}

/** Polls `check` until it returns a truthy value; rejects with `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T> | T, timeoutMs = 30_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** The full rule state of an instance: name → ruleset as served (GET), sorted by name. */
export async function stateOf(url: string): Promise<Record<string, unknown>> {
  const list = await http(url, 'GET', '/api/v1/rulesets');
  if (list.status !== 200) throw new Error(`list answered ${list.status}`);
  const out: Record<string, unknown> = {};
  for (const entry of list.body as Array<{ name: string }>) {
    const got = await http(url, 'GET', `/api/v1/rulesets/${encodeURIComponent(entry.name)}`);
    if (got.status === 200) out[entry.name] = got.body;
  }
  return out;
}

/** True when two instances serve exactly the same rules with the same content. */
export async function sameState(a: string, b: string): Promise<boolean> {
  const [sa, sb] = await Promise.all([stateOf(a), stateOf(b)]);
  return JSON.stringify(sa) === JSON.stringify(sb);
}

/** `version` of a rule as served, or null when absent. */
export async function servedVersion(url: string, name: string): Promise<string | null> {
  const got = await http(url, 'GET', `/api/v1/rulesets/${encodeURIComponent(name)}`);
  return got.status === 200 ? (got.body.config.version as string) : null;
}

/** Log lines of a process whose `msg` equals `msg`. */
export function logsWith(proc: ServerProcess, msg: string): Record<string, unknown>[] {
  return proc.logs.filter((l) => l['msg'] === msg);
}

/** Everything a sync test started; `dispose()` stops and removes all of it. */
export class SyncCluster {
  readonly procs = new Set<ServerProcess>();
  readonly dirs: Array<{ path: string; remove: () => void }> = [];
  nats: NatsServer | undefined;

  /** Starts this test's own nats-server (after checking that the NATS client is installed). */
  async startNats(options: NatsServerOptions = {}): Promise<NatsServer> {
    const loaded = await loadNatsApi();
    if (!loaded.ok) {
      throw new Error(`broker sync needs the NATS client (@nats-io/transport-node, @nats-io/jetstream), which is not installed: ${loaded.reason}`);
    }
    this.nats = await startNatsServer(options);
    return this.nats;
  }

  /** A temp dir removed by `dispose()`. */
  dir(prefix = 'svc-sync-'): string {
    const d = tempDir(prefix);
    this.dirs.push(d);
    return d.path;
  }

  /** Starts a server process (`--disable-grpc` added). */
  async start(args: string[], options: StartOptions = {}): Promise<ServerProcess> {
    const proc = await startServer(['--disable-grpc', ...args], options);
    this.procs.add(proc);
    return proc;
  }

  /** Starts a writer with broker sync. */
  writer(args: string[] = []): Promise<ServerProcess> {
    return this.start(['--role', 'writer', '--sync-url', this.nats!.url, ...args]);
  }

  /** Starts a reader with broker sync. */
  reader(args: string[] = []): Promise<ServerProcess> {
    return this.start(['--role', 'reader', '--sync-url', this.nats!.url, ...args]);
  }

  /** Stops one process (SIGTERM, SIGKILL after 10 s) and forgets it. */
  async stop(proc: ServerProcess): Promise<void> {
    const timer = setTimeout(() => proc.child.kill('SIGKILL'), 10_000);
    await proc.stop('SIGTERM');
    clearTimeout(timer);
    this.procs.delete(proc);
  }

  /** Stops every process and the broker, and removes the temp dirs. */
  async dispose(): Promise<void> {
    await Promise.allSettled([...this.procs].map((p) => this.stop(p)));
    await this.nats?.dispose().catch(() => undefined);
    for (const d of this.dirs) d.remove();
  }
}

/** Waits until the broker-sync health block of `proc` says connected. */
export async function waitConnected(proc: ServerProcess, timeoutMs = 20_000): Promise<void> {
  await waitFor(
    `${proc.url} connected to the broker`,
    async () => {
      const h = await http(proc.url, 'GET', '/health');
      return h.body?.sync?.connected === true;
    },
    timeoutMs,
  );
}
