/**
 * Starts the real `svc-server` (built dist/) as a child process for integration tests and
 * stops it by pid. The server listens on ephemeral ports (`:0`) and reports the bound
 * addresses in its log (stderr, JSON lines): `http listening` with `url`, `grpc listening`
 * with `address`, `uds listening` with `path`. Audit lines arrive on stdout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

/** Repository root. */
export const ROOT = resolve(import.meta.dirname, '..', '..');
/** The built server entry point. */
export const SERVER_BIN = join(ROOT, 'dist', 'bin', 'svc-server.js');

/** A running server process. */
export interface ServerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** `http://127.0.0.1:<port>` (unless --disable-http). */
  readonly url: string;
  /** `127.0.0.1:<port>` of gRPC (unless --disable-grpc). */
  readonly grpcAddress: string;
  /** Parsed JSON lines written to stdout (audit events). */
  readonly stdout: Record<string, unknown>[];
  /** Parsed JSON lines written to stderr (server log). */
  readonly logs: Record<string, unknown>[];
  /** Sends a signal and waits for exit; resolves to the exit code (or signal name). */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
  /** Everything the process wrote so far, stdout and stderr, as raw text (JSON or not). */
  output(): string;
  /** Resolves once a log line satisfies `pred`. */
  waitForLog(pred: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
}

/** Options of `startServer`. */
export interface StartOptions {
  env?: Record<string, string>;
  /** Default true: pass `--http-addr 127.0.0.1:0 --grpc-addr 127.0.0.1:0`. */
  ephemeral?: boolean;
  timeoutMs?: number;
  /** Server entry point to run instead of this checkout's (bench/amplification.ts: an older build). */
  serverBin?: string;
}

/** Spawns `node dist/bin/svc-server.js <args>` and waits until it listens. */
export async function startServer(args: string[], options: StartOptions = {}): Promise<ServerProcess> {
  const ephemeral = options.ephemeral ?? true;
  const fullArgs = ephemeral ? ['--http-addr', '127.0.0.1:0', '--grpc-addr', '127.0.0.1:0', ...args] : args;
  const child = spawn(process.execPath, [options.serverBin ?? SERVER_BIN, ...fullArgs], {
    env: { PATH: process.env['PATH'] ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: Record<string, unknown>[] = [];
  const logs: Record<string, unknown>[] = [];
  const rawErr: string[] = [];
  const rawOut: string[] = [];
  const waiters: Array<{ pred: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    rawOut.push(line);
    const v = parseLine(line);
    if (v) stdout.push(v);
  });
  createInterface({ input: child.stderr! }).on('line', (line) => {
    rawErr.push(line);
    const v = parseLine(line);
    if (!v) return;
    logs.push(v);
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i]!.pred(v)) {
        waiters[i]!.resolve(v);
        waiters.splice(i, 1);
      }
    }
  });
  const exited = new Promise<number | string>((res) => child.on('exit', (code, sig) => res(code ?? sig ?? 'unknown')));

  const waitForLog = (pred: (l: Record<string, unknown>) => boolean, timeoutMs = 10_000) =>
    new Promise<Record<string, unknown>>((res, rej) => {
      const found = logs.find(pred);
      if (found) return res(found);
      const timer = setTimeout(() => rej(new Error(`log line not seen within ${timeoutMs} ms; stderr:\n${rawErr.join('\n')}`)), timeoutMs);
      waiters.push({ pred, resolve: (l) => (clearTimeout(timer), res(l)) });
      void exited.then((code) => {
        clearTimeout(timer);
        rej(new Error(`server exited (${code}) before the log line; stderr:\n${rawErr.join('\n')}`));
      });
    });

  const timeoutMs = options.timeoutMs ?? 15_000;
  const disableHttp = fullArgs.includes('--disable-http');
  const disableGrpc = fullArgs.includes('--disable-grpc');
  const [httpLine, grpcLine] = await Promise.all([
    disableHttp ? Promise.resolve<Record<string, unknown>>({}) : waitForLog((l) => l['msg'] === 'http listening', timeoutMs),
    disableGrpc ? Promise.resolve<Record<string, unknown>>({}) : waitForLog((l) => l['msg'] === 'grpc listening', timeoutMs),
  ]).catch((err: unknown) => {
    // A server that never reported listening is stopped here: nobody else holds its pid.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    throw err;
  });
  return {
    child,
    pid: child.pid!,
    url: String(httpLine['url'] ?? ''),
    grpcAddress: String(grpcLine['address'] ?? ''),
    stdout,
    logs,
    waitForLog,
    output: () => [...rawOut, ...rawErr].join('\n'),
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      process.kill(child.pid!, signal);
      return exited;
    },
  };
}

function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(line) as unknown;
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A fresh temp dir; remove it with the returned function. */
/** Runs `fn` with a server started with `args` and always stops it; resolves to its exit. */
export async function withServer(args: string[], fn: (s: ServerProcess) => Promise<void>, options: StartOptions = {}): Promise<number | string> {
  const server = await startServer(args, options);
  try {
    await fn(server);
  } finally {
    await server.stop();
  }
  return server.stop();
}

/** Starting must fail: resolves to the error text (exit code and stderr). */
export async function startFails(args: string[]): Promise<string> {
  let server: ServerProcess;
  try {
    server = await startServer(args);
  } catch (err) {
    return (err as Error).message;
  }
  await server.stop();
  throw new Error(`the server started with ${args.join(' ')}`);
}

export function tempDir(prefix = 'svc-test-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** JSON request helper over fetch. */
export async function http(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}
