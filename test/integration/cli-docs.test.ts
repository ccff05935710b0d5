/**
 * Every command-line example in README.md and docs/*.md runs as written.
 *
 * The tools are called the way an install calls them: through links named after package.json's
 * `bin` entries (what `npm install -g .` and `npx` put on PATH) to the built files in dist/bin
 * (`npm test` builds first). The signing examples run in a shell, in document order, in a temp
 * dir holding the rule files they name; the server examples (svc-server, svc-cluster,
 * `npm start --`) have their flags parsed by the server's own configuration parser, since
 * starting every documented deployment (brokers, TLS files, other hosts) is not the point.
 * One real `npx` run checks that npx resolves the package's own bins from a clone.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { takeWorkersFlag } from '../../src/cluster/plan.js';
import { ConfigExit, parseConfig } from '../../src/config/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: Record<string, string> };
const TOOLS = Object.keys(pkg.bin);
/** Tools whose examples run as written (the others are servers: their flags are parsed). */
const SIGNING_TOOLS = new Set(['svc-keygen', 'svc-sign', 'svc-compile', 'svc-verify', 'svc-apikey']);

/** One command found in a fenced code block of a document. */
interface DocCommand {
  readonly where: string;
  readonly tool: string;
  /** The command line as written (continuations joined, prompt and trailing comment removed). */
  readonly line: string;
  /** Server examples: the arguments after the tool (or after `npm start --`). */
  readonly args: string;
}

const TOOL_RE = /^(svc-[a-z]+)(?=\s|$)/;
const NODE_BIN_RE = /^node\s+dist\/bin\/(svc-[a-z]+)\.js(?=\s|$)/;
const NPM_START_RE = /^npm start --(?=\s|$)/;

/** Collects the tool invocations of a Markdown file's fenced code blocks. */
function docCommands(file: string): DocCommand[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const out: DocCommand[] = [];
  let fenced = false;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.trimStart().startsWith('```')) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) continue;
    const start = i;
    let text = raw.trim().replace(/^\$\s+/, '');
    while (text.endsWith('\\') && i + 1 < lines.length) text = `${text.slice(0, -1).trimEnd()} ${lines[++i]!.trim()}`;
    // `npx svc-x` runs the same bin link as `svc-x` after a global install.
    text = text
      .replace(/\s+#\s.*$/, '')
      .replace(/^npx\s+/, '')
      .trim();
    const m = TOOL_RE.exec(text) ?? NODE_BIN_RE.exec(text);
    const tool = m?.[1] ?? (NPM_START_RE.test(text) ? 'svc-server' : undefined);
    if (tool === undefined || !TOOLS.includes(tool)) continue;
    const rest = m ? text.slice(m[0].length) : text.replace(NPM_START_RE, '');
    out.push({ where: `${file}:${start + 1}`, tool, line: text, args: rest.trim() });
  }
  return out;
}

/** Splits a command line into words (plain, single- and double-quoted words; no expansion). */
function words(text: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const m of text.matchAll(re)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}

// docs/signing.md first: it makes the keys the other pages' examples use.
const DOCS = [
  'docs/signing.md',
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md') && f !== 'signing.md')
    .sort()
    .map((f) => `docs/${f}`),
];
const COMMANDS = DOCS.flatMap(docCommands);

/**
 * Config files shown in the docs: a fenced block whose first line is a comment naming an absolute
 * `.yaml`/`.json` path (`# /etc/svc/svc.yaml`). The server examples that pass `--config` that
 * path read this text, so the documented file is checked along with the flags.
 */
function docConfigFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const file of DOCS) {
    for (const m of readFileSync(join(root, file), 'utf8').matchAll(/```(?:yaml|json)\n# (\/\S+\.(?:yaml|yml|json))\n([\s\S]*?)```/g)) {
      files.set(m[1]!, m[2]!);
    }
  }
  return files;
}
const DOC_CONFIG_FILES = docConfigFiles();

const RULE = {
  config: { name: 'loan', version: '1.0.0', entry_step: 'age' },
  steps: {
    age: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'approve' }], default_next: 'reject' },
    approve: { type: 'terminal', result: { code: 'APPROVE', message: 'approved' } },
    reject: { type: 'terminal', result: { code: 'REJECT' } },
  },
};
const RULE_YAML = `# loan rule
config: {name: loan, version: 1.0.0, entry_step: age}
steps:
  age:
    type: decision
    branches:
      - {condition: user.age >= 18, next_step: approve}
    default_next: reject
  approve: {type: terminal, result: {code: APPROVE, message: approved}}
  reject: {type: terminal, result: {code: REJECT}}
`;

let dir: string;
let binDir: string;
let env: NodeJS.ProcessEnv;

function sh(line: string, cwd: string) {
  return spawnSync('sh', ['-c', line], { cwd, env, encoding: 'utf8', timeout: 60_000 });
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-docs-'));
  binDir = join(dir, '.bin');
  mkdirSync(binDir);
  for (const [name, target] of Object.entries(pkg.bin)) {
    const file = join(root, target);
    assert.ok(existsSync(file), `${target} is missing: build first (npm run build, or npm test)`);
    assert.match(readFileSync(file, 'utf8'), /^#!\/usr\/bin\/env node\n/, `${target} has no node shebang`);
    // NOTE: npm's bin linking makes the target executable the same way (npx, npm install -g).
    chmodSync(file, 0o755);
    symlinkSync(file, join(binDir, name));
  }
  env = { ...process.env, PATH: `${binDir}:${dirname(process.execPath)}:${process.env.PATH ?? ''}` };
  const work = join(dir, 'work');
  mkdirSync(join(work, 'rules'), { recursive: true });
  writeFileSync(join(work, 'rules', 'loan.json'), `${JSON.stringify(RULE, null, 2)}\n`);
  writeFileSync(join(work, 'rules', 'loan.yaml'), RULE_YAML);
  writeFileSync(join(work, 'loan-signed.json'), `${JSON.stringify(RULE, null, 2)}\n`);
  // The svc-sign examples come before svc-compile's in the document and re-sign a .svc.
  const compiled = sh('svc-compile -i rules/loan.json', work);
  assert.equal(compiled.status, 0, compiled.stderr);
});

after(() => rmSync(dir, { recursive: true, force: true }));

describe('documented command-line examples', () => {
  it('the documents show every tool, and the examples were found', () => {
    const shown = new Set(COMMANDS.map((c) => c.tool));
    for (const tool of ['svc-keygen', 'svc-sign', 'svc-compile', 'svc-verify', 'svc-server', 'svc-cluster']) {
      assert.ok(shown.has(tool), `no example of ${tool} in README.md or docs/`);
    }
    assert.ok(COMMANDS.filter((c) => SIGNING_TOOLS.has(c.tool)).length >= 10);
  });

  it('every tool answers --help through its bin link', () => {
    for (const tool of TOOLS) {
      const r = sh(`${tool} --help`, dir);
      assert.equal(r.status, 0, `${tool} --help: ${r.stderr}`);
      assert.match(r.stdout, /Usage: svc[- ]/, tool);
    }
  });

  it('the signing examples run as written, in document order', () => {
    const work = join(dir, 'work');
    // The CI example's variables: the runner's temp dir (holding private.key) and a rule file.
    const ciEnv = `RUNNER_TEMP=${join(work, 'keys')} f=rules/loan.json; export RUNNER_TEMP f; `;
    let ran = 0;
    for (const c of COMMANDS) {
      if (!SIGNING_TOOLS.has(c.tool)) continue;
      // `node dist/bin/svc-x.js ...` (README, from the clone) runs the same file as the bin link.
      const line = c.line.startsWith(c.tool) ? c.line : `${c.tool} ${c.args}`;
      const r = sh(ciEnv + line, work);
      assert.equal(r.status, 0, `${c.where}: \`${c.line}\` exited ${r.status}: ${r.stderr}${r.stdout}`);
      ran++;
    }
    assert.ok(ran >= 10);
    for (const f of ['keys/public.key', 'keys/private.key', 'keys/prod-public.key', 'out/loan.yaml', 'build/loan.svc', 'signed/loan.json', 'me.key']) {
      assert.ok(existsSync(join(work, f)), `${f} was not written`);
    }
  });

  it("the server examples' flags are valid", () => {
    let checked = 0;
    for (const c of COMMANDS) {
      if (SIGNING_TOOLS.has(c.tool)) continue;
      let argv = words(c.args);
      if (c.tool === 'svc-cluster') argv = takeWorkersFlag(argv).rest;
      try {
        parseConfig(argv, {}, { readFile: (path) => DOC_CONFIG_FILES.get(path) ?? readFileSync(path, 'utf8') });
      } catch (err) {
        if (err instanceof ConfigExit && err.exitCode === 0) continue;
        assert.fail(`${c.where}: \`${c.line}\`: ${(err as Error).message}`);
      }
      checked++;
    }
    assert.ok(checked >= 10, `only ${checked} server examples found`);
  });

  it('npx resolves the package’s own bins from the clone', () => {
    // A fresh npm cache and --offline: npx links this directory, it fetches nothing.
    const cache = join(dir, 'npm-cache');
    const r = spawnSync('npx', ['--offline', 'svc-keygen', '--help'], {
      cwd: root,
      env: { ...env, npm_config_cache: cache, npm_config_update_notifier: 'false' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Usage: svc-keygen/);
  });
});
