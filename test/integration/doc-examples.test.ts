/**
 * The HTTP examples of README.md and docs/*.md run against a real server and answer what the
 * page says they answer.
 *
 * Marking (written in the Markdown source, invisible on the rendered page):
 *
 * - `<!-- doctest -->` on the line before a ```sh block: the block runs. Two layouts:
 *   - prompt layout: commands start with `$ ` (a trailing `\` continues a command on the next
 *     line); the lines after a command, up to the next `$ ` line or a blank line, are its
 *     documented answer. After a blank line, lines starting with `# ` are comments.
 *   - plain layout (no `$ ` line): the whole block runs as one shell script, and the ```json
 *     block (or plain ``` block, for text) right after it (only blank lines between) holds the
 *     documented answers, one JSON value after the other. Without such a block the script only has to exit 0.
 * - `<!-- doctest: skip <reason> -->` before a block: not run, for the reason given (TLS files,
 *   a broker, another host...). Every fenced block holding a `curl` command carries one of the
 *   two markers; a block without one fails this test.
 * - `<!-- doctest-server: <flags> -->` anywhere in a page: the flags its server starts with
 *   (default `--rules-dir examples/rules`).
 * - `<!-- doctest-file: <name> -->` before a fenced block: the block's text is written to
 *   `<name>` in the page's working dir before its examples run (a document the page shows and
 *   then uploads with `-d @<name>`).
 *
 * Each page that has runnable blocks gets its own server (`node dist/bin/svc-server.js`, HTTP
 * on a free port, gRPC on another) in a fresh temp dir holding a copy of examples/, so pages do
 * not see each other's changes and the blocks of one page run in page order. `localhost:<port>`
 * in a command is rewritten to the server's port.
 *
 * Comparing: answers that parse as JSON are compared as JSON. In a documented answer `...`
 * stands for anything: a `"..."` value matches any value, a bare `...` as an array element or
 * an object member matches the rest of the array or object, a `...` line of a text answer
 * matches any number of lines and a `...` inside a line any text. Values that change from run to run (durations, uptimes,
 * timestamps, content hashes, decision ids) are compared by type only (`MASKED_KEYS`). Other
 * text answers are compared line by line.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SERVER = join(root, 'dist/bin/svc-server.js');
const DEFAULT_FLAGS = '--rules-dir examples/rules';

const DOCS = [
  'README.md',
  'examples/README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

/** Keys whose values differ from run to run: compared by JSON type only. */
const MASKED_KEYS = new Set([
  'duration_us',
  'total_duration_us',
  'uptime_seconds',
  'timestamp',
  'time',
  'ready_ms',
  'signed_at',
  'decision_id',
  'created_at',
  'updated_at',
  'since',
  'last_event_at',
  'at',
]);

/** One command of a prompt-layout block, or the whole script of a plain block. */
interface Example {
  readonly where: string;
  readonly script: string;
  /** The documented answer text, or undefined when none is documented. */
  readonly expected: string | undefined;
}

interface Page {
  readonly file: string;
  readonly flags: string;
  readonly examples: Example[];
  /** Files the page's examples read: name → text. */
  readonly files: Map<string, string>;
  /** Fenced blocks holding `curl` without a marker (`file:line`). */
  readonly unmarked: string[];
  readonly skipped: number;
}

const MARK = /^<!--\s*doctest\s*-->$/;
const SKIP = /^<!--\s*doctest:\s*skip\b\s*(.*?)\s*-->$/;
const FILE = /^<!--\s*doctest-file:\s*([\w.-]+)\s*-->$/;
const SERVER_FLAGS = /^<!--\s*doctest-server:\s*(.*?)\s*-->$/m;

/** Reads a page's fenced blocks and its markers. */
function readPage(file: string): Page {
  const text = readFileSync(join(root, file), 'utf8');
  const lines = text.split('\n');
  const examples: Example[] = [];
  const unmarked: string[] = [];
  const files = new Map<string, string>();
  let skipped = 0;
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const indent = open[1]!.length;
    const body: string[] = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) body.push(lines[i]!.slice(indent));
    // The marker: the closest non-blank line above the fence.
    let m = start - 1;
    while (m >= 0 && lines[m]!.trim() === '') m--;
    const marker = m >= 0 ? lines[m]!.trim() : '';
    const where = `${file}:${start + 1}`;
    const named = FILE.exec(marker);
    if (named) {
      files.set(named[1]!, `${body.join('\n')}\n`);
      continue;
    }
    const skip = SKIP.exec(marker);
    if (skip) {
      assert.ok(skip[1]!.length > 0, `${where}: a skipped example needs a reason: <!-- doctest: skip <reason> -->`);
      skipped++;
      continue;
    }
    if (!MARK.test(marker)) {
      if (body.some((l) => /(^|\s|\$ )curl\s/.test(l))) unmarked.push(where);
      continue;
    }
    assert.equal(open[2], 'sh', `${where}: <!-- doctest --> marks a \`\`\`sh block`);
    if (body.some((l) => l.startsWith('$ '))) {
      examples.push(...promptExamples(body, where));
    } else {
      // Plain layout: the answers are in the ```json block right after.
      let j = i + 1;
      while (j < lines.length && lines[j]!.trim() === '') j++;
      let expected: string | undefined;
      if (j < lines.length && /^\s*```(json)?\s*$/.test(lines[j]!)) {
        const out: string[] = [];
        for (j++; j < lines.length && !/^\s*```\s*$/.test(lines[j]!); j++) out.push(lines[j]!);
        expected = out.join('\n');
      }
      examples.push({ where, script: body.join('\n'), expected });
    }
  }
  const flags = SERVER_FLAGS.exec(text)?.[1] ?? DEFAULT_FLAGS;
  return { file, flags, examples, files, unmarked, skipped };
}

/** Splits a prompt-layout block into commands and their documented answers. */
function promptExamples(body: string[], where: string): Example[] {
  const out: Example[] = [];
  for (let i = 0; i < body.length; i++) {
    if (!body[i]!.startsWith('$ ')) continue;
    let command = body[i]!.slice(2);
    while (command.endsWith('\\') && i + 1 < body.length) command = `${command}\n${body[++i]!}`;
    const answer: string[] = [];
    while (i + 1 < body.length && !body[i + 1]!.startsWith('$ ') && body[i + 1]!.trim() !== '') answer.push(body[++i]!);
    out.push({ where: `${where} \`${command.split('\n')[0]!.slice(0, 60)}\``, script: command, expected: answer.length > 0 ? answer.join('\n') : undefined });
  }
  return out;
}

/** Documented JSON with bare `...` made parseable: `"..."` values, `"...": "..."` members. */
function dotsToJson(text: string): string {
  let out = '';
  const stack: string[] = [];
  let keyPosition = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
      keyPosition = false;
      continue;
    }
    if (text.startsWith('...', i)) {
      out += stack.at(-1) === '{' && keyPosition ? '"...": "..."' : '"..."';
      i += 2;
      keyPosition = false;
      continue;
    }
    if (c === '{' || c === '[') stack.push(c);
    if (c === '}' || c === ']') stack.pop();
    if (c === '{' || c === ',') keyPosition = stack.at(-1) === '{';
    else if (!/\s/.test(c)) keyPosition = false;
    out += c;
  }
  return out;
}

/**
 * Parses a run of JSON values written one after the other (curl prints no newline after an
 * answer, so they may touch); undefined when the text is not such a run.
 */
function jsonValues(text: string): unknown[] | undefined {
  const values: unknown[] = [];
  let i = 0;
  const skipSpace = (): void => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  for (skipSpace(); i < text.length; skipSpace()) {
    const start = i;
    if (text[i] === '{' || text[i] === '[') {
      let depth = 0;
      for (; i < text.length; i++) {
        const c = text[i]!;
        if (c === '"') {
          for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
        } else if (c === '{' || c === '[') depth++;
        else if ((c === '}' || c === ']') && --depth === 0) break;
      }
      i++;
    } else if (text[i] === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      i++;
    } else {
      while (i < text.length && !/[\s{["]/.test(text[i]!)) i++;
    }
    try {
      values.push(JSON.parse(text.slice(start, i)));
    } catch {
      return undefined;
    }
  }
  return values;
}

/** Compares a documented JSON value with the actual one; returns the first difference or null. */
function jsonDiff(expected: unknown, actual: unknown, path: string): string | null {
  if (expected === '...') return null;
  const key = path
    .split('.')
    .at(-1)!
    .replace(/\[\d+\]$/, '');
  if (MASKED_KEYS.has(key)) return typeof expected === typeof actual ? null : `${path}: expected a ${typeof expected}, got ${JSON.stringify(actual)}`;
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${JSON.stringify(actual)}`;
    const open = expected.at(-1) === '...' && expected.length > 0;
    const items = open ? expected.slice(0, -1) : expected;
    if (open ? actual.length < items.length : actual.length !== items.length)
      return `${path}: expected ${items.length}${open ? ' or more' : ''} items, got ${actual.length}: ${JSON.stringify(actual)}`;
    for (let i = 0; i < items.length; i++) {
      const d = jsonDiff(items[i], actual[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return `${path}: expected an object, got ${JSON.stringify(actual)}`;
    const e = expected as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    const open = '...' in e;
    for (const k of Object.keys(e)) {
      if (k === '...') continue;
      if (!(k in a)) return `${path}.${k}: missing in the answer ${JSON.stringify(actual)}`;
      const d = jsonDiff(e[k], a[k], `${path}.${k}`);
      if (d) return d;
    }
    if (!open) for (const k of Object.keys(a)) if (!(k in e)) return `${path}.${k}: in the answer but not documented (${JSON.stringify(a[k])})`;
    return null;
  }
  return Object.is(expected, actual) ? null : `${path}: documented ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

/** One documented line against one answered line; `...` inside the line matches any text. */
function lineMatches(expected: string, actual: string): boolean {
  if (!expected.includes('...')) return expected === actual;
  const pattern = expected
    .split('...')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`).test(actual);
}

/** Compares text answers line by line; a `...` line matches any number of lines. */
function textMatches(expected: string[], actual: string[]): boolean {
  if (expected.length === 0) return actual.length === 0;
  if (expected[0]!.trim() === '...') {
    for (let skip = 0; skip <= actual.length; skip++) if (textMatches(expected.slice(1), actual.slice(skip))) return true;
    return false;
  }
  return actual.length > 0 && lineMatches(expected[0]!.trimEnd(), actual[0]!.trimEnd()) && textMatches(expected.slice(1), actual.slice(1));
}

/** Checks an answer against its documentation; throws with the difference. */
function checkAnswer(ex: Example, stdout: string): void {
  if (ex.expected === undefined) return;
  const documented = jsonValues(dotsToJson(ex.expected));
  const got = jsonValues(stdout);
  if (documented !== undefined && got !== undefined) {
    assert.equal(got.length, documented.length, `${ex.where}: documented ${documented.length} answers, got ${got.length}:\n${stdout}`);
    documented.forEach((d, i) => {
      const diff = jsonDiff(d, got[i], '$');
      assert.equal(diff, null, `${ex.where}: answer ${i + 1}: ${diff}\nanswer: ${stdout}`);
    });
    return;
  }
  const want = ex.expected.split('\n');
  const have = stdout.replace(/\n$/, '').split('\n');
  assert.ok(textMatches(want, have), `${ex.where}: the answer differs from the page.\ndocumented:\n${ex.expected}\nanswer:\n${stdout}`);
}

interface Server {
  readonly child: ChildProcess;
  readonly port: number;
  readonly log: string[];
}

/** Starts a server in `cwd` and resolves once it has logged `ready` (with its HTTP port). */
function startServer(cwd: string, flags: string): Promise<Server> {
  const args = [SERVER, ...flags.split(/\s+/).filter((w) => w !== ''), '--http-addr', '127.0.0.1:0', '--grpc-addr', '127.0.0.1:0', '--log-format', 'json'];
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  return new Promise((res, rej) => {
    let buffer = '';
    const timer = setTimeout(() => rej(new Error(`the server did not get ready in 20 s:\n${log.join('\n')}`)), 20_000);
    const onData = (chunk: Buffer): void => {
      buffer += chunk.toString('utf8');
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        log.push(line);
        const m = /"msg":"ready"/.test(line) ? /"http":"https?:\/\/[^"]*:(\d+)"/.exec(line) : null;
        if (m) {
          clearTimeout(timer);
          res({ child, port: Number(m[1]), log });
        }
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`the server exited with ${code}:\n${log.join('\n')}`));
    });
  });
}

function stopServer(s: Server): Promise<void> {
  return new Promise((res) => {
    if (s.child.exitCode !== null) return res();
    s.child.once('exit', () => res());
    s.child.kill('SIGTERM');
  });
}

const PAGES = DOCS.map(readPage);
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh working dir holding a copy of examples/. */
function workDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-doc-examples-'));
  dirs.push(dir);
  cpSync(join(root, 'examples'), join(dir, 'examples'), { recursive: true });
  return dir;
}

describe('documented HTTP examples', () => {
  it('every curl example is marked as run or as skipped with a reason', () => {
    const unmarked = PAGES.flatMap((p) => p.unmarked);
    assert.deepEqual(unmarked, [], 'mark these blocks <!-- doctest --> or <!-- doctest: skip <reason> -->');
    const run = PAGES.reduce((n, p) => n + p.examples.length, 0);
    const skipped = PAGES.reduce((n, p) => n + p.skipped, 0);
    assert.ok(run > skipped * 2, `only ${run} examples run and ${skipped} blocks are skipped`);
  });

  it('the pages stand alone: no references to files or issues a reader of the repository does not have', () => {
    const found: string[] = [];
    for (const file of DOCS) {
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/SPEC\.md|SPEC rule|DECISIONS\.md|EXTENSIONS\.md|DEPENDENCIES\.md|\.\.\/shared\/|\bissue \d+/.test(line))
            found.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    assert.deepEqual(found, []);
  });

  it('the comparison of answers can fail', () => {
    const ex = (expected: string): Example => ({ where: 'self-check', script: '', expected });
    assert.throws(() => checkAnswer(ex('{"code":"APPROVE"}'), '{"code":"REVIEW"}\n'));
    assert.throws(() => checkAnswer(ex('{"code":"APPROVE"}'), '{"code":"APPROVE","extra":1}\n'));
    assert.throws(() => checkAnswer(ex('[1, 2]'), '[1]\n'));
    assert.throws(() => checkAnswer(ex('a\nb'), 'a\nc\n'));
    checkAnswer(ex('{"code":"APPROVE", ...}'), '{"code":"APPROVE","extra":1}\n');
    checkAnswer(ex('{"a":[1, ...],"duration_us":1}'), '{"a":[1,2,3],"duration_us":77}\n');
    checkAnswer(ex('{"a":"..."}\n[]'), '{"a":{"b":2}}\n[]\n');
    checkAnswer(ex('a\n...\nz'), 'a\nb\nc\nz\n');
    checkAnswer(ex('sum{x="1"} ...'), 'sum{x="1"} 0.0042\n');
    assert.throws(() => checkAnswer(ex('sum{x="1"} ...'), 'sum{x="2"} 0.0042\n'));
  });

  it('every example ruleset loads and its tests pass', async () => {
    const cwd = workDir();
    const server = await startServer(cwd, DEFAULT_FLAGS);
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const files = readdirSync(join(root, 'examples/rules')).filter((f) => f.endsWith('.json'));
      const listed = (await (await fetch(`${base}/api/v1/rulesets`)).json()) as { name: string }[];
      assert.deepEqual(listed.map((r) => `${r.name}.json`).sort(), files.sort(), server.log.join('\n'));
      for (const f of files) {
        const name = f.replace(/\.json$/, '');
        const doc = JSON.parse(readFileSync(join(root, 'examples/rules', f), 'utf8')) as { tests?: unknown[] };
        assert.ok((doc.tests?.length ?? 0) > 0, `examples/rules/${f} has no tests`);
        const report = (await (await fetch(`${base}/api/v1/rulesets/${name}/test`, { method: 'POST' })).json()) as { passed: number; failed: number };
        assert.equal(report.failed, 0, `${f}: ${JSON.stringify(report)}`);
        assert.equal(report.passed, doc.tests!.length);
      }
      const analysis = (await (await fetch(`${base}/api/v1/rulesets/loan/analysis`)).json()) as { warnings: unknown[] };
      assert.deepEqual(analysis.warnings, []);
      // The changed version of examples/changes/ is valid and its tests pass too.
      const v2 = await fetch(`${base}/api/v1/draft/test`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ruleset: JSON.parse(readFileSync(join(root, 'examples/changes/loan-v2.json'), 'utf8')) }),
      });
      const v2report = (await v2.json()) as { failed: number };
      assert.equal(v2report.failed, 0, JSON.stringify(v2report));
    } finally {
      await stopServer(server);
    }
  });

  for (const page of PAGES.filter((p) => p.examples.length > 0)) {
    it(`${page.file}: ${page.examples.length} examples answer as documented`, async () => {
      const cwd = workDir();
      for (const [name, text] of page.files) writeFileSync(join(cwd, name), text);
      const server = await startServer(cwd, page.flags);
      try {
        for (const ex of page.examples) {
          const script = ex.script.replace(/localhost:\d+/g, `localhost:${server.port}`);
          const r = spawnSync('bash', ['-c', `set -o pipefail\n${script}`], { cwd, encoding: 'utf8', timeout: 30_000 });
          assert.equal(r.status, 0, `${ex.where}: exited ${r.status}\n${r.stderr}${r.stdout}`);
          checkAnswer(ex, r.stdout);
        }
      } finally {
        await stopServer(server);
      }
    });
  }
});
