/**
 * The filter pipeline (SPEC.md "POST /rulesets/:name/filter", architecture guide point 5):
 * compiled ruleset (its filter state, prepare.ts) → partial evaluation and path planning → path simplification → one predicate
 * tree → column check → capability check → emitter.
 */
import type { CompiledRuleset } from '../ruleset/index.js';
import { setRequestNow } from '../expr/dates.js';
import { atomProblem } from './capability.js';
import { inexpressible, type FilterError } from './errors.js';
import { resolveColumns } from './columns.js';
import { toJsonTree } from './json.js';
import { toMongo } from './mongo.js';
import { planPaths, type CalleeResolver } from './planner.js';
import { ALWAYS, NEVER, SCANNED, SCAN_INFO, fieldOf, fieldsOf, isLiteral, junctionOf, keyOf, type Pred } from './predicate.js';
import { nulError } from './nul.js';
import { columnMapFor, prepare } from './prepare.js';
import { simplifyPaths } from './merge-paths.js';
import { finishPath, type Path } from './simplify.js';
import { toSqlAnswer } from './sql.js';
import type { FilterFormat, FilterRequest, FilterResponse } from './types.js';

/** The filter text / tree / document for `always_matches`. */
function alwaysFilter(format: FilterFormat): FilterResponse['filter'] {
  return format === 'sql' ? 'TRUE' : format === 'json' ? { type: 'always' } : {};
}

function constant(format: FilterFormat, matches: boolean, truncated: boolean, exact: boolean): FilterResponse {
  return {
    format,
    filter: matches ? alwaysFilter(format) : null,
    always_matches: matches,
    never_matches: !matches,
    truncated,
    unknown_fields: [],
    exact,
  };
}

/**
 * The predicate tree of the rows for which `compiled` yields one of the target codes, given the known
 * input; `always`/`never` when that does not depend on unknown fields. `truncated` when a limit
 * stopped the walk (the tree is then `always`). `exact` is false when the tree is a superset
 * (truncation, a variable condition, a failure no condition writes). `calls` resolves the
 * callees of call steps (the current versions of the caller's tenant); without it, or for a
 * callee it does not know, a path through the call ends (the engine fails there).
 */
export function filterTree(compiled: CompiledRuleset, request: FilterRequest, calls?: CalleeResolver): { tree: Pred; truncated: boolean; exact: boolean } {
  const prepared = prepare(compiled);
  const known = { root: request.known_input, fieldMissing: compiled.fieldMissing, memo: prepared.memo };
  const outcome = planPaths(prepared, known, new Set(request.target_results), request.max_paths, calls);
  // NOTE: SPEC: when max_paths (or the depth limit) cuts the walk, always_matches is also true.
  if (outcome.truncated) return { tree: ALWAYS, truncated: true, exact: false };
  const finished = outcome.paths.map(finishPath).filter((p): p is Path => p !== null);
  return { tree: disjunction(simplifyPaths(finished)), truncated: false, exact: outcome.exact };
}

/**
 * The OR of the paths, each the AND of its conditions. NOTE (speed): built directly rather than
 * with `or`/`and`, which would key every path again; the paths are already distinct.
 */
function disjunction(paths: readonly Path[]): Pred {
  if (paths.length === 0) return NEVER;
  const out: Pred[] = [];
  const seen = new Set<string>();
  for (const p of paths) {
    if (p.length === 0) return ALWAYS;
    if (p.length > 1) {
      out.push(junctionOf('and', p));
      continue;
    }
    for (const c of p[0]!.type === 'or' ? p[0]!.conditions : p) {
      const k = keyOf(c);
      if (!seen.has(k)) {
        seen.add(k);
        out.push(c);
      }
    }
  }
  return out.length === 1 ? out[0]! : junctionOf('or', out);
}

/** The token of the last `scan` that saw a condition (a symbol key like predicate.ts's caches). */
/** What `scan` needs of a condition, cached on it (its content never changes). */
interface ScanInfo {
  /** The fields it reads. */
  readonly fields: readonly string[];
  /** What each format cannot express in it (capability.ts `atomProblem`), once asked: undefined before. */
  sql: string | null | undefined;
  json: string | null | undefined;
  mongo: string | null | undefined;
}
type Scanned = Pred & { [SCANNED]?: object; [SCAN_INFO]?: ScanInfo };

function scanInfo(p: Pred): ScanInfo {
  let info = (p as Scanned)[SCAN_INFO];
  if (info === undefined) {
    info = { fields: isLiteral(p) ? [fieldOf(p)] : [...fieldsOf(p)], sql: undefined, json: undefined, mongo: undefined };
    if (Object.isExtensible(p)) (p as Scanned)[SCAN_INFO] = info;
  }
  return info;
}

/**
 * The fields the tree reads, and the first condition (in tree order) that `format` cannot
 * express, as `checkCapability` (capability.ts) would throw it. NOTE (speed): the tree is an OR
 * of paths, each an AND of conditions that the paths share (the same objects); each distinct
 * condition is looked at once per walk, and its fields and capability are cached on it, so a
 * shared disjunction is not walked again on every request.
 */
function scan(tree: Pred, format: FilterFormat): { fields: Set<string>; failure: FilterError | null } {
  const fields = new Set<string>();
  // NOTE (speed): a condition seen by this walk carries its token (cheaper than a set of them).
  const token = {};
  let failure: FilterError | null = null;
  const visit = (p: Pred): void => {
    if ((p as Scanned)[SCANNED] === token) return;
    if (Object.isExtensible(p)) (p as Scanned)[SCANNED] = token;
    const info = scanInfo(p);
    for (const f of info.fields) fields.add(f);
    if (failure === null) {
      let problem = info[format];
      if (problem === undefined) problem = info[format] = atomProblem(p, format);
      if (problem !== null) failure = inexpressible(problem);
    }
  };
  const path = (p: Pred): void => {
    if (p.type === 'and') for (const c of p.conditions) visit(c);
    else visit(p);
  };
  if (tree.type === 'or') for (const c of tree.conditions) path(c);
  else path(tree);
  return { fields, failure };
}

/**
 * Generates the filter of `request` for `compiled`. Throws `FilterError`: `BAD_REQUEST` for an
 * unsafe column name or a known value with a NUL that would reach SQL text, `INEXPRESSIBLE`
 * (`filter compilation failed: ...`) for a condition the format cannot express. `calls`: as
 * for `filterTree` (call steps, EXTENSIONS.md 3).
 */
export function generateFilter(compiled: CompiledRuleset, request: FilterRequest, calls?: CalleeResolver): FilterResponse {
  const format = request.format;
  // Dates (EXTENSIONS.md 3): now() folds to the request's "now", else the clock read once.
  setRequestNow(request.now ?? null);
  let planned: ReturnType<typeof filterTree>;
  try {
    planned = filterTree(compiled, request, calls);
  } finally {
    setRequestNow(null);
  }
  const { tree, truncated, exact } = planned;
  if (tree.type === 'always') return constant(format, true, truncated, exact);
  // NOTE: an empty superset is empty: never_matches is always exact.
  if (tree.type === 'never') return constant(format, false, false, true);
  const { fields: seen, failure } = scan(tree, format);
  const fields = [...seen].sort();
  const prepared = prepare(compiled);
  const resolve = (): ReadonlyMap<string, string> => resolveColumns(fields, request.field_mapping, format, prepared.columns.get(format));
  // NOTE (speed): without a field mapping, one column map object per set of fields (sql.ts keeps its texts per map).
  const columns = hasOwnKeys(request.field_mapping) ? resolve() : columnMapFor(prepared, format, fields, resolve);
  if (failure !== null) throw failure;
  let filter: FilterResponse['filter'];
  if (format === 'sql') {
    const answer = toSqlAnswer(tree, columns);
    if (answer.nul) throw nulError(request.known_input);
    filter = answer.text;
  } else {
    filter = format === 'json' ? toJsonTree(tree, columns) : toMongo(tree, columns);
  }
  return { format, filter, always_matches: false, never_matches: false, truncated: false, unknown_fields: fields, exact };
}

function hasOwnKeys(o: object): boolean {
  for (const k in o) if (Object.hasOwn(o, k)) return true;
  return false;
}
