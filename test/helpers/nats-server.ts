/**
 * Starts a real `nats-server` with JetStream for the sync integration tests and the sync
 * benchmark: `nats-server -a 127.0.0.1 -p <free port> -js -sd <temp dir>`, stopped by its pid.
 * `restart()` starts it again on the same port and store dir (streams and durable consumers
 * survive), as after a broker outage. `extraArgs` adds options (authentication: `--auth TOKEN`,
 * `--user U --pass P`; TLS: `--tls --tlscert F --tlskey F`; or `-c FILE`, a config file).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running (or stopped) nats-server. */
export interface NatsServer {
  readonly port: number;
  /** `nats://127.0.0.1:<port>`. */
  readonly url: string;
  readonly storeDir: string;
  /** Pid of the current process (changes on restart). */
  pid(): number | undefined;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for its exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port and store dir; resolves once it accepts connections. */
  restart(): Promise<void>;
  /** Stops it and removes the store dir. */
  dispose(): Promise<void>;
  /** Everything the server wrote (stdout and stderr) since its last start. */
  output(): string;
}

/** Options of `startNatsServer`. */
export interface NatsServerOptions {
  /** Added after the default arguments (see the module comment). */
  readonly extraArgs?: readonly string[];
}

/** A TCP port that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Starts nats-server with JetStream on a free port and a fresh store dir. */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServer> {
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), 'svc-nats-'));
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const output: string[] = [];

  const launch = async () => {
    const proc = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir, ...(options.extraArgs ?? [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    proc.stdout!.on('data', (d: Buffer) => output.push(d.toString()));
    proc.stderr!.on('data', (d: Buffer) => output.push(d.toString()));
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) break;
      if (output.join('').includes('Server is ready') && (await accepts(port))) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    proc.kill('SIGKILL');
    throw new Error(`nats-server did not start on port ${port}:\n${output.join('')}`);
  };

  const stop = async () => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };

  await launch();
  return {
    port,
    url: `nats://127.0.0.1:${port}`,
    storeDir,
    pid: () => child?.pid,
    stop,
    restart: async () => {
      await stop();
      output.length = 0;
      await launch();
    },
    dispose: async () => {
      await stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
    output: () => output.join(''),
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
