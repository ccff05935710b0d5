/**
 * The panels of the ruleset page: run (draft or stored, with the trace lit on the graph and the
 * step timings), tests (results and coverage drawn on the graph), versions (structural and
 * behavioural diff, witnesses, rollback), impact over pasted inputs, the filter playground
 * (SQL, Mongo and the predicate tree side by side) and the shadow status.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, call, enc, errorText } from './api';
import type { Marks } from './graph';
import { type RulesetDoc, pathSteps } from './model';

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${what}: ${(e as Error).message}`);
  }
}

const pretty = (v: unknown) => JSON.stringify(v, null, 2);

interface TraceStep {
  id: string;
  name: string;
  duration_us: number;
  row?: number | null;
}
interface ExecAnswer {
  code: string;
  message: string;
  output: unknown;
  duration_us: number;
  trace?: { path: string; steps: TraceStep[] };
}

/** The lit steps and edges of a trace path. */
export function litOf(path: string): NonNullable<Marks['lit']> {
  const ids = pathSteps(path);
  const edges = new Set<string>();
  for (let i = 1; i < ids.length; i++) edges.add(`${ids[i - 1]}>${ids[i]}`);
  return { steps: new Set(ids), edges };
}

/** Run a draft or the stored version with an input. */
export function RunPanel(props: {
  doc: RulesetDoc;
  stored: string | null;
  input: string;
  setInput: (t: string) => void;
  /** Run once at mount: the draft or the stored version (a witness); null: no. */
  autoRun: 'draft' | 'stored' | null;
  onRan: () => void;
  onTrace: (lit: Marks['lit']) => void;
}) {
  const { doc, stored, input, setInput, onTrace } = props;
  const [answer, setAnswer] = useState<ExecAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [which, setWhich] = useState('');
  const run = async (draft: boolean) => {
    setError(null);
    setAnswer(null);
    setWhich(draft ? 'draft (the editor)' : 'stored version');
    try {
      const value = parseJson(input, 'input');
      const a = draft
        ? await call<ExecAnswer>('POST', '/api/v1/draft/execute', { ruleset: doc, input: value, trace: true })
        : await call<ExecAnswer>('POST', `/api/v1/execute/${enc(stored ?? '')}`, { input: value, trace: true });
      setAnswer(a);
      onTrace(a.trace ? litOf(a.trace.path) : undefined);
    } catch (e) {
      setError(errorText(e));
      onTrace(undefined);
    }
  };
  useEffect(() => {
    if (props.autoRun !== null) {
      props.onRan();
      void run(props.autoRun === 'draft' || stored === null);
    }
  }, [props.autoRun]);
  return (
    <div class="runpanel">
      <label class="field">
        Input (JSON object)
        <textarea id="run-input" class="code small" spellcheck={false} value={input} onInput={(e) => setInput(e.currentTarget.value)} />
      </label>
      <div class="buttons">
        <button type="button" class="primary" id="run-draft" onClick={() => run(true)}>
          Run draft
        </button>
        <button type="button" id="run-stored" disabled={stored === null} onClick={() => run(false)}>
          Run stored version
        </button>
      </div>
      {error && (
        <p class="error" id="run-error">
          {error}
        </p>
      )}
      {answer && (
        <div id="run-result">
          <p>
            <span class="muted">{which}:</span> <strong class="code-result">{answer.code}</strong> {answer.message}{' '}
            <span class="muted">({answer.duration_us} µs)</span>
          </p>
          <pre class="code">{pretty(answer.output)}</pre>
          {answer.trace && (
            <div>
              <p>
                Path: <code id="trace-path">{answer.trace.path}</code>
              </p>
              <table class="timings">
                <thead>
                  <tr>
                    <th>#</th>
                    <th>Step</th>
                    <th>µs</th>
                  </tr>
                </thead>
                <tbody>
                  {answer.trace.steps.map((s, i) => (
                    <tr key={i}>
                      <td>{i + 1}</td>
                      <td>
                        {s.id}
                        {s.row !== undefined && s.row !== null ? ` (row ${s.row})` : ''}
                      </td>
                      <td class="num">{s.duration_us}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
      )}
    </div>
  );
}

interface Coverage {
  covered: number;
  total: number;
  missing: string[];
}
interface TestReport {
  passed: number;
  failed: number;
  results: { name: string; passed: boolean; expected: unknown; actual: unknown }[];
  coverage: { steps: Coverage; branches: Coverage; terminals: Coverage };
}

/** Run the tests of the draft or of the stored version; coverage goes to the graph. */
export function TestsPanel({ doc, stored, onCoverage }: { doc: RulesetDoc; stored: string | null; onCoverage: (s: Set<string> | undefined) => void }) {
  const [report, setReport] = useState<TestReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async (draft: boolean) => {
    setError(null);
    try {
      const r = draft
        ? await call<TestReport>('POST', '/api/v1/draft/test', { ruleset: doc })
        : await call<TestReport>('POST', `/api/v1/rulesets/${enc(stored ?? '')}/test`);
      setReport(r);
      const c = r.coverage;
      onCoverage(new Set([...c.steps.missing, ...c.branches.missing, ...c.terminals.missing]));
    } catch (e) {
      setError(errorText(e));
      onCoverage(undefined);
    }
  };
  const pct = (c: Coverage) => (c.total === 0 ? 100 : Math.round((100 * c.covered) / c.total));
  return (
    <div>
      <p class="muted">{(doc.tests ?? []).length} test(s) in the document. Untaken branches and unreached steps are drawn dashed in red on the graph.</p>
      <div class="buttons">
        <button type="button" class="primary" id="run-tests" onClick={() => run(true)}>
          Run tests (draft)
        </button>
        <button type="button" id="run-stored-tests" disabled={stored === null} onClick={() => run(false)}>
          Run stored tests
        </button>
      </div>
      {error && <p class="error">{error}</p>}
      {report && (
        <div id="test-report">
          <p>
            <strong class={report.failed ? 'bad' : 'ok'}>
              {report.passed} passed, {report.failed} failed
            </strong>
          </p>
          <table class="coverage" id="coverage">
            <tbody>
              {(['steps', 'branches', 'terminals'] as const).map((k) => (
                <tr key={k}>
                  <td>{k}</td>
                  <td class="num">
                    {report.coverage[k].covered}/{report.coverage[k].total}
                  </td>
                  <td class="num">{pct(report.coverage[k])}%</td>
                  <td class="missing">{report.coverage[k].missing.join(', ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <ul class="tests">
            {report.results.map((r) => (
              <li key={r.name} class={r.passed ? 'ok' : 'bad'}>
                {r.passed ? '✓' : '✗'} {r.name}
                {!r.passed && (
                  <div class="diffpair">
                    <pre class="code">expected {pretty(r.expected)}</pre>
                    <pre class="code">actual {pretty(r.actual)}</pre>
                  </div>
                )}
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

interface Versions {
  name: string;
  current_version: string;
  versions: { seq: number; version: string; timestamp: string }[];
}
interface Region {
  from_code: string;
  to_code: string;
  sql: string | null;
  witness: unknown;
  condition: unknown;
}
interface DiffAnswer {
  changes: { op: string; path: string; from?: unknown; to?: unknown }[];
  behavior: { equivalent: boolean; exact: boolean; truncated: boolean; regions: Region[] } | null;
}

/** Versions: the list, a diff between two of them, rollback. */
export function VersionsPanel({
  name,
  doc,
  epoch,
  onRolledBack,
  onWitness,
}: {
  name: string;
  doc: RulesetDoc;
  epoch: number;
  onRolledBack: () => void;
  /** Runs a witness: on the editor's document (`draft`) or the stored version. */
  onWitness: (input: unknown, draft: boolean) => void;
}) {
  const [versions, setVersions] = useState<Versions | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('current');
  const [diff, setDiff] = useState<DiffAnswer | null>(null);
  const [confirm, setConfirm] = useState<number | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [reload, setReload] = useState(0);
  useEffect(() => {
    call<Versions>('GET', `/api/v1/rulesets/${enc(name)}/versions`).then(
      (v) => {
        setVersions(v);
        if (from === '' && v.versions[0]) setFrom(String(v.versions[0].seq));
      },
      (e) => setError(errorText(e)),
    );
  }, [name, epoch, reload]);
  const side = (s: string) => (s === 'current' ? 'current' : s === 'editor' ? doc : Number(s));
  const runDiff = async () => {
    setError(null);
    try {
      setDiff(await call<DiffAnswer>('POST', `/api/v1/rulesets/${enc(name)}/diff`, { from: side(from), to: side(to) }));
    } catch (e) {
      setError(errorText(e));
    }
  };
  const rollback = async (seq: number) => {
    setError(null);
    try {
      const r = await call<{ from_version: string; to_version: string }>('POST', `/api/v1/rulesets/${enc(name)}/rollback`, { seq });
      setMessage(`Rolled back from ${r.from_version} to ${r.to_version}`);
      setConfirm(null);
      setReload((x) => x + 1);
      onRolledBack();
    } catch (e) {
      setError(errorText(e));
    }
  };
  const options = [
    <option key="current" value="current">
      current ({versions?.current_version})
    </option>,
    ...(versions?.versions ?? []).map((v) => (
      <option key={v.seq} value={String(v.seq)}>
        seq {v.seq} ({v.version})
      </option>
    )),
    <option key="editor" value="editor">
      the editor's document
    </option>,
  ];
  return (
    <div>
      {error && <p class="error">{error}</p>}
      {message && (
        <p class="ok" id="rollback-result">
          {message}
        </p>
      )}
      {versions && (
        <div>
          <p>
            Current version: <strong id="current-version">{versions.current_version}</strong>
          </p>
          {versions.versions.length === 0 && <p class="muted">No stored history (a server without --rules-dir keeps none).</p>}
          <table class="versions">
            <tbody>
              {versions.versions.map((v) => (
                <tr key={v.seq} data-seq={v.seq}>
                  <td>seq {v.seq}</td>
                  <td>{v.version}</td>
                  <td class="muted">{v.timestamp}</td>
                  <td>
                    {confirm === v.seq ? (
                      <button type="button" class="danger" data-confirm-rollback={v.seq} onClick={() => rollback(v.seq)}>
                        Confirm roll back to {v.version}
                      </button>
                    ) : (
                      <button type="button" data-rollback={v.seq} onClick={() => setConfirm(v.seq)}>
                        Roll back
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <div class="diffbar">
            <label>
              From{' '}
              <select id="diff-from" value={from} onChange={(e) => setFrom(e.currentTarget.value)}>
                {options}
              </select>
            </label>
            <label>
              To{' '}
              <select id="diff-to" value={to} onChange={(e) => setTo(e.currentTarget.value)}>
                {options}
              </select>
            </label>
            <button type="button" class="primary" id="run-diff" onClick={runDiff}>
              Diff
            </button>
          </div>
        </div>
      )}
      {diff && (
        <div id="diff-result">
          <h3>Structural changes ({diff.changes.length})</h3>
          <ul class="changes">
            {diff.changes.map((c, i) => (
              <li key={i} class={`op-${c.op}`}>
                <strong>{c.op}</strong> <code>{c.path}</code>
                {'from' in c && <span class="from"> {JSON.stringify(c.from)}</span>}
                {'to' in c && <span class="to"> → {JSON.stringify(c.to)}</span>}
              </li>
            ))}
          </ul>
          <h3>Behaviour</h3>
          {diff.behavior === null && <p class="muted">Not computed for this pair.</p>}
          {diff.behavior && diff.behavior.regions.length === 0 && <p>Equivalent{diff.behavior.exact ? '' : ' (as far as the diff could tell)'}.</p>}
          {diff.behavior?.regions.map((r, i) => (
            <div class="region card" key={i} data-region={i}>
              <p>
                <strong>{r.from_code}</strong> → <strong>{r.to_code}</strong>
              </p>
              {r.sql && <pre class="code small">{r.sql}</pre>}
              {r.witness !== null ? (
                <div>
                  <span class="muted">witness</span> <code>{JSON.stringify(r.witness)}</code>{' '}
                  <button type="button" class="run-witness" onClick={() => onWitness(r.witness, to === 'editor')}>
                    Run witness
                  </button>
                </div>
              ) : (
                <span class="muted">no witness found</span>
              )}
            </div>
          ))}
        </div>
      )}
    </div>
  );
}

/** Impact of the editor's document (or a stored version) over pasted inputs. */
export function ImpactPanel({ name, doc }: { name: string; doc: RulesetDoc }) {
  const [inputs, setInputs] = useState('[\n  {}\n]');
  const [answer, setAnswer] = useState<{
    total: number;
    changed: number;
    errors: number;
    transitions: { from: string; to: string; count: number }[];
    examples: unknown[];
  } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    setError(null);
    try {
      const t = inputs.trim();
      const list = t.startsWith('[')
        ? parseJson(t, 'inputs')
        : t
            .split('\n')
            .filter((l) => l.trim() !== '')
            .map((l, i) => parseJson(l, `line ${i + 1}`));
      setAnswer(await call('POST', `/api/v1/rulesets/${enc(name)}/impact`, { candidate: doc, inputs: list }));
    } catch (e) {
      setError(errorText(e));
    }
  };
  return (
    <div>
      <p class="muted">Runs each input on the stored version and on the editor's document, and counts what changes.</p>
      <label class="field">
        Inputs (a JSON array, or one JSON object per line)
        <textarea id="impact-inputs" class="code small" spellcheck={false} value={inputs} onInput={(e) => setInputs(e.currentTarget.value)} />
      </label>
      <button type="button" class="primary" id="run-impact" onClick={run}>
        Measure impact
      </button>
      {error && <p class="error">{error}</p>}
      {answer && (
        <div id="impact-result">
          <p>
            {answer.changed} of {answer.total} changed, {answer.errors} with errors
          </p>
          <ul>
            {answer.transitions.map((t, i) => (
              <li key={i}>
                {t.from} → {t.to}: {t.count}
              </li>
            ))}
          </ul>
          {answer.examples.length > 0 && <pre class="code small">{pretty(answer.examples)}</pre>}
        </div>
      )}
    </div>
  );
}

/** The filter playground: the editor's document as SQL, Mongo and the predicate tree. */
export function FilterPanel({ doc }: { doc: RulesetDoc }) {
  const [known, setKnown] = useState('{}');
  const [targets, setTargets] = useState('');
  const [mapping, setMapping] = useState('');
  const [out, setOut] = useState<Record<string, unknown> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const codes = Object.values(doc.steps)
    .filter((s) => s?.type === 'terminal')
    .map((s) => String((s.result as { code?: unknown } | undefined)?.code ?? ''));
  const run = async () => {
    setError(null);
    try {
      const field_mapping: Record<string, string> = {};
      for (const line of mapping.split('\n')) {
        const m = /^\s*([^=\s]+)\s*=\s*(\S+)\s*$/.exec(line);
        if (m) field_mapping[m[1] as string] = m[2] as string;
        else if (line.trim() !== '') throw new Error(`field mapping: write "rule.path = column", not "${line.trim()}"`);
      }
      const body = {
        ruleset: doc,
        known_input: parseJson(known, 'known input'),
        target_results: (targets.trim() === '' ? (codes[0] ?? '') : targets)
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== ''),
        field_mapping,
      };
      const [sql, mongo, json] = await Promise.all(
        (['sql', 'mongo', 'json'] as const).map((format) =>
          call<Record<string, unknown>>('POST', '/api/v1/draft/filter', { ...body, format }).catch((e: unknown) => ({ error: errorText(e) })),
        ),
      );
      setOut({ sql, mongo, json });
    } catch (e) {
      setError(errorText(e));
    }
  };
  const show = (a: unknown) => {
    const r = a as { filter?: unknown; error?: string; always_matches?: boolean; never_matches?: boolean; exact?: boolean };
    if (r.error) return <p class="error">{r.error}</p>;
    return (
      <div>
        <pre class="code small">{typeof r.filter === 'string' ? r.filter : pretty(r.filter)}</pre>
        <p class="muted">
          {r.always_matches ? 'always matches · ' : ''}
          {r.never_matches ? 'never matches · ' : ''}
          {r.exact ? 'exact' : 'superset'}
        </p>
      </div>
    );
  };
  return (
    <div>
      <div class="cols">
        <label class="field">
          Known input (JSON)
          <textarea id="filter-known" class="code small" spellcheck={false} value={known} onInput={(e) => setKnown(e.currentTarget.value)} />
        </label>
        <label class="field">
          Field mapping (rule.path = column, one a line)
          <textarea id="filter-mapping" class="code small" spellcheck={false} value={mapping} onInput={(e) => setMapping(e.currentTarget.value)} />
        </label>
      </div>
      <label class="field">
        Target result codes (comma separated)
        <input id="filter-targets" value={targets} placeholder={codes.join(', ')} onInput={(e) => setTargets(e.currentTarget.value)} />
      </label>
      <button type="button" class="primary" id="run-filter" onClick={run}>
        Derive filters
      </button>
      {error && <p class="error">{error}</p>}
      {out && (
        <div class="cols three" id="filter-result">
          <div>
            <h3>SQL</h3>
            {show(out['sql'])}
          </div>
          <div>
            <h3>Mongo</h3>
            {show(out['mongo'])}
          </div>
          <div>
            <h3>Tree</h3>
            {show(out['json'])}
          </div>
        </div>
      )}
    </div>
  );
}

/** The shadow run of a ruleset, if any. */
export function ShadowPanel({ name }: { name: string }) {
  const [state, setState] = useState<unknown>(undefined);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    call('GET', `/api/v1/rulesets/${enc(name)}/shadow`).then(
      (s) => (setState(s), setError(null)),
      (e) => (e instanceof ApiError && e.status === 404 ? (setState(null), setError(null)) : setError(errorText(e))),
    );
  useEffect(() => {
    void load();
  }, [name]);
  return (
    <div id="shadow">
      <button type="button" onClick={load}>
        Refresh
      </button>
      {error && <p class="error">{error}</p>}
      {state === null && <p class="muted">No shadow run for this ruleset (start one with PUT /api/v1/rulesets/{name}/shadow).</p>}
      {state !== null && state !== undefined && (
        <table class="kv">
          <tbody>
            {Object.entries(state as Record<string, unknown>).map(([k, v]) => (
              <tr key={k}>
                <th>{k}</th>
                <td>
                  <code>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
