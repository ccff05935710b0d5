/**
 * The HTTP/1.1 fast path: plain requests to the hot routes (`POST /api/v1/execute/:name`,
 * `POST /api/v1/eval`) answered from the bytes of the connection, without node's
 * `IncomingMessage`, `ServerResponse` and their streams, by the same request handling as the
 * hot dispatcher (`HotRoutes` of ./hot-dispatch.ts). Anything else goes to node's HTTP server
 * with every byte not answered yet, and the connection stays with node from then on.
 *
 * NOTE (speed, bench/NOTES.md "HTTP fast path"): node's per-request machinery (parser
 * callbacks, two stream objects, listeners, next ticks, header validation) cost more server
 * CPU than a bare `node:http` route spends in total on this stack; a minimal loop over the
 * socket's bytes does the same work for a fraction of it.
 *
 * Safety: the fast path takes a request only when it is certainly understood, i.e. a strict
 * subset of HTTP/1.1 that node's parser reads the same way (`parseHead`):
 *   - the whole request (head and body) arrives within `MAX_WAITS` reads after the one it began
 *     in (pipelined requests are cut anywhere by the reads), else it goes to node, whose header
 *     and body timeouts then apply; with a caller check, the body must be there with the head;
 *   - request line `METHOD SP origin-path SP HTTP/1.1`, header lines `name: value` of visible
 *     ASCII (names of token characters, values of visible ASCII, space and tab), CRLF line
 *     ends only, no obsolete line folding, at most 100 header lines in at most 16 KiB;
 *   - each header at most once; Host present; exactly one Content-Length of digits, within the
 *     body limit; no Transfer-Encoding, Expect or Upgrade; Connection absent or `keep-alive`;
 *   - the hot routes take it (method, exact path, JSON Content-Type, not draining).
 * A request outside it is never answered here: node's parser reads it from its first byte, so
 * where the two could read a request differently (request smuggling), node's reading is the
 * only one. The answers are byte for byte node's (status line, the same headers in the same
 * order, `Date`, `Connection: keep-alive`, `Keep-Alive: timeout=N`), and
 * test/integration/http-fast-path.test.ts compares them over real sockets.
 *
 * A connection on the fast path is idle whenever no request is being answered: it is closed
 * after the server's keep-alive timeout (before its first request, after the header timeout,
 * as node does), by `closeIdleConnections` / `closeAllConnections` (shutdown), and when the
 * client ends its side.
 */
import { type IncomingHttpHeaders, type Server, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Principal } from '../../auth/index.js';
import type { RequestHead } from './call-context.js';
import type { HotAnswer, HotMatcher, HotRoutes } from './hot-dispatch.js';
import { parseJsonText } from '../json-text.js';
import { JSON_TYPE } from './serialize.js';

/** Settings of the fast path, from the HTTP server's own. */
export interface FastPathOptions {
  /** Idle time after an answer before the connection is closed (ms; the server's `keepAliveTimeout`). */
  readonly keepAliveTimeoutMs: number;
  /** Time a request has to arrive once begun, and a new connection for its first (ms; the server's `headersTimeout`). */
  readonly headersTimeoutMs: number;
}

/** Longest request head taken (node's default `maxHeaderSize`); a longer one goes to node. */
export const MAX_HEAD_BYTES = 16 * 1024;
/** Most header lines taken. */
export const MAX_HEADER_LINES = 100;
/** Reads a request begun on the fast path may take to arrive whole before it goes to node. */
export const MAX_WAITS = 4;

/** A request head in the strict subset (see the module comment). */
export interface ParsedHead extends RequestHead {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The body's length in bytes. */
  readonly contentLength: number;
}

/** 1 for the token characters (RFC 9110 `tchar`) of a header name, 0 for every other byte. */
const TOKEN_CHAR = (() => {
  const c = new Uint8Array(256);
  for (const ch of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") c[ch.charCodeAt(0)] = 1;
  return c;
})();

/**
 * Parses the head `buf[start, end)` (without its final blank line) when it is in the strict
 * subset of the module comment, else null. `socket`: the head's connection (for the call
 * context). Pure but for reading `buf`.
 *
 * NOTE (speed): one pass over the bytes checks every byte and finds the colons and line ends;
 * names and values are slices of one latin1 string of the head, the usual names replaced by
 * constants (`KNOWN`). About 0.5 us for a head of four headers, 0.4 us more for a JWT.
 */
export function parseHead(buf: Buffer, start: number, end: number, socket: Socket | null): ParsedHead | null {
  if (end - start > MAX_HEAD_BYTES) return null;
  const text = buf.toString('latin1', start, end);
  // The request line: METHOD SP /path SP HTTP/1.1
  let i = start;
  while (i < end && buf[i]! >= 65 && buf[i]! <= 90) i++;
  if (i === start || i >= end || buf[i] !== 32) return null;
  const sp1 = i - start;
  if (buf[++i] !== 47) return null; // origin-form only
  while (i < end && buf[i]! > 32 && buf[i]! < 127) i++;
  if (i + 9 > end + 1 || buf[i] !== 32) return null;
  const sp2 = i - start;
  i++;
  if (
    buf[i] !== 72 ||
    buf[i + 1] !== 84 ||
    buf[i + 2] !== 84 ||
    buf[i + 3] !== 80 ||
    buf[i + 4] !== 47 ||
    buf[i + 5] !== 49 ||
    buf[i + 6] !== 46 ||
    buf[i + 7] !== 49
  )
    return null;
  i += 8;
  // NOTE: a plain object as node's own `req.headers`; a `__proto__` header is left to node.
  const headers: IncomingHttpHeaders = {};
  let lines = 0;
  let contentLength = -1;
  let host = false;
  while (i < end) {
    if (buf[i] !== 13 || buf[i + 1] !== 10) return null;
    i += 2;
    if (++lines > MAX_HEADER_LINES) return null;
    const from = i;
    // The name: token characters up to the colon. No name, a non-token name, whitespace before
    // the colon, or a folded line (leading space): not taken.
    while (i < end && TOKEN_CHAR[buf[i]!] === 1) i++;
    if (i === from || i >= end || buf[i] !== 58) return null;
    const colon = i++;
    // The value: visible ASCII, space and tab up to the CR (LF alone, a control byte or one
    // above ASCII: not taken).
    i = valueEnd(buf, i, end);
    if (i < 0) return null;
    const name = text.slice(from - start, colon - start);
    const key = KNOWN.get(name) ?? name.toLowerCase();
    if (key === '__proto__' || headers[key] !== undefined) return null; // a repeated header: node's rules decide
    const value = text.slice(colon + 1 - start, i - start).trim();
    switch (key) {
      case 'content-length':
        if (value.length === 0 || value.length > 15 || !DIGITS.test(value)) return null;
        contentLength = Number(value);
        break;
      case 'host':
        host = true;
        break;
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
        return null;
      case 'connection':
        if (value.toLowerCase() !== 'keep-alive') return null;
        break;
    }
    headers[key] = value;
  }
  if (contentLength < 0 || !host) return null;
  return { method: text.slice(0, sp1), url: text.slice(sp1 + 1, sp2), headers, socket, contentLength };
}

const DIGITS = /^[0-9]+$/;

/** The end of the value from `i` (its CR, or `end`), or -1 at a byte a value may not hold. */
function valueEnd(buf: Buffer, i: number, end: number): number {
  for (; i < end; i++) {
    const c = buf[i]!;
    if ((c >= 32 && c < 127) || c === 9) continue;
    return c === 13 ? i : -1;
  }
  return end;
}

/**
 * Header names clients send most, in their usual spellings, to their lower-case form.
 * NOTE (speed): a sliced name is a new string, and a property key that is a new string is looked
 * up in V8's string table at every use; these constants are that table's own strings already.
 */
const KNOWN = new Map<string, string>();
for (const name of [
  'host',
  'content-type',
  'content-length',
  'connection',
  'authorization',
  'x-tenant-id',
  'user-agent',
  'accept',
  'accept-encoding',
  'accept-language',
  'traceparent',
  'tracestate',
  'x-request-id',
  'x-forwarded-for',
  'cache-control',
]) {
  KNOWN.set(name, name);
  KNOWN.set(
    name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase()),
    name,
  );
}
KNOWN.set('X-Tenant-ID', 'x-tenant-id');
KNOWN.set('User-agent', 'user-agent');

/** The cached `Date` header value (node's own is cached per second the same way). */
let dateText = '';
let dateUntil = 0;

function httpDate(): string {
  const now = Date.now();
  if (now >= dateUntil) {
    dateText = new Date(now).toUTCString();
    dateUntil = now - (now % 1000) + 1000;
  }
  return dateText;
}

/** The bytes of one answer, as node's `ServerResponse` writes them for the hot dispatcher. */
export function answerText(a: HotAnswer, keepAliveText: string): string {
  let head = `HTTP/1.1 ${a.status} ${STATUS_CODES[a.status] ?? 'unknown'}\r\ncontent-type: ${JSON_TYPE}\r\ncontent-length: ${Buffer.byteLength(a.text)}\r\n`;
  if (a.close) head += 'connection: close\r\n';
  const extra = a.extra;
  if (extra !== null) for (const k in extra) head += `${k}: ${extra[k]}\r\n`;
  head += `Date: ${httpDate()}\r\n`;
  return a.close ? `${head}\r\n${a.text}` : `${head}${keepAliveText}${a.text}`;
}

/** The state of one connection on the fast path. */
class FastConnection {
  /** Bytes of a request not complete yet (then handed over), or after an async check. */
  pending: Buffer | null = null;
  /** Answered a request yet (the idle timeout is then the keep-alive one). */
  answered = false;
  /** Waiting for a caller check (a JWT seen first): reading is paused. */
  busy = false;
  /** Handed to node, or closed: the fast path is done with it. */
  done = false;
  /** The client ended its side. */
  ended = false;
  /** Reading paused until the written answers drain. */
  blocked = false;
  /** Reads the request in `pending` has waited for so far. */
  waits = 0;
  /** Answers not written yet (`write`). */
  queued = '';
  /** The request in `pending` has its whole head (its body is not complete). */
  headComplete = false;

  constructor(
    readonly socket: Socket,
    readonly path: FastPath,
  ) {}

  readonly onData = (chunk: Buffer): void => {
    if (this.done) return;
    if (this.busy) {
      // NOTE: paused while a check runs; a chunk already read is kept for later.
      this.pending = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
      return;
    }
    const buf = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = null;
    this.guarded(buf, 0, '');
  };

  readonly onEnd = (): void => {
    this.ended = true;
    // The client ended its side: every complete request is answered (synchronously), so end
    // ours; while a check runs, that happens after its answer. A request cut short goes to node,
    // which answers it as it answers any request ended early.
    if (this.done || this.busy) return;
    if (this.pending !== null) this.handOver(this.pending, 0, '');
    else this.close();
  };

  readonly onTimeout = (): void => {
    if (this.done || this.busy) return;
    // Idle after an answer: closed, as node closes an idle kept-alive connection.
    if (this.answered && this.pending === null) {
      this.socket.destroy();
      return;
    }
    // No request head in time (nothing yet, or a head begun): node's request-timeout answer
    // (408 with the catalog body), as without the fast path. A body not complete: node's path
    // reads the rest under its own body deadline.
    this.handOver(this.pending ?? EMPTY, 0, '', !(this.pending !== null && this.headComplete));
  };

  readonly onError = (): void => {
    this.done = true;
    this.socket.destroy();
  };

  readonly onClose = (): void => {
    this.done = true;
    this.path.open.delete(this);
  };

  /** `serve`, and a failure of the fast path itself (a bug) answered 500 and logged, the connection closed. */
  guarded(buf: Buffer, off: number, out: string): void {
    try {
      this.serve(buf, off, out);
    } catch (err) {
      if (this.done) this.socket.destroy();
      else this.finish(out + answerText(this.path.hot.error(err, { headers: {}, socket: this.socket }, true), ''));
    }
  }

  /**
   * Answers the complete requests of `buf` from `off`, writing `out` (answers not written yet)
   * and each new one in one write; hands the rest to node at the first request it does not take.
   */
  serve(buf: Buffer, off: number, out: string): void {
    const hot = this.path.hot;
    for (;;) {
      if (off >= buf.length) break;
      const headEnd = buf.indexOf(HEAD_END, off);
      if (headEnd < 0) {
        if (buf.length - off > MAX_HEAD_BYTES) return this.handOver(buf, off, out);
        return this.wait(buf, off, out, false);
      }
      const head = parseHead(buf, off, headEnd, this.socket);
      if (head === null) return this.handOver(buf, off, out);
      const m = hot.match(head.method, head.url, head.headers['content-type']);
      if (m === null || head.contentLength > hot.bodyLimit) return this.handOver(buf, off, out);
      const bodyStart = headEnd + 4;
      const bodyEnd = bodyStart + head.contentLength;
      if (bodyEnd > buf.length) {
        // NOTE (EXTENSIONS.md 1): with a caller check, node's path checks the caller before it
        // reads the body; the fast path does not hold a body of an unchecked caller.
        if (m.check !== null) return this.handOver(buf, off, out);
        return this.wait(buf, off, out, true);
      }
      if (this.waits !== 0) {
        this.waits = 0;
        if (this.answered) this.socket.setTimeout(this.path.options.keepAliveTimeoutMs);
      }
      const param = hot.param(m, head.url);
      let answer: HotAnswer;
      if (m.check === null) answer = this.answer(m, head, param, buf, bodyStart, bodyEnd, undefined);
      else {
        const principal = checkCaller(m, head);
        if (principal instanceof Promise) return this.await(principal, m, head, param, buf, bodyStart, bodyEnd, out);
        answer = principal instanceof Refused ? hot.error(principal.err, head, false) : this.answer(m, head, param, buf, bodyStart, bodyEnd, principal);
      }
      out += answerText(answer, this.path.keepAliveText);
      if (answer.close) return this.finish(out);
      off = bodyEnd;
    }
    if (out !== '') this.write(out);
  }

  /**
   * Keeps the start of a request that is not complete yet for the next reads (pipelined
   * requests are cut anywhere by the reads); one that is still not complete after
   * `MAX_WAITS` more reads goes to node, whose header and body timeouts then apply.
   */
  wait(buf: Buffer, off: number, out: string, headComplete: boolean): void {
    if (this.waits >= MAX_WAITS) return this.handOver(buf, off, out);
    if (out !== '') this.write(out);
    // NOTE: a request begun has the header timeout to arrive whole, also between two requests.
    if (this.waits++ === 0 && this.answered) this.socket.setTimeout(this.path.options.headersTimeoutMs);
    this.pending = Buffer.from(buf.subarray(off));
    this.headComplete = headComplete;
  }

  /** The answer of a request whose body is `buf[start, end)`. */
  answer(m: HotMatcher, head: ParsedHead, param: string, buf: Buffer, start: number, end: number, principal: Principal | undefined): HotAnswer {
    let body: unknown;
    try {
      body = parseJsonText(buf.toString('utf8', start, end));
    } catch (e) {
      return this.path.hot.error(e, head, true);
    }
    return this.path.hot.answer(m, head, param, body, principal);
  }

  /** Waits for a caller check that is a promise, reading paused; then answers and goes on with the rest. */
  await(check: Promise<Principal>, m: HotMatcher, head: ParsedHead, param: string, buf: Buffer, start: number, end: number, out: string): void {
    if (out !== '') this.write(out);
    this.busy = true;
    this.socket.pause();
    const hot = this.path.hot;
    const next = (answer: HotAnswer): void => {
      this.busy = false;
      if (this.done) return;
      const text = answerText(answer, this.path.keepAliveText);
      if (answer.close) return this.finish(text);
      // The bytes after this request, and whatever arrived meanwhile.
      const rest = this.pending === null ? buf.subarray(end) : Buffer.concat([buf.subarray(end), this.pending]);
      this.pending = null;
      this.guarded(rest, 0, text);
      if (this.done) return;
      if (this.ended) this.close();
      else if (!this.blocked) this.socket.resume();
    };
    check.then(
      (p) => next(this.answer(m, head, param, buf, start, end, p)),
      (e: unknown) => next(hot.error(e, head, false)),
    );
  }

  /**
   * Queues `out` for the end of this event-loop turn. NOTE (speed, bench/NOTES.md "HTTP fast
   * path"): the answers of all connections read in one turn are written together after it, so
   * a client that has several connections is woken once for them instead of once per answer.
   */
  write(out: string): void {
    if (!this.answered) {
      this.answered = true;
      this.socket.setTimeout(this.path.options.keepAliveTimeoutMs);
    }
    if (this.queued === '') this.path.enqueue(this);
    this.queued += out;
  }

  /** The queued answers, taken (to be written now). */
  take(): string {
    const out = this.queued;
    this.queued = '';
    return out;
  }

  /** Writes the queued answers. */
  flush(): void {
    const out = this.take();
    if (out === '' || this.socket.destroyed) return;
    // NOTE: a client that sends requests but does not read the answers is not read further
    // until the answers written so far have drained (node's HTTP server does the same).
    if (!this.socket.write(out) && !this.blocked) {
      this.blocked = true;
      this.socket.pause();
      this.socket.once('drain', this.onDrain);
    }
  }

  readonly onDrain = (): void => {
    this.blocked = false;
    if (!this.done && !this.busy) this.socket.resume();
  };

  /** Writes the last answer and closes the connection (an answer with `Connection: close`). */
  finish(out: string): void {
    this.done = true;
    this.path.open.delete(this);
    this.detach();
    this.socket.end(this.take() + out);
  }

  close(): void {
    this.done = true;
    this.path.open.delete(this);
    this.socket.end(this.take());
  }

  private detach(): void {
    const s = this.socket;
    s.removeListener('data', this.onData);
    s.removeListener('end', this.onEnd);
    s.removeListener('timeout', this.onTimeout);
    s.setTimeout(0);
  }

  /** Gives the connection to node's HTTP server with `buf` from `off`, after writing `out`. */
  handOver(buf: Buffer, off: number, out: string, timedOut = false): void {
    if (out !== '') this.write(out);
    this.flush();
    this.done = true;
    this.path.open.delete(this);
    this.detach();
    const s = this.socket;
    s.removeListener('error', this.onError);
    s.removeListener('close', this.onClose);
    this.path.handOver(s, off < buf.length ? buf.subarray(off) : null, this.ended, timedOut);
  }
}

const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
const EMPTY = Buffer.alloc(0);

/** The error node's HTTP server raises when a request's headers do not arrive in time. */
function requestTimedOut(): Error {
  return Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
}

/** A caller check that threw (401, 403, 429). */
class Refused {
  constructor(readonly err: unknown) {}
}

/** The caller of a request that `m` checks: its principal, a promise of it, or why not. */
function checkCaller(m: HotMatcher, head: ParsedHead): Principal | Promise<Principal> | Refused {
  try {
    return (m.check as NonNullable<HotMatcher['check']>)(head);
  } catch (e) {
    return new Refused(e);
  }
}

/** The fast path of one HTTP server. */
class FastPath {
  /** Connections on the fast path now. */
  readonly open = new Set<FastConnection>();
  /** Connections with answers queued this turn. */
  private queue: FastConnection[] = [];
  private readonly flushAll = (): void => {
    const q = this.queue;
    this.queue = [];
    for (let i = 0; i < q.length; i++) (q[i] as FastConnection).flush();
  };
  /** `Connection: keep-alive` and `Keep-Alive: timeout=N`, then the blank line. */
  readonly keepAliveText: string;

  constructor(
    readonly hot: HotRoutes,
    readonly options: FastPathOptions,
    /** Gives a socket to node's HTTP server, with the bytes already read from it. */
    readonly handOver: (socket: Socket, head: Buffer | null, ended: boolean, timedOut: boolean) => void,
  ) {
    this.keepAliveText = `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(options.keepAliveTimeoutMs / 1000)}\r\n\r\n`;
  }

  /** Has `c`'s queued answers written after this turn's reads. */
  enqueue(c: FastConnection): void {
    if (this.queue.push(c) === 1) setImmediate(this.flushAll);
  }

  accept(socket: Socket): void {
    const c = new FastConnection(socket, this);
    this.open.add(c);
    socket.on('data', c.onData);
    socket.on('end', c.onEnd);
    socket.on('error', c.onError);
    socket.on('close', c.onClose);
    socket.on('timeout', c.onTimeout);
    socket.setTimeout(this.options.headersTimeoutMs);
  }

  /** Closes the idle connections (all but those waiting for a check, which close after their answer). */
  closeIdle(): void {
    for (const c of [...this.open]) if (!c.busy) c.close();
  }

  closeAll(): void {
    for (const c of [...this.open]) {
      c.done = true;
      c.socket.destroy();
    }
    this.open.clear();
  }
}

/**
 * Puts the fast path in front of `server`'s own connection handling (plain HTTP only): every
 * new connection starts on it and goes to node at its first request the fast path does not
 * take. `server.closeIdleConnections` and `closeAllConnections` close the fast path's too.
 */
export function installFastPath(server: Server, hot: HotRoutes, options: FastPathOptions): void {
  const nodeListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const path = new FastPath(hot, options, (socket, head, ended, timedOut) => {
    for (const l of nodeListeners) l.call(server, socket);
    // NOTE: node's connection listener reads the socket from now on (its parser consumes the
    // socket's handle); the bytes the fast path already read go to the same parser first, through
    // the socket's 'data' listener that node installed, before any later read can arrive. A
    // socket paused for a check is resumed (node restarts reading its handle on 'resume'), and
    // an end the fast path saw is given to node too.
    if (head !== null) socket.emit('data', head);
    // A connection whose request did not arrive in time gets node's own request-timeout error
    // (the server's 'clientError' answer), as node's header timeout would have given it.
    if (timedOut) socket.emit('error', requestTimedOut());
    else if (ended) socket.emit('end');
    else socket.resume();
  });
  server.on('connection', (socket: Socket) => path.accept(socket));
  const closeIdle = server.closeIdleConnections.bind(server);
  const closeAll = server.closeAllConnections.bind(server);
  server.closeIdleConnections = () => {
    path.closeIdle();
    closeIdle();
  };
  server.closeAllConnections = () => {
    path.closeAll();
    closeAll();
  };
}
