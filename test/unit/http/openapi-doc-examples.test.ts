/**
 * Every JSON request body of a `curl` example in README.md and docs/*.md (`-d '{...}'`,
 * `--data`, `--data-raw`, `--data-binary`) validates against the request schema the OpenAPI
 * document gives the route it calls, and every example calls a documented route.
 *
 * Not checked, on purpose:
 * - bodies read from a file or stdin (`-d @loan.json`, `--data-binary @-`): the text is not
 *   in the docs;
 * - examples whose shown answer is a request error (`"code": "BAD_REQUEST"`, 404, 405, 415...):
 *   they show what a wrong request gets;
 * - bodies with shell expansions (`"$VAR"` outside single quotes), whose text is not literal.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildOpenApi } from '../../../src/transport/http/openapi.js';
import { ROUTES } from '../../../src/transport/http/routes.js';
import { DocSchemas, matchOperation, requestSchemaPointer } from './openapi-support.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/** The document of every route (all modes). */
const DOC = buildOpenApi(ROUTES, { version: 'test', multiTenancy: true, auth: { publicMetrics: false } }) as any;

/** One `curl` example. */
export interface CurlExample {
  readonly file: string;
  readonly line: number;
  readonly method: string;
  readonly path: string | null;
  /** The body text; null without one. */
  readonly data: string | null;
  /** Why the body cannot be checked (file, stdin, shell expansion); null when it can. */
  readonly unchecked: string | null;
  /** The answer shown after the command (up to the next command), for context. */
  readonly answer: string;
}

/** Splits a shell command into words: quotes, backslash escapes and line continuations. */
export function shellWords(text: string): { words: string[]; expanded: boolean[]; end: number } {
  const words: string[] = [];
  const expanded: boolean[] = [];
  let cur: string | null = null;
  let exp = false;
  let i = 0;
  const push = () => {
    if (cur !== null) {
      words.push(cur);
      expanded.push(exp);
    }
    cur = null;
    exp = false;
  };
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && text[i + 1] === '\n') {
      i++;
      push();
      continue;
    }
    if (c === '\n' || c === '|' || c === ';' || c === '>' || (c === '&' && text[i + 1] === '&')) break;
    if (c === ' ' || c === '\t') {
      push();
      continue;
    }
    if (c === "'") {
      const close = text.indexOf("'", i + 1);
      if (close < 0) break;
      cur = (cur ?? '') + text.slice(i + 1, close);
      i = close;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      let s = '';
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === '\\' && j + 1 < text.length) s += text[++j];
        else {
          if (text[j] === '$') exp = true;
          s += text[j];
        }
      }
      cur = (cur ?? '') + s;
      i = j;
      continue;
    }
    if (c === '\\' && i + 1 < text.length) {
      cur = (cur ?? '') + text[++i];
      continue;
    }
    if (c === '$') exp = true;
    cur = (cur ?? '') + c;
  }
  push();
  return { words, expanded, end: i };
}

const DATA_FLAGS = new Set(['-d', '--data', '--data-raw', '--data-binary', '--data-ascii']);

/** The `curl` examples in the fenced code blocks of `text`. */
export function curlExamples(file: string, text: string): CurlExample[] {
  const out: CurlExample[] = [];
  const fence = /^```[^\n]*\n([\s\S]*?)^```/gm;
  for (let m = fence.exec(text); m !== null; m = fence.exec(text)) {
    const block = m[1] ?? '';
    const blockLine = text.slice(0, m.index).split('\n').length + 1;
    const re = /(^|[\s|$])curl\s/g;
    for (let c = re.exec(block); c !== null; c = re.exec(block)) {
      const start = c.index + c[0].indexOf('curl');
      const { words, expanded, end } = shellWords(block.slice(start));
      let method: string | null = null;
      let path: string | null = null;
      let data: string | null = null;
      let unchecked: string | null = null;
      for (let i = 1; i < words.length; i++) {
        const w = words[i]!;
        if (w === '-X' || w === '--request') method = words[++i] ?? null;
        else if (DATA_FLAGS.has(w)) {
          data = words[++i] ?? '';
          if (data.startsWith('@')) unchecked = data === '@-' ? 'stdin' : `file ${data}`;
          else if (expanded[i]) unchecked = 'shell expansion';
        } else if (w === '-H' || w === '--header' || w === '-o' || w === '-u' || w === '-w' || w === '--cacert' || w === '--cert' || w === '--key') i++;
        else if (!w.startsWith('-') && path === null) {
          const at = w.search(/\/(api|health|healthz|metrics)\b/);
          if (at >= 0) path = w.slice(at);
        }
      }
      // The answer shown: the lines after the command up to the next command.
      const rest = block.slice(start + end);
      const next = rest.search(/^\$ |^curl /m);
      out.push({
        file,
        line: blockLine + block.slice(0, start).split('\n').length - 1,
        method: method ?? (data !== null ? 'POST' : 'GET'),
        path,
        data,
        unchecked,
        answer: next < 0 ? rest : rest.slice(0, next),
      });
    }
  }
  return out;
}

/** True when the shown answer is a request error (the example shows a wrong request). */
function showsRequestError(answer: string): boolean {
  return /"code":\s*"(BAD_REQUEST|INPUT_INVALID|NOT_FOUND|TENANT_NOT_FOUND|METHOD_NOT_ALLOWED|UNSUPPORTED_MEDIA_TYPE|PAYLOAD_TOO_LARGE|UNAUTHENTICATED|FORBIDDEN|LIMIT_EXCEEDED)"/.test(
    answer,
  );
}

function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f));
  return ['README.md', ...docs];
}

describe('curl examples of the docs against the OpenAPI request schemas', () => {
  it('the parser reads quotes, continuations and flags', () => {
    const [ex] = curlExamples('x.md', '```\n$ curl -s -X PUT localhost:8080/api/v1/data/x -H \'a: b\' \\\n  -d \'{"a":\n 1}\'\n{"status": "created"}\n```\n');
    assert.deepEqual(
      { ...ex, answer: ex?.answer.trim() },
      {
        file: 'x.md',
        line: 2,
        method: 'PUT',
        path: '/api/v1/data/x',
        data: '{"a":\n 1}',
        unchecked: null,
        answer: '{"status": "created"}',
      },
    );
    assert.equal(curlExamples('x.md', '```\ncurl -d @loan.json localhost/api/v1/rulesets\n```\n')[0]?.unchecked, 'file @loan.json');
    assert.equal(curlExamples('x.md', '```\ncurl -d "{\\"a\\": $N}" localhost/api/v1/eval\n```\n')[0]?.unchecked, 'shell expansion');
  });

  const schemas = new DocSchemas(DOC);
  const examples = docFiles().flatMap((f) => curlExamples(f, readFileSync(join(ROOT, f), 'utf8')));

  it('there are examples with bodies to check', () => {
    assert.ok(examples.filter((e) => e.data !== null && e.unchecked === null).length >= 20, `found ${examples.length} curl examples`);
  });

  it('every example calls a documented route, and every literal JSON body matches its request schema', () => {
    const failures: string[] = [];
    for (const ex of examples) {
      const where = `${ex.file}:${ex.line} ${ex.method} ${ex.path ?? '?'}`;
      if (ex.path === null || showsRequestError(ex.answer)) continue;
      const found = matchOperation(DOC, ex.method, ex.path);
      if (found === null) {
        failures.push(`${where}: no such route in the document`);
        continue;
      }
      if (ex.data === null || ex.unchecked !== null) continue;
      if (found.op['requestBody'] === undefined) {
        failures.push(`${where}: sends a body to a route without one`);
        continue;
      }
      let body: unknown;
      try {
        body = JSON.parse(ex.data);
      } catch (err) {
        failures.push(`${where}: the body is not JSON (${(err as Error).message})`);
        continue;
      }
      const problems = schemas.check(requestSchemaPointer(found.path, ex.method), body);
      if (problems !== null) failures.push(`${where}: ${problems}`);
    }
    assert.deepEqual(failures, []);
  });
});
