/**
 * The ruleset document as the console reads it (docs/api.md, docs/steps.md), the edges of its
 * graph with the document location of each (`steps.age.branches[0]`, as validation problems,
 * warnings and test coverage name them), and the parsing of the editor's text (JSON or YAML).
 */
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

/** A step of any kind; only the keys the console draws are typed. */
export interface Step {
  type: 'decision' | 'table' | 'call' | 'action' | 'terminal' | string;
  name?: string;
  branches?: { condition: string; next_step: string }[];
  default_next?: string;
  next_step?: string;
  rows?: { when?: string[]; next_step?: string; set?: Record<string, string> }[];
  inputs?: string[];
  hit_policy?: string;
  ruleset?: string;
  result?: unknown;
  actions?: unknown[];
  [key: string]: unknown;
}

/** A ruleset document. */
export interface RulesetDoc {
  config: { name: string; entry_step: string; version?: string; description?: string; [key: string]: unknown };
  steps: Record<string, Step>;
  tests?: { name: string; input: unknown; expect: Record<string, unknown> }[];
  [key: string]: unknown;
}

/** An edge of the graph: `from` → `to`, its label, and its document location. */
export interface Edge {
  from: string;
  to: string;
  label: string;
  /** `steps.<id>.branches[i]`, `steps.<id>.default_next`, `steps.<id>.rows[i]`, `steps.<id>.next_step`. */
  loc: string;
}

/** Every edge of `doc` whose target exists, in document order. */
export function edgesOf(doc: RulesetDoc): Edge[] {
  const edges: Edge[] = [];
  const has = (id: unknown): id is string => typeof id === 'string' && Object.prototype.hasOwnProperty.call(doc.steps, id);
  for (const [id, step] of Object.entries(doc.steps ?? {})) {
    if (step === null || typeof step !== 'object') continue;
    (Array.isArray(step.branches) ? step.branches : []).forEach((b, i) => {
      if (b && has(b.next_step)) edges.push({ from: id, to: b.next_step, label: String(b.condition ?? ''), loc: `steps.${id}.branches[${i}]` });
    });
    (Array.isArray(step.rows) ? step.rows : []).forEach((r, i) => {
      if (r && has(r.next_step)) edges.push({ from: id, to: r.next_step, label: `row ${i}: ${(r.when ?? []).join(' | ')}`, loc: `steps.${id}.rows[${i}]` });
    });
    if (has(step.default_next)) edges.push({ from: id, to: step.default_next, label: 'default', loc: `steps.${id}.default_next` });
    if (has(step.next_step))
      edges.push({ from: id, to: step.next_step, label: step.type === 'call' ? `→ $${String(step['result'] ?? '')}` : '', loc: `steps.${id}.next_step` });
  }
  return edges;
}

/** The step a document location is about (`steps.age.branches[0].condition` → `age`), or null. */
export function stepOfPath(path: string): string | null {
  const m = /^steps\.([^.[\]]+)/.exec(path);
  return m ? (m[1] ?? null) : null;
}

/** The editor's text formats. */
export type Format = 'json' | 'yaml';

/** Parses the editor's text; throws with the parser's message. */
export function parseDoc(text: string, format: Format): RulesetDoc {
  const value: unknown = format === 'json' ? JSON.parse(text) : parseYaml(text);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('the document must be an object');
  const doc = value as RulesetDoc;
  if (doc.steps === null || typeof doc.steps !== 'object') doc.steps = {};
  if (doc.config === null || typeof doc.config !== 'object') doc.config = { name: '', entry_step: '' };
  return doc;
}

/** Writes `doc` in `format`. */
export function writeDoc(doc: unknown, format: Format): string {
  return format === 'json' ? JSON.stringify(doc, null, 2) : stringifyYaml(doc, { lineWidth: 0 });
}

/** The step ids of a trace path text (`a -> b -> c`); a called ruleset's steps (`risk/x`) are left out. */
export function pathSteps(path: string): string[] {
  return path
    .split(' -> ')
    .map((s) => s.trim())
    .filter((s) => s !== '' && !s.includes('/'));
}

/** A new document to start from. */
export function templateDoc(name: string): RulesetDoc {
  return {
    config: { name, version: '1.0.0', description: 'New ruleset', entry_step: 'check' },
    steps: {
      check: { type: 'decision', name: 'Check', branches: [{ condition: 'input.amount > 100', next_step: 'review' }], default_next: 'approve' },
      review: { type: 'terminal', result: { code: 'REVIEW', message: 'needs a look' } },
      approve: { type: 'terminal', result: { code: 'APPROVE', message: 'approved' } },
    },
    tests: [{ name: 'small amount is approved', input: { input: { amount: 5 } }, expect: { code: 'APPROVE' } }],
  };
}
