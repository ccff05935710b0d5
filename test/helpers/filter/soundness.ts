/**
 * The soundness check of the filter ("Proven exact, against real databases"), shared by
 * the property tests: for generated cases and rows, the truth is the engine (`execute` on the
 * known input merged with the row, result code in target_results); each filter format is run
 * where it belongs (SQL in PostgreSQL and SQLite, Mongo in mingo, the predicate tree in
 * tree-eval.ts) and compared with the truth.
 *
 * The truth: a row on which execution fails (division by zero, arithmetic on null, a failing
 * output or action) yields no code, so it must not be selected (EXTENSIONS.md 6).
 *
 * Expectations:
 * - exact (the answer's `exact`; always true without variables and truncation): every backend
 *   selects exactly the truth rows;
 *   with NULL columns the tree and mingo still do, and SQL selects exactly what the documented
 *   NULL semantics predict (tree-eval `sql` mode), which is a subset of the truth;
 * - superset (`exact: false`: the variable fallback, or truncated): every backend selects at least the
 *   truth rows (SPEC rule 4, `truncated`), NULL rows in SQL aside.
 */
import { Query } from 'mingo';
import type { JsonValue } from '../../../src/expr/ast.js';
import { setDataSnapshot } from '../../../src/expr/data-ref.js';
import { setRequestNow } from '../../../src/expr/dates.js';
import { FilterError, generateFilter, parseFilterRequest, type FilterFormat, type FilterResponse, type JsonFilterNode } from '../../../src/filter/index.js';
import { compileRuleset, execute, type CompiledRuleset, type RulesetDoc } from '../../../src/ruleset/index.js';
import type { FilterDatabases } from './databases.js';
import { FIELDS, setPath, type FilterCase, type Row } from './gen-case.js';
import { evalTree } from './tree-eval.js';

/**
 * A case, with the rulesets its call steps call when it has some (gen-calls.ts, EXTENSIONS.md 3):
 * the truth executes with them as the `calls` resolver and the filter expands them.
 */
export type CheckedCase = FilterCase & { readonly callees?: readonly RulesetDoc[] };

/** The callee resolver of a case (by config.name), or undefined without callees. */
function calleesOf(c: CheckedCase): ((name: string) => CompiledRuleset | undefined) | undefined {
  if (c.callees === undefined) return undefined;
  const byName = new Map(c.callees.map((d) => [d.config.name, compileRuleset(d)]));
  return (name) => byName.get(name);
}

/** Counters of a run, for the test's diagnostic line. */
export interface Stats {
  cases: number;
  rows: number;
  filters: number;
  always: number;
  never: number;
  truncated: number;
  superset: number;
  selected: number;
  /** (case, row) pairs on which execution failed (they must not be selected when exact). */
  failed: number;
  /**
   * Cases answered INEXPRESSIBLE: arithmetic on an unknown field whose truth the planner could
   * not drop (SPEC.md: such a filter is a 500). Allowed, counted, and bounded by the test.
   */
  inexpressible: number;
  /** Cases whose conditions read variables (EXTENSIONS.md 3), and those of them answered exact. */
  variableCases: number;
  variableExact: number;
  /** Cases holding each newer part of the language (issue 19), answered (not inexpressible). */
  routingTables: number;
  firstTables: number;
  collectTables: number;
  data: number;
  dates: number;
  /** Cases with a table of any kind, and those of them answered exact. */
  tableCases: number;
  tableExact: number;
  /**
   * Cases answered INEXPRESSIBLE for a date function of the unknown date column (docs/filter.md
   * "Dates": like any function of an unknown field). Allowed, counted, bounded by the test.
   */
  dateInexpressible: number;
}

/** A new zeroed Stats. */
export function newStats(): Stats {
  return {
    cases: 0,
    rows: 0,
    filters: 0,
    always: 0,
    never: 0,
    truncated: 0,
    superset: 0,
    selected: 0,
    failed: 0,
    inexpressible: 0,
    variableCases: 0,
    variableExact: 0,
    routingTables: 0,
    firstTables: 0,
    collectTables: 0,
    data: 0,
    dates: 0,
    tableCases: 0,
    tableExact: 0,
    dateInexpressible: 0,
  };
}

const FORMATS: readonly FilterFormat[] = ['sql', 'json', 'mongo'];
/** The warm-up request's datasets and time: whatever a compiled ruleset caches must not leak into the next request. */
const OTHER_DATA = new Map<string, JsonValue>([['ref', { min: 7, max: -1, country: 'zz', list: [], nums: [], flag: true, start: '1999-01-01', nested: null }]]);
const OTHER_NOW = '2001-06-15T12:00:00Z';
const EXEC_OPTIONS = { clock: () => 0, timeoutMs: 0, maxSteps: 500 };

function columnOf(c: FilterCase, path: string): string {
  return c.mapping[path] ?? FIELDS.find((f) => f.path === path)!.column;
}

/** The engine's input for a row: the known input plus the row's values of the unknown fields. */
function mergedInput(c: FilterCase, row: Row): Record<string, JsonValue> {
  const input = structuredClone(c.knownInput);
  for (const f of c.unknown) setPath(input, f.path, row.values.get(f.path)!);
  return input;
}

/** The document mingo sees: every column; a null is sometimes a missing key instead. */
function mongoDoc(row: Row): Record<string, JsonValue> {
  const doc: Record<string, JsonValue> = { id: row.id };
  const t: Record<string, JsonValue> = {};
  for (const f of FIELDS) {
    const v = row.values.get(f.path)!;
    if (v === null && (row.id + f.column.length) % 2 === 0) continue; // missing instead of null
    doc[f.column] = v;
    t[f.column] = v;
  }
  doc['t'] = t;
  return doc;
}

function set(ids: Iterable<number>): string {
  return `[${[...ids].sort((a, b) => a - b).join(', ')}]`;
}

function sameSet(a: ReadonlySet<number>, b: ReadonlySet<number>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

function isSubset(a: ReadonlySet<number>, b: ReadonlySet<number>): boolean {
  return [...a].every((x) => b.has(x));
}

function c0(p: Pending): CheckedCase {
  return p.c;
}

interface Pending {
  c: CheckedCase;
  responses: Record<FilterFormat, FilterResponse>;
  truth: Set<number>;
  exact: boolean;
  tree: Set<number>;
  sqlPredicted: Set<number>;
  mongo: Set<number>;
  sqlite: Set<number> | Error | null;
}

/**
 * Checks a batch of cases against the same rows (loaded once into both databases). Returns the
 * failure reports (empty when everything holds).
 */
export async function checkBatch(dbs: FilterDatabases, cases: readonly CheckedCase[], rows: readonly Row[], stats: Stats): Promise<string[]> {
  const failures: string[] = [];
  await dbs.load(rows.map((r) => ({ id: r.id, values: new Map(FIELDS.map((f) => [f.column, r.values.get(f.path)!])) })));
  const docs = rows.map(mongoDoc);
  const pending: Pending[] = [];
  stats.rows += rows.length;

  for (const c of cases) {
    stats.cases++;
    const describe = (extra: Record<string, unknown>): string =>
      JSON.stringify(
        {
          seed: c.seed,
          ruleset: c.doc,
          ...(c.callees ? { callees: c.callees } : {}),
          known_input: c.knownInput,
          target_results: c.targets,
          field_mapping: c.mapping,
          max_paths: c.maxPaths,
          now: c.now,
          data: c.data && Object.fromEntries(c.data),
          ...extra,
        },
        null,
        1,
      );
    const compiled = compileRuleset(c.doc);
    const calls = calleesOf(c);
    const execOptions = calls === undefined ? EXEC_OPTIONS : { ...EXEC_OPTIONS, calls };
    const truth = new Set<number>();
    const base = { target_results: c.targets, field_mapping: c.mapping, max_paths: c.maxPaths, ...(c.now !== null ? { now: c.now } : {}) };
    // The engine reads the case's datasets (`@ref`) and the request's `now` (canonical), as the service sets them.
    setDataSnapshot(c.data);
    setRequestNow(parseFilterRequest({ ...base, known_input: {} }).now ?? null);
    for (const row of rows) {
      try {
        if (c.targets.includes(execute(compiled, mergedInput(c, row), execOptions).code)) truth.add(row.id);
      } catch {
        // An execution error yields no code: the row does not match (EXTENSIONS.md 6).
        stats.failed++;
      }
    }
    setRequestNow(null);
    let responses: Record<FilterFormat, FilterResponse>;
    try {
      // A request with other known input, datasets and time first: whatever is cached per compiled ruleset must not leak.
      setDataSnapshot(OTHER_DATA);
      generateFilter(compiled, parseFilterRequest({ known_input: {}, target_results: c.targets, format: 'json', now: OTHER_NOW }), calls);
    } catch {
      // Unsupported without the known input (e.g. arithmetic on a field that is known below): fine.
    }
    try {
      setDataSnapshot(c.data);
      const generated = FORMATS.map((format) => generateFilter(compiled, parseFilterRequest({ ...base, known_input: c.knownInput, format }), calls));
      responses = { sql: generated[0]!, json: generated[1]!, mongo: generated[2]! };
    } catch (err) {
      // SPEC.md: arithmetic on an unknown field cannot be written as a filter (a 500). The
      // generator makes such conditions (they can fail on a row); where the planner cannot drop
      // their truth, INEXPRESSIBLE is the specified answer. Any other failure is a bug.
      if (err instanceof FilterError && err.code === 'INEXPRESSIBLE' && /arithmetic on unknown fields/.test(err.message)) {
        stats.inexpressible++;
        continue;
      }
      // docs/filter.md "Dates": a date function of an unknown field cannot be expressed either.
      if (
        err instanceof FilterError &&
        err.code === 'INEXPRESSIBLE' &&
        c.features.dateOfColumn &&
        /function year\(since\) on unknown fields/.test(err.message)
      ) {
        stats.dateInexpressible++;
        continue;
      }
      failures.push(`filter generation failed: ${String(err)}\n${describe({})}`);
      continue;
    }
    const { sql, json, mongo } = responses;
    const flags = (r: FilterResponse): string => JSON.stringify([r.always_matches, r.never_matches, r.truncated, r.unknown_fields, r.exact]);
    if (flags(sql) !== flags(json) || flags(sql) !== flags(mongo)) {
      failures.push(`formats disagree on flags: ${flags(sql)} ${flags(json)} ${flags(mongo)}\n${describe({})}`);
      continue;
    }
    // The answer says whether it is exact (a documented fallback makes it a superset); without
    // variables and truncation every generated case must be exact, failing expressions included.
    const exact = sql.exact ?? (!c.readsVariables && !sql.truncated);
    // (A date function of the unknown date column is the other documented superset: docs/decisions.md.)
    if (!c.usesVariables && !c.features.dateOfColumn && !sql.truncated && sql.exact === false) {
      failures.push(`exact: false without variables or truncation\n${describe({ sql: sql.filter })}`);
      continue;
    }
    if (!exact) stats.superset++;
    if (c.readsVariables) {
      stats.variableCases++;
      if (exact) stats.variableExact++;
    }
    const f = c.features;
    if (f.routingTable) stats.routingTables++;
    if (f.firstTable) stats.firstTables++;
    if (f.collectTable) stats.collectTables++;
    if (f.data) stats.data++;
    if (f.dates) stats.dates++;
    if (f.routingTable || f.firstTable || f.collectTable) {
      stats.tableCases++;
      if (exact) stats.tableExact++;
    }
    if (sql.truncated) stats.truncated++;
    if (sql.always_matches) stats.always++;
    if (sql.never_matches) stats.never++;
    if (!sql.always_matches && !sql.never_matches) stats.filters++;
    stats.selected += truth.size;

    const reader =
      (row: Row) =>
      (column: string): JsonValue => {
        const field = c.unknown.find((f) => columnOf(c, f.path) === column);
        if (field === undefined) throw new Error(`filter reads column ${column}, which is not an unknown field`);
        return row.values.get(field.path)!;
      };
    const tree = new Set<number>();
    const sqlPredicted = new Set<number>();
    const mongoRows = new Set<number>();
    const jsonFilter = json.filter as JsonFilterNode | null;
    const query = mongo.filter === null ? null : new Query(mongo.filter as Record<string, unknown>);
    rows.forEach((row, i) => {
      if (jsonFilter !== null && evalTree(jsonFilter, reader(row), 'engine')) tree.add(row.id);
      if (jsonFilter !== null && evalTree(jsonFilter, reader(row), 'sql')) sqlPredicted.add(row.id);
      if (query !== null && query.test(docs[i]!)) mongoRows.add(row.id);
    });
    const sqlite = typeof sql.filter === 'string' ? dbs.selectSqlite(sql.filter) : null;
    pending.push({ c, responses, truth, exact, tree, sqlPredicted, mongo: mongoRows, sqlite });
  }

  setDataSnapshot(null);
  const sqlTexts = pending.map((p) => p.responses.sql.filter).filter((f): f is string => typeof f === 'string');
  const [pgResults, mariaResults] = await Promise.all([dbs.selectPg(sqlTexts), dbs.selectMaria(sqlTexts)]);
  let k = 0;
  for (const p of pending) {
    const sqlText = p.responses.sql.filter;
    const pgRows = typeof sqlText === 'string' ? pgResults[k]! : new Set<number>();
    const mariaRows = typeof sqlText === 'string' ? mariaResults[k++]! : new Set<number>();
    const sqliteRows = p.sqlite ?? new Set<number>();
    const problems: string[] = [];
    const expectRows = (name: string, got: Set<number> | Error, want: Set<number>, how: 'equal' | 'superset' | 'subset'): void => {
      if (got instanceof Error) {
        problems.push(`${name}: query failed: ${got.message}`);
        return;
      }
      const ok = how === 'equal' ? sameSet(got, want) : how === 'superset' ? isSubset(want, got) : isSubset(got, want);
      if (!ok) problems.push(`${name}: selected ${set(got)}, expected ${how === 'equal' ? '' : `${how} of `}${set(want)}`);
    };
    const how = p.exact ? 'equal' : 'superset';
    const treeRows = p.responses.json.always_matches ? new Set(rows.map((r) => r.id)) : p.tree;
    const predicted = p.responses.json.always_matches ? treeRows : p.sqlPredicted;
    expectRows('predicate tree', treeRows, p.truth, how);
    expectRows('mingo', p.responses.mongo.always_matches ? treeRows : p.mongo, p.truth, how);
    expectRows('PostgreSQL', pgRows, predicted, 'equal');
    expectRows('SQLite', sqliteRows, predicted, 'equal');
    expectRows('MariaDB', mariaRows, predicted, 'equal');
    // With NULL columns SQL may miss rows (docs/filter.md), never add them; without, it is the tree.
    const hasNulls = rows.some((r) => c0(p).unknown.some((f) => r.values.get(f.path) === null));
    if (p.exact) expectRows('SQL (NULL semantics)', predicted, p.truth, hasNulls ? 'subset' : 'equal');
    else if (!hasNulls) expectRows('SQL', predicted, p.truth, 'superset');
    if (problems.length > 0) {
      const c = p.c;
      const mismatched = rows.filter((r) => treeRows.has(r.id) !== p.truth.has(r.id) || (pgRows instanceof Set && pgRows.has(r.id) !== predicted.has(r.id)));
      failures.push(
        `${problems.join('\n')}\n${JSON.stringify(
          {
            seed: c.seed,
            ruleset: c.doc,
            ...(c.callees ? { callees: c.callees } : {}),
            known_input: c.knownInput,
            target_results: c.targets,
            field_mapping: c.mapping,
            max_paths: c.maxPaths,
            now: c.now,
            data: c.data && Object.fromEntries(c.data),
            sql: p.responses.sql.filter,
            json: p.responses.json.filter,
            mongo: p.responses.mongo.filter,
            rows: mismatched.slice(0, 3).map((r) => ({ id: r.id, ...Object.fromEntries(c.unknown.map((f) => [f.path, r.values.get(f.path)!])) })),
          },
          null,
          1,
        )}`,
      );
    }
  }
  return failures;
}
