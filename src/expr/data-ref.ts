/**
 * Reference data in expressions (EXTENSIONS.md 3 "Reference data", docs/expressions.md
 * "Reference data"): `@name.path` reads the dataset `name` of the tenant the execution runs for.
 *
 * The datasets come in as a snapshot (`DataSnapshot`) that the service hands the engine before an
 * execution of a ruleset that reads `@` (`setDataSnapshot`), like the request's `"now"` of
 * dates.ts: the compiled readers read `dataState.current`, so rulesets that do not use `@` pay
 * nothing. A dataset the snapshot does not hold reads as undefined: null in lenient mode, a
 * MISSING_FIELD error naming it in strict mode (compile-path.ts). Pure otherwise.
 */
import type { JsonValue, Node } from './ast.js';

/** The datasets of one tenant by name (values are frozen JSON; a Map, so any name is safe). */
export type DataSnapshot = ReadonlyMap<string, JsonValue>;

/** The snapshot the current execution reads (null: no datasets). */
export const dataState: { current: DataSnapshot | null } = { current: null };

/** Sets the datasets that `@name` reads until the next call (null: none). */
export function setDataSnapshot(snapshot: DataSnapshot | null): void {
  dataState.current = snapshot;
}

/** The dataset `name` of the current snapshot, or undefined. */
export function readDataset(name: string): JsonValue | undefined {
  return dataState.current?.get(name);
}

/** True when the syntax tree reads a dataset (`@name`) anywhere. */
export function readsData(node: Node): boolean {
  switch (node.kind) {
    case 'literal':
      return false;
    case 'path':
      return node.scope === 'data';
    case 'array':
      return node.items.some(readsData);
    case 'unary':
      return readsData(node.operand);
    case 'binary':
      return readsData(node.left) || readsData(node.right);
    case 'if':
      return readsData(node.cond) || readsData(node.then) || readsData(node.else);
    case 'call':
      return node.args.some(readsData);
  }
}

/** The names of the datasets the syntax tree reads, added to `out`. */
export function datasetNames(node: Node, out: Set<string>): Set<string> {
  switch (node.kind) {
    case 'literal':
      break;
    case 'path':
      if (node.scope === 'data') out.add(String(node.segments[0]));
      break;
    case 'array':
      for (const n of node.items) datasetNames(n, out);
      break;
    case 'unary':
      datasetNames(node.operand, out);
      break;
    case 'binary':
      datasetNames(node.left, out);
      datasetNames(node.right, out);
      break;
    case 'if':
      datasetNames(node.cond, out);
      datasetNames(node.then, out);
      datasetNames(node.else, out);
      break;
    case 'call':
      for (const n of node.args) datasetNames(n, out);
      break;
  }
  return out;
}
