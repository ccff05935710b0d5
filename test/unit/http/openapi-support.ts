/**
 * Helpers of the OpenAPI tests: the document's operations walked as data, and an ajv 2020-12
 * instance holding the document so that any schema of it (with its `$ref`s) can be compiled.
 */
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';

const require = createRequire(import.meta.url);
// NOTE: OpenAPI 3.1 schemas are JSON Schema 2020-12.
const Ajv2020 = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js').default;

/** One operation of a document. */
export interface DocOperation {
  readonly path: string;
  readonly method: string;
  readonly op: Record<string, any>;
}

/** Every operation of `doc`. */
export function operations(doc: any): DocOperation[] {
  const out: DocOperation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries(item)) out.push({ path, method: method.toUpperCase(), op });
  }
  return out;
}

/** JSON pointer escaping of one token. */
export function pointerToken(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Resolves a local `$ref` (`#/a/b`) in `doc`; undefined when it does not resolve. */
export function resolveRef(doc: any, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: any = doc;
  for (const raw of ref.slice(2).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(token in node)) return undefined;
    node = node[token];
  }
  return node;
}

/** Validators of the schemas of one document. */
export class DocSchemas {
  private readonly ajv;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(doc: unknown) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    this.ajv.addFormat('date-time', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
    this.ajv.addSchema({ ...(doc as object), $id: 'openapi.json' });
  }

  /** The validator of the schema at `pointer` (a JSON pointer into the document, `#/...`). */
  validator(pointer: string): ValidateFunction {
    let v = this.cache.get(pointer);
    if (v === undefined) {
      v = this.ajv.compile({ $ref: `openapi.json${pointer}` });
      this.cache.set(pointer, v);
    }
    return v;
  }

  /** Null when `value` matches the schema at `pointer`, else the errors as text. */
  check(pointer: string, value: unknown): string | null {
    const v = this.validator(pointer);
    return v(value) ? null : this.ajv.errorsText(v.errors, { separator: '; ' });
  }
}

/** The pointer of an operation's request body schema. */
export function requestSchemaPointer(path: string, method: string): string {
  return `#/paths/${pointerToken(path)}/${method.toLowerCase()}/requestBody/content/application~1json/schema`;
}

/** The pointer of an operation's answer schema for `status`. */
export function responseSchemaPointer(path: string, method: string, status: number, mediaType = 'application/json'): string {
  return `#/paths/${pointerToken(path)}/${method.toLowerCase()}/responses/${status}/content/${pointerToken(mediaType)}/schema`;
}

/** The document's operation (path template, method) a concrete request path matches; null when none. */
export function matchOperation(doc: any, method: string, url: string): DocOperation | null {
  const path = url.split('?')[0] ?? url;
  for (const o of operations(doc)) {
    if (o.method !== method) continue;
    const re = new RegExp(`^${o.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`);
    if (re.test(path)) return o;
  }
  return null;
}
