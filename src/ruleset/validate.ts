/**
 * Structural validation of a ruleset document (DECISIONS.md 1 "Structural validity").
 * Every problem is reported at once, each with its location, e.g.
 * `steps.check.branches[1].condition: unexpected ')' at 14`.
 *
 * `analyzeRuleset` is the shared worker: besides the problems it returns a JSON copy of the
 * document (without `_signature`) and every expression parsed and compiled, so `compileRuleset`
 * does not parse twice.
 */
import type { JsonValue } from '../expr/ast.js';
import { copyJson, isPlainObject, joinKey, setOwn } from './json.js';
import { parseExpression, type ParsedExpression } from './expressions.js';
import { checkInputSchema, type InputSchema } from './input-schema.js';
import { isValidRulesetName, type FieldMissing } from './model.js';
import { reservedNameReason } from './reserved-names.js';
import type { Problem } from './result.js';
import { checkStrictKeys } from './strict-keys.js';
import { cellExpression, rowCondition, variablesRead } from './table.js';
import { checkTestsShape } from './test-shape.js';

/** Location used for a problem with the document as a whole. */
export const ROOT_PATH = 'ruleset';

/** Valid `set_variable` name: what the expression language reads as `$name`. */
export const VARIABLE_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

const LOG_LEVELS: ReadonlySet<string> = new Set(['debug', 'info', 'warn', 'error']);

type JsonObject = Record<string, JsonValue>;

/** What `analyzeRuleset` found. */
export interface Analysis {
  /** Every problem, in document order. Empty when the document is valid. */
  readonly problems: Problem[];
  /** JSON copy of the document without `_signature`; null when the document is not an object. */
  readonly doc: JsonObject | null;
  /** Every parsed expression by its location (`steps.s.branches[0].condition`, ...). */
  readonly exprs: ReadonlyMap<string, ParsedExpression>;
  /** Each decision table row's condition, by `steps.t.rows[i].when` (table.ts). */
  readonly rowExprs: ReadonlyMap<string, ParsedExpression>;
  /** `config.field_missing`, default `lenient`. */
  readonly fieldMissing: FieldMissing;
  /** True when some action step has a `set_variable` action. */
  readonly hasVariables: boolean;
  /** The compiled `config.input_schema` (EXTENSIONS.md 2), null when there is none or it is invalid. */
  readonly inputSchema: InputSchema | null;
}

/** Returns every structural problem of a ruleset document (empty when it is valid). */
export function validateRuleset(doc: unknown): Problem[] {
  return analyzeRuleset(doc).problems;
}

/** Validates a document and parses its expressions (see the module comment). */
export function analyzeRuleset(doc: unknown): Analysis {
  const problems: Problem[] = [];
  const add = (path: string, message: string): void => {
    problems.push({ path, message });
  };
  if (!isPlainObject(doc)) {
    add(ROOT_PATH, 'must be a JSON object with config and steps');
    return { problems, doc: null, exprs: new Map(), rowExprs: new Map(), fieldMissing: 'lenient', hasVariables: false, inputSchema: null };
  }
  // The copy proves the whole document is JSON and detaches it from the caller's object.
  const copy: JsonObject = {};
  for (const key of Object.keys(doc)) {
    if (key === '_signature' || doc[key] === undefined) continue;
    setOwn(copy, key, copyJson(doc[key], joinKey('', key), add, 1));
  }
  const checker = new Checker(add);
  checker.run(copy);
  // Input schema (EXTENSIONS.md 2): the schema compiled once, every path read checked against it.
  const inputSchema = checkInputSchema(copy['config'], checker.exprs, add);
  // EXTENSIONS.md 2 "Strict documents" and "Tests": unknown keys (with did-you-mean), the types
  // of the authoring config keys, the shape of `tests`.
  checkStrictKeys(copy, add);
  checkTestsShape(copy['tests'], add);
  return {
    problems,
    doc: copy,
    exprs: checker.exprs,
    rowExprs: checker.rowExprs,
    fieldMissing: checker.fieldMissing,
    hasVariables: checker.hasVariables,
    inputSchema,
  };
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One validation pass over a JSON copy of a document. */
class Checker {
  readonly exprs = new Map<string, ParsedExpression>();
  /** Each table row's condition by `steps.t.rows[i].when` (its cells are in `exprs`). */
  readonly rowExprs = new Map<string, ParsedExpression>();
  problemCount = 0;
  fieldMissing: FieldMissing = 'lenient';
  hasVariables = false;
  /** `config.name` when it is a string (a call step must not name it). */
  private rulesetName: string | null = null;
  /** Step ids, or null when `steps` is not an object (targets cannot be judged then). */
  private stepIds: ReadonlySet<string> | null = null;

  private readonly add: (path: string, message: string) => void;

  constructor(add: (path: string, message: string) => void) {
    this.add = (path, message) => {
      this.problemCount++;
      add(path, message);
    };
  }

  run(doc: JsonObject): void {
    const steps = doc['steps'];
    if (isObject(steps)) this.stepIds = new Set(Object.keys(steps));
    this.checkConfig(doc['config']);
    if (steps === undefined) this.add('steps', 'required');
    else if (!isObject(steps)) this.add('steps', 'must be an object mapping step ids to steps');
    else for (const id of Object.keys(steps)) this.checkStep(id, steps[id] as JsonValue);
  }

  private checkConfig(config: JsonValue | undefined): void {
    if (config === undefined) {
      this.add('config', 'required');
      return;
    }
    if (!isObject(config)) {
      this.add('config', 'must be an object');
      return;
    }
    const { name, version, description, entry_step: entry, field_missing: fm, timeout_ms: timeout } = config;
    if (typeof name === 'string') this.rulesetName = name;
    if (name === undefined) this.add('config.name', 'required');
    else if (!isValidRulesetName(name)) {
      this.add('config.name', "must be 1-128 characters of A-Z a-z 0-9 _ - . and not start with '.'");
    } else {
      const reserved = reservedNameReason(name);
      if (reserved !== undefined) this.add('config.name', reserved);
    }
    if (version !== undefined && typeof version !== 'string') this.add('config.version', 'must be a string');
    // NOTE: a null description means "none" (list entries show null), so it is accepted.
    if (description !== undefined && description !== null && typeof description !== 'string') {
      this.add('config.description', 'must be a string');
    }
    this.checkRef(entry, 'config.entry_step', true);
    if (fm === 'lenient' || fm === 'strict') this.fieldMissing = fm;
    else if (fm !== undefined) this.add('config.field_missing', 'must be lenient or strict');
    if (timeout !== undefined && !(typeof timeout === 'number' && Number.isSafeInteger(timeout) && timeout >= 0)) {
      this.add('config.timeout_ms', 'must be a non-negative integer');
    }
  }

  private checkStep(id: string, step: JsonValue): void {
    const at = joinKey('steps', id);
    if (id === '') this.add(at, 'step id must not be empty');
    if (!isObject(step)) {
      this.add(at, 'must be an object');
      return;
    }
    if (step['id'] !== undefined && step['id'] !== id) this.add(`${at}.id`, `must equal its key '${id}'`);
    if (step['name'] !== undefined && typeof step['name'] !== 'string') this.add(`${at}.name`, 'must be a string');
    const type = step['type'];
    switch (type) {
      case 'decision':
        this.checkDecision(at, step);
        break;
      case 'action':
        this.checkAction(at, step);
        break;
      case 'terminal':
        this.checkTerminal(at, step);
        break;
      case 'table':
        this.checkTable(at, step); // decision tables (EXTENSIONS.md 3, table.ts)
        break;
      case 'call':
        this.checkCall(at, step); // calls between rulesets (EXTENSIONS.md 3)
        break;
      default:
        this.add(`${at}.type`, 'must be decision, action, terminal, table or call');
    }
  }

  private checkDecision(at: string, step: JsonObject): void {
    const branches = step['branches'];
    if (branches === undefined) this.add(`${at}.branches`, 'required (an array, may be empty)');
    else if (!Array.isArray(branches)) this.add(`${at}.branches`, 'must be an array');
    else {
      branches.forEach((branch, i) => {
        const bat = `${at}.branches[${i}]`;
        if (!isObject(branch)) {
          this.add(bat, 'must be an object with condition and next_step');
          return;
        }
        this.checkExpr(branch['condition'], `${bat}.condition`);
        this.checkRef(branch['next_step'], `${bat}.next_step`, true);
      });
    }
    this.checkRef(step['default_next'], `${at}.default_next`, false);
  }

  private checkAction(at: string, step: JsonObject): void {
    const actions = step['actions'];
    if (actions === undefined) this.add(`${at}.actions`, 'required (an array, may be empty)');
    else if (!Array.isArray(actions)) this.add(`${at}.actions`, 'must be an array');
    else actions.forEach((action, i) => this.checkOneAction(`${at}.actions[${i}]`, action));
    this.checkRef(step['next_step'], `${at}.next_step`, true);
  }

  private checkOneAction(at: string, action: JsonValue): void {
    if (!isObject(action)) {
      this.add(at, 'must be an object');
      return;
    }
    const kind = action['action'];
    if (kind === 'set_variable') {
      this.hasVariables = true;
      const name = action['name'];
      if (name === undefined) this.add(`${at}.name`, 'required');
      else if (typeof name !== 'string' || !VARIABLE_NAME_RE.test(name)) {
        this.add(`${at}.name`, 'must be a variable name: letters, digits and _, not starting with a digit (read as $name)');
      }
      this.checkExpr(action['value'], `${at}.value`);
    } else if (kind === 'log') {
      const message = action['message'];
      if (message === undefined) this.add(`${at}.message`, 'required');
      else if (typeof message !== 'string') this.add(`${at}.message`, 'must be a string');
      const level = action['level'];
      if (level !== undefined && !(typeof level === 'string' && LOG_LEVELS.has(level))) {
        this.add(`${at}.level`, 'must be debug, info, warn or error');
      }
    } else {
      this.add(`${at}.action`, kind === undefined ? 'required (set_variable or log)' : 'must be set_variable or log');
    }
  }

  private checkTerminal(at: string, step: JsonObject): void {
    const result = step['result'];
    if (result === undefined) this.add(`${at}.result`, 'required (an object with code)');
    else if (!isObject(result)) this.add(`${at}.result`, 'must be an object');
    else {
      const { code, message } = result;
      if (code === undefined) this.add(`${at}.result.code`, 'required');
      else if (typeof code !== 'string' || code === '') this.add(`${at}.result.code`, 'must be a non-empty string');
      if (message !== undefined && typeof message !== 'string') this.add(`${at}.result.message`, 'must be a string');
      if (Object.hasOwn(result, '__proto__')) this.add(joinKey(`${at}.result`, '__proto__'), "the key '__proto__' is not allowed");
    }
    const output = step['output'];
    if (output === undefined) return;
    if (!isObject(output)) {
      this.add(`${at}.output`, 'must be an object mapping output keys to expressions');
      return;
    }
    for (const key of Object.keys(output)) {
      const kat = joinKey(`${at}.output`, key);
      if (key === '__proto__') this.add(kat, "the key '__proto__' is not allowed");
      else this.checkExpr(output[key], kat);
    }
  }

  /**
   * A decision table (EXTENSIONS.md 3, table.ts): its inputs are expressions; each cell, made
   * into its expression, is checked at `rows[i].when[j]`. Routing rows carry `next_step`; with
   * `hit_policy` the rows carry `set` values instead and the step carries `next_step`.
   */
  private checkTable(at: string, step: JsonObject): void {
    const inputs = step['inputs'];
    let columns: string[] | null = null;
    if (inputs === undefined) this.add(`${at}.inputs`, 'required (an array of expressions)');
    else if (!Array.isArray(inputs) || inputs.length === 0) this.add(`${at}.inputs`, 'must be a non-empty array of expressions');
    else {
      inputs.forEach((e, k) => this.checkExpr(e, `${at}.inputs[${k}]`));
      if (inputs.every((e) => typeof e === 'string')) columns = inputs as string[];
    }
    const policy = step['hit_policy'];
    const sets = policy !== undefined;
    if (sets && policy !== 'first' && policy !== 'collect') this.add(`${at}.hit_policy`, 'must be first or collect');
    if (sets) {
      this.hasVariables = true;
      this.checkRef(step['next_step'], `${at}.next_step`, true);
      if (step['default_next'] !== undefined) this.add(`${at}.default_next`, 'not allowed with hit_policy (the step goes to its next_step)');
    } else {
      if (step['next_step'] !== undefined) this.add(`${at}.next_step`, 'only with hit_policy (routing rows carry their own next_step)');
      this.checkRef(step['default_next'], `${at}.default_next`, false);
    }
    const rows = step['rows'];
    if (rows === undefined) {
      this.add(`${at}.rows`, 'required (an array, may be empty)');
      return;
    }
    if (!Array.isArray(rows)) {
      this.add(`${at}.rows`, 'must be an array');
      return;
    }
    const setNames = new Set<string>();
    for (const row of rows) if (isObject(row) && isObject(row['set'])) for (const k of Object.keys(row['set'])) setNames.add(k);
    rows.forEach((row, i) => {
      const rat = `${at}.rows[${i}]`;
      if (!isObject(row)) {
        this.add(rat, sets ? 'must be an object with when and set' : 'must be an object with when and next_step');
        return;
      }
      const when = row['when'];
      if (when === undefined) this.add(`${rat}.when`, 'required (one cell per input)');
      else if (!Array.isArray(when)) this.add(`${rat}.when`, 'must be an array of cells (one per input)');
      else {
        if (columns !== null && when.length !== columns.length)
          this.add(`${rat}.when`, `must have ${columns.length} cells (one per input), has ${when.length}`);
        const before = this.problemCount;
        when.forEach((cell, j) => {
          const cat = `${rat}.when[${j}]`;
          if (typeof cell !== 'string') this.add(cat, 'must be a string (-, a literal, an operator and operand, or an expression with ?)');
          else if (columns !== null && j < columns.length) {
            const text = cellExpression(cell, columns[j]!);
            if (text !== null) this.checkExpr(text, cat, cell);
          }
        });
        // The row's condition (what compile uses), kept apart so its reads are not checked twice.
        if (this.problemCount === before && columns !== null && when.length === columns.length) {
          const outcome = parseExpression(rowCondition(when as string[], columns), this.fieldMissing);
          if (outcome.ok) this.rowExprs.set(`${rat}.when`, outcome.expr);
          else this.add(`${rat}.when`, outcome.message);
        }
      }
      if (sets) {
        if (row['next_step'] !== undefined) this.add(`${rat}.next_step`, 'not allowed with hit_policy (use set; the step carries next_step)');
        const set = row['set'];
        if (set === undefined) this.add(`${rat}.set`, 'required with hit_policy (variable name to expression)');
        else if (!isObject(set)) this.add(`${rat}.set`, 'must be an object mapping variable names to expressions');
        else {
          for (const name of Object.keys(set)) {
            const nat = joinKey(`${rat}.set`, name);
            if (!VARIABLE_NAME_RE.test(name)) this.add(nat, 'must be a variable name: letters, digits and _, not starting with a digit (read as $name)');
            else this.checkExpr(set[name], nat);
          }
        }
      } else {
        if (row['set'] !== undefined) this.add(`${rat}.set`, 'only with hit_policy first or collect');
        this.checkRef(row['next_step'], `${rat}.next_step`, true);
      }
    });
    // NOTE: a set table's cells and values may not read what it sets (so `first` is exactly one
    // if-chain per variable for the filter; table.ts firstValueTree).
    if (sets) {
      for (const [key, e] of this.exprs) {
        if (!key.startsWith(`${at}.rows[`)) continue;
        for (const v of variablesRead(e.ast, new Set())) if (setNames.has(v)) this.add(key, `must not read $${v}, which this table sets`);
      }
    }
  }

  /**
   * A call step (EXTENSIONS.md 3 "Calling another ruleset"): `ruleset` a valid ruleset name other
   * than this one (a longer cycle is found where the stored rulesets are known: the service),
   * `input` an object of expressions when given, `result` a variable name, `next_step` a step.
   */
  private checkCall(at: string, step: JsonObject): void {
    this.hasVariables = true;
    const callee = step['ruleset'];
    if (callee === undefined) this.add(`${at}.ruleset`, 'required (the name of the ruleset to call)');
    else if (!isValidRulesetName(callee)) this.add(`${at}.ruleset`, "must be a ruleset name: 1-128 characters of A-Z a-z 0-9 _ - . and not start with '.'");
    else if (callee === this.rulesetName) this.add(`${at}.ruleset`, `a ruleset must not call itself (call cycle: ${callee} -> ${callee})`);
    const input = step['input'];
    if (input !== undefined) {
      if (!isObject(input)) this.add(`${at}.input`, "must be an object mapping the callee's input keys to expressions");
      else
        for (const key of Object.keys(input)) {
          const kat = joinKey(`${at}.input`, key);
          if (key === '__proto__') this.add(kat, "the key '__proto__' is not allowed");
          else this.checkExpr(input[key], kat);
        }
    }
    const result = step['result'];
    if (result === undefined) this.add(`${at}.result`, 'required (the variable that receives {code, message, output})');
    else if (typeof result !== 'string' || !VARIABLE_NAME_RE.test(result)) {
      this.add(`${at}.result`, 'must be a variable name: letters, digits and _, not starting with a digit (read as $name)');
    }
    this.checkRef(step['next_step'], `${at}.next_step`, true);
  }

  /** A step reference: must be a string naming a step. */
  private checkRef(value: JsonValue | undefined, at: string, required: boolean): void {
    if (value === undefined) {
      if (required) this.add(at, 'required');
    } else if (typeof value !== 'string') {
      this.add(at, 'must be a step id (a string)');
    } else if (this.stepIds !== null && !this.stepIds.has(value)) {
      this.add(at, `unknown step '${value}'`);
    }
  }

  /** An expression string: must parse (and pass the language's static checks). */
  private checkExpr(value: JsonValue | undefined, at: string, written?: string): void {
    if (value === undefined) {
      this.add(at, 'required');
      return;
    }
    if (typeof value !== 'string') {
      this.add(at, 'must be an expression string');
      return;
    }
    const outcome = parseExpression(value, this.fieldMissing);
    if (outcome.ok) this.exprs.set(at, outcome.expr);
    // A table cell is checked as its expression: say which one the position is in.
    else this.add(at, written === undefined ? outcome.message : `${outcome.message} (in '${value}', the expression of '${written}')`);
  }
}
