/**
 * The strict request-head subset of the HTTP/1.1 fast path (src/transport/http/fast-path.ts
 * `parseHead`) and the bytes of its answers (`answerText`): pure, no socket.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answerText, MAX_HEAD_BYTES, MAX_HEADER_LINES, parseHead } from '../../../src/transport/http/fast-path.js';

const BASE = 'POST /api/v1/execute/age HTTP/1.1\r\nHost: localhost:8080\r\nContent-Type: application/json\r\nContent-Length: 12';

/** Parses `head` (without its blank line) as the fast path would. */
function parse(head: string) {
  const buf = Buffer.from(`xx${head}\r\n\r\n`, 'latin1');
  return parseHead(buf, 2, buf.length - 4, null);
}

describe('parseHead', () => {
  it('takes a plain request head: method, path, lower-case header names, trimmed values, the body length', () => {
    const h = parse(`${BASE}\r\nX-Tenant-Id:  acme \t\r\nConnection: Keep-Alive\r\nAuthorization: Bearer abc.def`);
    assert.ok(h !== null);
    assert.equal(h.method, 'POST');
    assert.equal(h.url, '/api/v1/execute/age');
    assert.equal(h.contentLength, 12);
    assert.equal(h.headers['x-tenant-id'], 'acme');
    assert.equal(h.headers['content-type'], 'application/json');
    assert.equal(h.headers['connection'], 'Keep-Alive');
    assert.equal(h.headers['authorization'], 'Bearer abc.def');
    assert.equal(h.headers['host'], 'localhost:8080');
    assert.equal(Object.getPrototypeOf(h.headers), Object.prototype, 'a plain object, as node gives');
  });

  it('takes an empty header value and a zero-length body', () => {
    const h = parse('POST /api/v1/eval HTTP/1.1\r\nHost: x\r\nX-Empty:\r\nContent-Length: 0');
    assert.equal(h?.headers['x-empty'], '');
    assert.equal(h?.contentLength, 0);
  });

  const refused: [string, string][] = [
    ['no Content-Length', 'POST /a HTTP/1.1\r\nHost: x'],
    ['no Host', 'POST /a HTTP/1.1\r\nContent-Length: 1'],
    ['Transfer-Encoding', `${BASE}\r\nTransfer-Encoding: chunked`],
    ['Transfer-Encoding and a Content-Length (smuggling)', `${BASE}\r\ntransfer-encoding: identity`],
    ['a repeated Content-Length', `${BASE}\r\nContent-Length: 12`],
    ['a repeated Content-Length of another value', `${BASE}\r\ncontent-length: 13`],
    ['a repeated header of any name', `${BASE}\r\nX-A: 1\r\nx-a: 2`],
    ['a signed Content-Length', 'POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: +12'],
    ['a Content-Length with a space inside', 'POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 1 2'],
    ['a Content-Length list', 'POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 12, 12'],
    ['an empty Content-Length', 'POST /a HTTP/1.1\r\nHost: x\r\nContent-Length:'],
    ['a Content-Length of 16 digits', 'POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 1234567890123456'],
    ['Expect', `${BASE}\r\nExpect: 100-continue`],
    ['Upgrade', `${BASE}\r\nUpgrade: websocket`],
    ['Connection: close', `${BASE}\r\nConnection: close`],
    ['Connection: upgrade', `${BASE}\r\nConnection: Upgrade`],
    ['HTTP/1.0', 'POST /a HTTP/1.0\r\nHost: x\r\nContent-Length: 1'],
    ['HTTP/2.0', 'POST /a HTTP/2.0\r\nHost: x\r\nContent-Length: 1'],
    ['a lower-case method', 'post /a HTTP/1.1\r\nHost: x\r\nContent-Length: 1'],
    ['an absolute-form target', 'POST http://x/a HTTP/1.1\r\nHost: x\r\nContent-Length: 1'],
    ['an asterisk target', 'OPTIONS * HTTP/1.1\r\nHost: x\r\nContent-Length: 1'],
    ['two spaces after the method', 'POST  /a HTTP/1.1\r\nHost: x\r\nContent-Length: 1'],
    ['something after the version', 'POST /a HTTP/1.1 x\r\nHost: x\r\nContent-Length: 1'],
    ['obsolete line folding', `${BASE}\r\nX-A: 1\r\n 2`],
    ['a tab-folded line', `${BASE}\r\nX-A: 1\r\n\t2`],
    ['whitespace before the colon', 'POST /a HTTP/1.1\r\nHost : x\r\nContent-Length: 1'],
    ['a header line without a colon', `${BASE}\r\nX-A`],
    ['an empty header name', `${BASE}\r\n: x`],
    ['a bare LF line end', 'POST /a HTTP/1.1\nHost: x\r\nContent-Length: 1'],
    ['a bare CR inside a value', `${BASE}\r\nX-A: 1\r2`],
    ['a NUL in a value', `${BASE}\r\nX-A: 1\u00002`],
    ['a control character in a value', `${BASE}\r\nX-A: \u0001`],
    ['DEL in a value', `${BASE}\r\nX-A: \u007f`],
    ['a byte above ASCII in a value', `${BASE}\r\nX-A: caf\u00e9`],
    ['a byte above ASCII in the path', 'POST /caf\u00e9 HTTP/1.1\r\nHost: x\r\nContent-Length: 1'],
    ['a non-token character in a name', `${BASE}\r\nX(A): 1`],
    ['a header named __proto__', `${BASE}\r\n__proto__: 1`],
  ];
  for (const [what, head] of refused) {
    it(`leaves to node: ${what}`, () => {
      assert.equal(parse(head), null);
    });
  }

  it(`leaves to node a head over ${MAX_HEAD_BYTES} bytes and more than ${MAX_HEADER_LINES} header lines`, () => {
    assert.ok(parse(`${BASE}\r\nX-Big: ${'a'.repeat(MAX_HEAD_BYTES - BASE.length - 20)}`) !== null, 'just under the size');
    assert.equal(parse(`${BASE}\r\nX-Big: ${'a'.repeat(MAX_HEAD_BYTES)}`), null);
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `\r\nX-${i}: 1`).join('');
    assert.ok(parse(`${BASE}${lines(MAX_HEADER_LINES - 3)}`) !== null, 'just under the line count');
    assert.equal(parse(`${BASE}${lines(MAX_HEADER_LINES)}`), null);
  });

  it('reads only the bytes it is given', () => {
    const buf = Buffer.from(`${BASE}\r\n\r\n{"input":{}}GARBAGE`, 'latin1');
    const end = buf.indexOf('\r\n\r\n');
    assert.equal(parseHead(buf, 0, end, null)?.contentLength, 12);
  });
});

describe('answerText', () => {
  it('writes the status line, the headers in node order and the body; kept alive', () => {
    const text = answerText(
      { status: 200, text: '{"a":"é"}', close: false, extra: { 'x-svc-decision-id': 'd1' } },
      'Connection: keep-alive\r\nKeep-Alive: timeout=72\r\n\r\n',
    );
    assert.match(
      text,
      /^HTTP\/1\.1 200 OK\r\ncontent-type: application\/json; charset=utf-8\r\ncontent-length: 10\r\nx-svc-decision-id: d1\r\nDate: [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=72\r\n\r\n\{"a":"é"\}$/,
    );
  });

  it('writes `connection: close` (and no Keep-Alive) for an answer that closes', () => {
    const text = answerText({ status: 400, text: '{}', close: true, extra: null }, 'Connection: keep-alive\r\n\r\n');
    assert.match(
      text,
      /^HTTP\/1\.1 400 Bad Request\r\ncontent-type: application\/json; charset=utf-8\r\ncontent-length: 2\r\nconnection: close\r\nDate: [^\r]+\r\n\r\n\{\}$/,
    );
  });
});
