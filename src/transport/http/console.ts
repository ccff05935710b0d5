/**
 * The web console's static files (docs/console.md): `GET /console/*` serves what
 * `scripts/build-console.mjs` wrote to `dist/console/` (an `index.html`, a hashed script and a
 * hashed style sheet). The page is public: it holds no data, and every call it makes goes through
 * the API routes with the key the user typed. Off with `--disable-console` (the routes then do
 * not exist: 404).
 *
 * NOTE: the directory is read once, on the first console request, into a map from file name to
 * body; a request is answered from that map only, so no path a client sends ever reaches the file
 * system (no directory traversal), and nothing is read at start-up or for API requests.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../../service/errors.js';

/** Where the build writes the console: `dist/console/` beside this module's `dist/transport/http/`. */
export const DEFAULT_CONSOLE_DIR = resolve(import.meta.dirname, '..', '..', 'console');

/** The Content-Security-Policy of every console answer: nothing but this origin. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** One file of the console, held in memory. */
interface ConsoleFile {
  readonly body: Buffer;
  /** The gzip of `body` when it is smaller, else null. */
  readonly gzip: Buffer | null;
  readonly type: string;
  readonly etag: string;
  /** Hashed names (`main-3F2A9C1B.js`) never change content: cached for a year. */
  readonly immutable: boolean;
}

/** A hashed asset name as esbuild writes it with `[name]-[hash]`. */
const HASHED = /-[A-Z0-9]{8}\.[a-z]+$/;

/** Reads every regular file directly in `dir` (no subfolders). */
function loadFiles(dir: string): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return files;
  }
  for (const name of names) {
    const full = join(dir, name);
    if (!statSync(full).isFile()) continue;
    const body = readFileSync(full);
    const type = TYPES[extname(name)] ?? 'application/octet-stream';
    const compressible = type.startsWith('text/') || type.startsWith('application/json') || type === 'image/svg+xml';
    const gz = compressible ? gzipSync(body, { level: 9 }) : null;
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    files.set(name, { body, gzip: gz !== null && gz.length < body.length ? gz : null, type, etag, immutable: HASHED.test(name) });
  }
  return files;
}

/** Registers `GET /console`, `/console/` and `/console/*` on `app`, serving the files of `dir`. */
export function registerConsole(app: FastifyInstance, dir: string = DEFAULT_CONSOLE_DIR): void {
  let files: Map<string, ConsoleFile> | null = null;
  const fileOf = (name: string): ConsoleFile | undefined => {
    files ??= loadFiles(dir);
    return files.get(name);
  };

  app.get('/console', (req, reply) => {
    const q = req.url.indexOf('?');
    void reply
      .code(308)
      .header('location', `/console/${q < 0 ? '' : req.url.slice(q)}`)
      .send();
  });

  const serve = (req: FastifyRequest, reply: FastifyReply): void => {
    const rest = ((req.params as Record<string, string | undefined>)['*'] ?? '').split('?')[0] ?? '';
    // Only a plain file name of the build is a file; anything else (a view of the page such as
    // `rulesets/loan`, or `../x`) is the page itself, which routes on the client.
    const direct = /^[A-Za-z0-9_.-]+$/.test(rest) && !rest.startsWith('.') ? fileOf(rest) : undefined;
    if (direct === undefined && /\.(js|css|map|png|svg|ico|json|txt)$/.test(rest)) {
      void reply.code(404).send(new ServiceError('NOT_FOUND', `no console file '${rest.slice(0, 128)}'`).toBody());
      return;
    }
    const file = direct ?? fileOf('index.html');
    if (file === undefined) {
      void reply.code(404).send(new ServiceError('NOT_FOUND', 'the console is not built (bash scripts/setup.sh builds it)').toBody());
      return;
    }
    void reply
      .header('content-security-policy', CONSOLE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('etag', file.etag)
      .header('vary', 'accept-encoding');
    if (req.headers['if-none-match'] === file.etag) {
      void reply.code(304).send();
      return;
    }
    void reply.type(file.type);
    if (file.gzip !== null && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      void reply.header('content-encoding', 'gzip').send(file.gzip);
      return;
    }
    void reply.send(file.body);
  };
  app.get('/console/', serve);
  app.get('/console/*', serve);
}
