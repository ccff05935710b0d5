/**
 * Helpers of the HTTP process tests: raw requests (paths sent as written, no URL
 * normalisation), a raw TCP exchange, directory snapshots, polling, ruleset fixtures.
 */
import { request as httpRequest } from 'node:http';
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { RuleService, type RuleServiceDeps } from '../../src/service/rule-service.js';
import { DISABLED_SIGNATURE_POLICY } from '../../src/signing/index.js';

/** A standalone RuleService with the settings the in-process HTTP tests share (5 s execution timeout, signatures off). */
export function testRuleService(deps: RuleServiceDeps): RuleService {
  return new RuleService(
    {
      version: '9.9.9-test',
      role: 'standalone',
      writerAddr: null,
      executionTimeoutMs: 5000,
      maxSteps: 10_000,
      maxBatchSize: 10_000,
      signature: { ...DISABLED_SIGNATURE_POLICY },
    },
    deps,
  );
}

/** A parsed answer. */
export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Parsed JSON, or undefined. */
  body: any;
}

/**
 * Sends one request with node:http: the path is sent exactly as given (`/api/v1/rulesets/..`
 * stays as it is), the body as given (string or Buffer), `agent: false` (a fresh connection).
 * `chunked`: send the body with `Transfer-Encoding: chunked` (no Content-Length). `from`: the
 * local (source) address, e.g. another loopback address than 127.0.0.1.
 * Resolves with the answer; a connection reset after a complete answer still resolves.
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  body?: string | Buffer,
  headers: Record<string, string> = {},
  chunked = false,
  from?: string,
): Promise<RawReply> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: Number(url.port),
        method,
        path,
        agent: false,
        ...(from !== undefined ? { localAddress: from } : {}),
        headers: {
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(body !== undefined && !chunked ? { 'content-length': String(Buffer.byteLength(body)) } : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text.length > 0 ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
        });
      },
    );
    // NOTE: the server may answer (413) before the whole body is sent; an EPIPE/ECONNRESET on
    // the request side after the answer arrived is not a failure. Without an answer it is.
    let answered = false;
    let failure: Error | undefined;
    req.on('response', () => (answered = true));
    req.on('error', (err: NodeJS.ErrnoException) => {
      failure = err;
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
    });
    req.on('close', () => {
      if (!answered) reject(new Error(`connection closed without an answer: ${failure?.message ?? 'no error'}`));
    });
    // a hang fails the test instead of stalling the suite
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer to ${method} ${path} within 30 s`)));
    if (body === undefined) req.end();
    else if (!chunked) req.end(body);
    else {
      // several chunks, so the server reads a stream without a declared length
      const buf = typeof body === 'string' ? Buffer.from(body) : body;
      const size = 1024 * 1024;
      for (let i = 0; i < buf.length; i += size) req.write(buf.subarray(i, i + size));
      req.end();
    }
  });
}

/** Polls `pred` (sync or async) every 20 ms until true; throws after `timeoutMs`. */
export async function waitFor(pred: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await pred()) return;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(20);
  }
}

/** Waits `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Every entry under `dir` (files and directories, recursively) with size, mtime and a content
 * hash, as sorted `relative-path -> description` pairs. `skip` names top-level entries to leave out.
 */
export function snapshotTree(dir: string, skip: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const full = join(e.parentPath, e.name);
    const rel = relative(dir, full).split(sep).join('/');
    if (skip.some((s) => rel === s || rel.startsWith(`${s}/`))) continue;
    const st = statSync(full);
    out[rel] = e.isDirectory()
      ? `dir mtime=${st.mtimeMs}`
      : `file size=${st.size} mtime=${st.mtimeMs} sha1=${createHash('sha1').update(readFileSync(full)).digest('hex')}`;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** A small ruleset: age decides ADULT/MINOR; `code` and `version` make contents distinguishable. */
export function ageRules(name: string, version = '1.0.0', adultCode = 'ADULT'): Record<string, unknown> {
  return {
    config: { name, version, entry_step: 'check', description: `rules ${name}` },
    steps: {
      check: { type: 'decision', name: 'Check age', branches: [{ condition: 'user.age >= 18', next_step: 'adult' }], default_next: 'minor' },
      adult: { type: 'terminal', result: { code: adultCode, message: 'grown up' } },
      minor: { type: 'terminal', result: { code: 'MINOR', message: 'too young' } },
    },
  };
}

/** Asserts nothing; returns true when `reply` is `status` with a catalog body of `code`. */
export function isCatalogError(reply: RawReply | { status: number; body: any }, status: number, code: string): boolean {
  return (
    reply.status === status &&
    typeof reply.body === 'object' &&
    reply.body !== null &&
    reply.body.code === code &&
    typeof reply.body.error === 'string' &&
    reply.body.error.length > 0
  );
}

/** What came back on a raw TCP connection: the status line and headers, the parsed JSON body. */
export interface RawExchange {
  head: string;
  status: number;
  body: any;
}

/**
 * Opens a TCP connection, writes `payload` as is, and collects everything until the server
 * closes the connection (rejects after `timeoutMs`).
 */
export async function rawExchange(baseUrl: string, payload: string, timeoutMs = 15_000): Promise<RawExchange> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  try {
    const received = await new Promise<string>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => reject(new Error(`no close within ${timeoutMs} ms; got ${JSON.stringify(text)}`)), timeoutMs);
      socket.on('data', (d: Buffer) => (text += d.toString('utf8')));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(text);
      });
      socket.once('connect', () => socket.write(payload));
    });
    const split = received.indexOf('\r\n\r\n');
    const head = split < 0 ? received : received.slice(0, split);
    const bodyText = split < 0 ? '' : received.slice(split + 4);
    let body: unknown;
    try {
      body = JSON.parse(bodyText);
    } catch {
      body = undefined;
    }
    return { head, status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1] ?? 0), body };
  } finally {
    socket.destroy();
  }
}
