/**
 * The `svc` commands (EXTENSIONS.md 2 "`svc` command"): each takes its parsed options, writes
 * its answer to stdout and returns the exit code (0 done, 1 a rule, test or server said no;
 * usage errors are CliErrors, exit 2). exec, eval and filter answer with the same JSON text as
 * the server's routes, from the same façade (./local-service.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { behaviouralDiff, structuralDiff, type Behavior, type BehaviorFn, type StructuralChange } from '../change/index.js';
import type { CompiledRuleset } from '../ruleset/index.js';
import { compileDraft } from '../service/change-service.js';
import { ServiceError } from '../service/errors.js';
import type { RuleService } from '../service/rule-service.js';
import { CliError, EXIT_FAILED, EXIT_OK, EXIT_USAGE } from '../signing/cli-support.js';
import { evalAnswer, executeAnswer } from '../transport/http/execution-answers.js';
import { CLI_CONTEXT, localService } from './local-service.js';
import { findRuleFiles, jsonArgument, readRuleFile } from './rule-files.js';
import { callsOf, missingCallees, workspaceOf } from './workspace.js';

/** Where a command writes (process.stdout/stderr; tests pass collectors). */
export interface Output {
  out(text: string): void;
  err(text: string): void;
}

/** The process's streams. */
export const STDIO: Output = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };

/**
 * Loads one rule file into a fresh local service, with the rulesets and datasets next to it
 * (./workspace.ts) so that its calls and `@name` reads resolve; returns the service and the
 * ruleset's name.
 */
async function loaded(file: string): Promise<{ service: RuleService; name: string }> {
  const { doc } = readRuleFile(file);
  const workspace = workspaceOf(file);
  const service = localService(workspace.data);
  const self = resolve(file);
  for (const sibling of workspace.rulesets.values()) {
    if (sibling.path !== self) await service.putRuleset(CLI_CONTEXT, sibling.doc).catch(() => undefined);
  }
  const put = await service.putRuleset(CLI_CONTEXT, doc);
  return { service, name: put.name };
}

/** Runs `fn`; a ServiceError is printed (its JSON body on stdout, its message on stderr) and is exit 1. */
async function answering(command: string, o: Output, fn: () => Promise<string> | string): Promise<number> {
  try {
    o.out(`${await fn()}\n`);
    return EXIT_OK;
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    o.out(`${JSON.stringify(err.toBody())}\n`);
    o.err(`svc ${command}: ${err.code}: ${err.message}\n`);
    return EXIT_FAILED;
  }
}

/** `svc exec FILE --input JSON|@file [--trace]`. */
export function execCommand(file: string, opts: { input: string; trace?: boolean }, o: Output = STDIO): Promise<number> {
  const input = jsonArgument(opts.input, '--input');
  return answering('exec', o, async () => {
    const { service, name } = await loaded(file);
    return executeAnswer(service, CLI_CONTEXT, name, { input, trace: opts.trace === true });
  });
}

/** `svc eval EXPR [--context JSON|@file]`. */
export function evalCommand(expression: string, opts: { context?: string }, o: Output = STDIO): Promise<number> {
  const context = opts.context === undefined ? {} : jsonArgument(opts.context, '--context');
  return answering('eval', o, () => evalAnswer(localService(), CLI_CONTEXT, { expression, context }));
}

/** `svc filter FILE --known JSON|@file --target CODE[,CODE] [--format sql|json|mongo] [--field-mapping JSON|@file]`. */
export function filterCommand(
  file: string,
  opts: { known: string; target: string[]; format?: string; fieldMapping?: string },
  o: Output = STDIO,
): Promise<number> {
  const request: Record<string, unknown> = {
    known_input: jsonArgument(opts.known, '--known'),
    target_results: opts.target
      .flatMap((t) => t.split(','))
      .map((t) => t.trim())
      .filter((t) => t !== ''),
    ...(opts.format !== undefined ? { format: opts.format } : {}),
    ...(opts.fieldMapping !== undefined ? { field_mapping: jsonArgument(opts.fieldMapping, '--field-mapping') } : {}),
  };
  return answering('filter', o, async () => {
    const { service, name } = await loaded(file);
    return JSON.stringify(service.filter(CLI_CONTEXT, name, request));
  });
}

/**
 * `svc diff OLD NEW [--json]` (EXTENSIONS.md 4, docs/cli.md): the structural changes from one
 * rule file to another, offline, as `POST /api/v1/rulesets/:name/diff` answers them. Exit 0: no
 * change; 1: changes; 2: an unreadable file or an invalid document (its problems on stderr).
 * `behavior`: the behavioural diff (../change/behavior.ts; offline, datasets are opaque);
 * `undefined` leaves it out (the JSON answer's `behavior` is null, no behaviour line).
 */
export function diffCommand(
  oldFile: string,
  newFile: string,
  opts: { json?: boolean },
  o: Output = STDIO,
  behavior: BehaviorFn | undefined = behaviouralDiff,
): number {
  const from = diffSide(oldFile);
  const to = diffSide(newFile);
  const changes = structuralDiff(from.doc, to.doc);
  // Calls and `@name` resolve against the new file's directory, then the old one's (./workspace.ts).
  const spaces = [workspaceOf(newFile), workspaceOf(oldFile)];
  const calls = (name: string): CompiledRuleset | undefined => spaces.map((w) => callsOf(w)(name)).find((c) => c !== undefined);
  const data = new Map([...spaces[1]!.data, ...spaces[0]!.data]);
  const missing = [...new Set([...missingCallees(from, spaces[1]!), ...missingCallees(to, spaces[0]!)])].filter((n) => calls(n) === undefined).sort();
  if (missing.length > 0 && behavior !== undefined)
    o.err(
      `svc diff: warning: ${missing.map((n) => `'${n}'`).join(', ')} ${missing.length === 1 ? 'is' : 'are'} called but not found next to the files; ` +
        `the behaviour is compared with ${missing.length === 1 ? 'that call' : 'those calls'} failing on both sides\n`,
    );
  const answer = { changes, behavior: behavior === undefined ? null : behavior(from, to, { data, calls }) };
  if (opts.json === true) o.out(`${JSON.stringify(answer)}\n`);
  else o.out(diffText(answer.changes, answer.behavior));
  return changes.length === 0 ? EXIT_OK : EXIT_FAILED;
}

/** One side of `svc diff`: the file read and compiled; any failure is a CliError with exit 2. */
function diffSide(file: string): ReturnType<typeof compileDraft> {
  let doc: unknown;
  try {
    doc = readRuleFile(file).doc;
  } catch (err) {
    if (err instanceof CliError) throw new CliError(err.message, EXIT_USAGE);
    throw err;
  }
  try {
    return compileDraft(doc);
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    const problems = (err.details?.['problems'] ?? []) as Array<{ path: string; message: string }>;
    const lines = problems.length > 0 ? problems.map((p) => `\n  ${p.path}: ${p.message}`).join('') : ` ${err.message}`;
    throw new CliError(`${file}: invalid ruleset:${lines}`, EXIT_USAGE);
  }
}

/** Longest value shown on a line of the text output. */
const SHOWN_VALUE = 120;

/** The text output of `svc diff`: one line a change (`~` change, `+` add, `-` remove), then a count. */
function diffText(changes: readonly StructuralChange[], behavior: Behavior | null): string {
  const show = (v: unknown): string => {
    const text = JSON.stringify(v);
    return text.length > SHOWN_VALUE ? `${text.slice(0, SHOWN_VALUE)}…` : text;
  };
  const lines = changes.map((c) => {
    if (c.op === 'add') return `+ ${c.path}: ${show(c.to)}`;
    if (c.op === 'remove') return `- ${c.path}: ${show(c.from)}`;
    return `~ ${c.path}: ${show(c.from)} -> ${show(c.to)}`;
  });
  lines.push(changes.length === 0 ? 'no structural changes' : `${changes.length} structural change${changes.length === 1 ? '' : 's'}`);
  if (behavior !== null) {
    const kind = behavior.exact ? 'exact' : 'approximate';
    const regions = `${behavior.regions.length} region${behavior.regions.length === 1 ? '' : 's'} with different codes`;
    lines.push(`behavior: ${behavior.equivalent ? 'equivalent' : regions} (${kind}${behavior.truncated ? ', truncated' : ''})`);
  }
  return `${lines.join('\n')}\n`;
}

/** The options of push and pull. */
export interface RemoteOptions {
  server: string;
  token?: string;
  tenant?: string;
}

/** Headers of a call to the server: JSON, the bearer token and the tenant when given. */
function remoteHeaders(opts: RemoteOptions, json: boolean): Record<string, string> {
  const token = opts.token ?? process.env['SVC_TOKEN'];
  return {
    accept: 'application/json',
    ...(json ? { 'content-type': 'application/json' } : {}),
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...(opts.tenant ? { 'x-tenant-id': opts.tenant } : {}),
  };
}

/** A server's answer. */
export interface RemoteReply {
  readonly status: number;
  readonly body: unknown;
  readonly text: string;
}

/** One call to the server; a network failure is a CliError (exit 1) naming the server. */
export async function remote(opts: RemoteOptions, method: string, path: string, body?: unknown): Promise<RemoteReply> {
  const url = new URL(path, opts.server.endsWith('/') ? opts.server : `${opts.server}/`);
  let res: Response;
  try {
    res = await fetch(url, { method, headers: remoteHeaders(opts, body !== undefined), ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  } catch (err) {
    throw new CliError(`cannot reach ${opts.server}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}`, EXIT_FAILED);
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

/** The reason of a refused call, with the problems of a 400 one per line. */
export function refusal(r: RemoteReply): string {
  const b = r.body as { error?: string; code?: string; problems?: Array<{ path: string; message: string }>; failures?: unknown[] } | undefined;
  if (!b || typeof b !== 'object') return `${r.status} ${r.text.slice(0, 200)}`;
  const lines = [`${r.status} ${b.code ?? ''}: ${b.error ?? ''}`];
  for (const p of b.problems ?? []) lines.push(`  ${p.path}: ${p.message}`);
  for (const f of b.failures ?? []) lines.push(`  ${JSON.stringify(f)}`);
  return lines.join('\n');
}

/** `svc push PATH... --server URL [--token T] [--tenant T]`: uploads every rule file; stops at the first refusal. */
export async function pushCommand(paths: string[], opts: RemoteOptions, o: Output = STDIO): Promise<number> {
  const files = findRuleFiles(paths);
  if (files.length === 0) throw new CliError(`no rule files (.json, .yaml, .yml, .svc) in ${paths.join(', ')}`, EXIT_FAILED);
  for (const file of files) {
    const { doc } = readRuleFile(file);
    const r = await remote(opts, 'POST', 'api/v1/rulesets', doc);
    if (r.status !== 200 && r.status !== 201) {
      o.err(`svc push: ${file} refused: ${refusal(r)}\n`);
      return EXIT_FAILED;
    }
    const put = (r.body ?? {}) as { status?: string; name?: string; warnings?: unknown[] };
    o.out(`${file}: ${put.status ?? 'stored'} ${put.name ?? ''}${Array.isArray(put.warnings) ? ` (${put.warnings.length} warnings)` : ''}\n`);
  }
  return EXIT_OK;
}

/** `svc pull DIR --server URL [--token T] [--tenant T]`: writes every ruleset as DIR/<name>.json. */
export async function pullCommand(dir: string, opts: RemoteOptions, o: Output = STDIO): Promise<number> {
  const list = await remote(opts, 'GET', 'api/v1/rulesets');
  if (list.status !== 200 || !Array.isArray(list.body)) {
    o.err(`svc pull: listing refused: ${refusal(list)}\n`);
    return EXIT_FAILED;
  }
  mkdirSync(dir, { recursive: true });
  for (const entry of list.body as Array<{ name: string }>) {
    const r = await remote(opts, 'GET', `api/v1/rulesets/${encodeURIComponent(entry.name)}`);
    if (r.status !== 200) {
      o.err(`svc pull: ${entry.name} refused: ${refusal(r)}\n`);
      return EXIT_FAILED;
    }
    const path = join(dir, `${entry.name}.json`);
    writeFileSync(path, `${JSON.stringify(r.body, null, 2)}\n`);
    o.out(`${path}\n`);
  }
  return EXIT_OK;
}
