/**
 * `svc-server --print-config[=yaml|json]`: the effective configuration, every option under its
 * config-file key with the source of its value (flag, env, file or default). Secrets are masked
 * by construction: a flag marked `secret` in the table shows `***`, and so does the user part
 * of any URL (`nats://user:pass@host` → `nats://***@host`). The YAML form is itself a valid
 * config file (comments aside, the `config` line is a comment: a file cannot name another).
 */
import { stringify } from 'yaml';
import { FLAG_GROUPS, type FlagDef } from './flags.js';
import { fileKeyOf } from './config-file.js';
import type { Address } from './values.js';

/** Where a value came from, weakest last: `flag` > `env` > `file` > `default`. */
export type Source = 'flag' | 'env' | 'file' | 'default';

/** Output format of `--print-config`. */
export type PrintFormat = 'yaml' | 'json';

/** One option's final value (as parsed, before `Config` is assembled) and its source. */
export interface EffectiveEntry {
  readonly def: FlagDef;
  readonly value: unknown;
  readonly source: Source;
}

/** What `--print-config` shows for a masked value. */
export const MASK = '***';

const URL_USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^/@\s,]*@/gi;

/** The value as shown: addresses as `host:port`, secrets and URL user parts masked. */
export function shownValue(def: FlagDef, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (def.secret) return MASK;
  if (def.kind.type === 'address') {
    const { host, port } = value as Address;
    return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  }
  if (typeof value === 'string') return value.replace(URL_USERINFO, `$1${MASK}@`);
  if (Array.isArray(value)) return value.map((item: unknown) => (typeof item === 'string' ? item.replace(URL_USERINFO, `$1${MASK}@`) : item));
  return value;
}

/** Renders the entries (in flag-table order) as YAML with a source comment per line, or JSON. */
export function renderEffectiveConfig(entries: readonly EffectiveEntry[], format: PrintFormat): string {
  if (format === 'json') {
    const out: Record<string, { value: unknown; source: Source }> = {};
    for (const e of entries) out[fileKeyOf(e.def.name)] = { value: shownValue(e.def, e.value), source: e.source };
    return `${JSON.stringify(out, null, 2)}\n`;
  }
  const lines = [
    '# svc-server effective configuration: every option, then where its value came from',
    `# (flag, env, file or default; a flag beats env, env beats file, file beats default). Secrets show as ${MASK}.`,
  ];
  const rows = entries.filter((e) => e.def.name !== 'config');
  const config = entries.find((e) => e.def.name === 'config');
  lines.push(`# config file: ${config && config.value !== null ? `${String(config.value)} (from ${config.source})` : 'none'}`);
  const texts = rows.map((e) => `${fileKeyOf(e.def.name)}: ${yamlValue(shownValue(e.def, e.value))}`);
  const width = Math.max(...texts.map((t) => t.length)) + 2;
  for (const group of FLAG_GROUPS) {
    const inGroup = rows.flatMap((e, i) => (e.def.group === group ? [{ e, text: texts[i]! }] : []));
    if (inGroup.length === 0) continue;
    lines.push('', `# ${group}`);
    for (const { e, text } of inGroup) lines.push(`${text.padEnd(width)}# ${comment(e)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** `env`, `default (random ...)`, `flag, secret`. */
function comment(e: EffectiveEntry): string {
  const notes = [e.source as string];
  if (e.value === null && e.def.defaultText !== undefined) notes[0] = `${e.source}: ${e.def.defaultText}`;
  if (e.def.secret && e.value !== null) notes.push('secret');
  return notes.join(', ');
}

/** One value in YAML on one line (lists in flow style). */
function yamlValue(value: unknown): string {
  return stringify(value, { collectionStyle: 'flow', lineWidth: 0 }).trimEnd();
}
