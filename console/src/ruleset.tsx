/**
 * One ruleset: the graph on the left; on the right the step form, the document editor (JSON or
 * YAML, validated as you type through the draft endpoint) and the panels (run, tests, versions,
 * impact, filter, shadow). Saving posts the document: the server runs its tests first.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, call, enc, errorText } from './api';
import { Graph, type Marks } from './graph';
import { type Format, type RulesetDoc, parseDoc, stepOfPath, templateDoc, writeDoc } from './model';
import { FilterPanel, ImpactPanel, RunPanel, ShadowPanel, TestsPanel, VersionsPanel } from './panels';
import { StepForm } from './step-form';

/** A problem or warning with its document location. */
export interface Finding {
  path: string;
  message: string;
  code?: string;
}

interface Validation {
  valid: boolean;
  problems: Finding[];
  warnings: Finding[];
}

const TABS = ['Edit', 'Run', 'Tests', 'Versions', 'Impact', 'Filter', 'Shadow'] as const;
type Tab = (typeof TABS)[number];

function byStep(list: Finding[]): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const f of list) {
    const id = stepOfPath(f.path);
    if (id === null) continue;
    m.set(id, [...(m.get(id) ?? []), `${f.path}: ${f.code ? `${f.code} ` : ''}${f.message}`]);
  }
  return m;
}

/** The ruleset page; `name` null: a new ruleset. */
export function RulesetPage({ name }: { name: string | null }) {
  const [format, setFormat] = useState<Format>('json');
  const [text, setText] = useState('');
  const [doc, setDoc] = useState<RulesetDoc | null>(null);
  const [parseError, setParseError] = useState<string | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [validation, setValidation] = useState<Validation | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [tab, setTab] = useState<Tab>('Edit');
  const [lit, setLit] = useState<Marks['lit']>();
  const [uncovered, setUncovered] = useState<Set<string>>();
  const [saveState, setSaveState] = useState<{ ok: boolean; text: string; failures?: unknown[]; problems?: Finding[] } | null>(null);
  const [stored, setStored] = useState<string | null>(name);
  const [versionEpoch, setVersionEpoch] = useState(0);
  const [runInput, setRunInput] = useState('{\n  \n}');
  const [autoRun, setAutoRun] = useState<'draft' | 'stored' | null>(null);

  /** Marks of runs and tests describe the document they ran on: a new document drops them. */
  const clearMarks = () => {
    setLit(undefined);
    setUncovered(undefined);
  };
  const load = (d: RulesetDoc) => {
    clearMarks();
    setDoc(d);
    setText(writeDoc(d, format));
    setParseError(null);
  };
  useEffect(() => {
    if (name === null) {
      load(templateDoc('new-ruleset'));
      return;
    }
    call<RulesetDoc>('GET', `/api/v1/rulesets/${enc(name)}`).then(load, (e) => setLoadError(errorText(e)));
  }, [name]);

  // Validation as you type: each parsed document goes to the draft endpoint (300 ms after the
  // last key); an older answer that arrives late is dropped.
  const seq = useRef(0);
  useEffect(() => {
    if (doc === null) return;
    const mine = ++seq.current;
    const t = setTimeout(() => {
      call<Validation>('POST', '/api/v1/draft/validate', { ruleset: doc }).then(
        (v) => mine === seq.current && setValidation(v),
        (e) => mine === seq.current && setValidation({ valid: false, problems: [{ path: '', message: errorText(e) }], warnings: [] }),
      );
    }, 300);
    return () => clearTimeout(t);
  }, [doc]);

  const onText = (t: string) => {
    setText(t);
    try {
      setDoc(parseDoc(t, format));
      clearMarks();
      setParseError(null);
    } catch (e) {
      setParseError((e as Error).message);
    }
  };
  const switchFormat = (f: Format) => {
    if (doc === null || parseError !== null) return;
    setFormat(f);
    setText(writeDoc(doc, f));
  };
  /** A change made in the step form: the document and the text follow. */
  const edit = (next: RulesetDoc) => {
    clearMarks();
    setDoc(next);
    setText(writeDoc(next, format));
    setParseError(null);
  };

  const save = async () => {
    if (doc === null) return;
    setSaveState({ ok: true, text: 'Saving…' });
    try {
      const r = await call<{ status: string; name: string; warnings?: unknown[] }>('POST', '/api/v1/rulesets', doc);
      setSaveState({ ok: true, text: `${r.status} ${r.name}${r.warnings?.length ? ` (${r.warnings.length} warnings)` : ''}` });
      setVersionEpoch((v) => v + 1);
      if (stored !== r.name) {
        setStored(r.name);
        history.replaceState(null, '', `#/r/${enc(r.name)}`);
      }
    } catch (e) {
      const body = e instanceof ApiError ? e.body : {};
      setSaveState({
        ok: false,
        text: errorText(e),
        ...(Array.isArray(body['failures']) ? { failures: body['failures'] as unknown[] } : {}),
        ...(Array.isArray(body['problems']) ? { problems: body['problems'] as Finding[] } : {}),
      });
    }
  };

  // Ctrl+S (or Cmd+S) saves, Escape closes the step form.
  const saveRef = useRef(save);
  saveRef.current = save;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key === 's') {
        e.preventDefault();
        void saveRef.current();
      } else if (e.key === 'Escape') setSelected(null);
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);

  const marks: Marks = useMemo(
    () => ({
      ...(lit ? { lit } : {}),
      ...(uncovered ? { uncovered } : {}),
      problems: byStep(validation?.problems ?? []),
      warnings: byStep(validation?.warnings ?? []),
    }),
    [lit, uncovered, validation],
  );

  if (loadError) return <main class="error page-error">{loadError}</main>;
  if (doc === null) return <main>Loading…</main>;
  const stepFindings = selected
    ? [
        ...(marks.problems?.get(selected) ?? []).map((text) => ({ text, warn: false })),
        ...(marks.warnings?.get(selected) ?? []).map((text) => ({ text, warn: true })),
      ]
    : [];
  const general = (validation?.problems ?? []).filter((p) => stepOfPath(p.path) === null);

  return (
    <main class="ruleset">
      <section class="left">
        <div class="titlebar">
          <h1>{stored ?? 'New ruleset'}</h1>
          <span class={`status ${validation === null ? '' : validation.valid ? 'ok' : 'bad'}`} id="validity">
            {parseError ? 'parse error' : validation === null ? 'checking…' : validation.valid ? 'valid' : `${validation.problems.length} problem(s)`}
            {validation && validation.warnings.length > 0 ? ` · ${validation.warnings.length} warning(s)` : ''}
          </span>
          <span class="spacer" />
          <button type="button" class="primary" id="save" title="Save (Ctrl+S)" onClick={save} disabled={parseError !== null}>
            Save
          </button>
        </div>
        {saveState && (
          <div class={`save ${saveState.ok ? 'ok' : 'error'}`} id="save-result">
            {saveState.text}
            {saveState.failures && (
              <ul class="failures">
                {(saveState.failures as { name?: string; expected?: unknown; actual?: unknown }[]).map((f, i) => (
                  <li key={i}>
                    <strong>{f.name}</strong>: expected <code>{JSON.stringify(f.expected)}</code>, got <code>{JSON.stringify(f.actual)}</code>
                  </li>
                ))}
              </ul>
            )}
            {saveState.problems && (
              <ul>
                {saveState.problems.map((p, i) => (
                  <li key={i}>
                    {p.path}: {p.message}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
        <Graph doc={doc} marks={marks} selected={selected} onSelect={(id) => (setSelected(id), setTab('Edit'))} />
        <div class="legend">
          <span class="lg decision">decision</span>
          <span class="lg table">table</span>
          <span class="lg call">call</span>
          <span class="lg action">action</span>
          <span class="lg terminal">terminal</span>
          <span class="lg lit">trace path</span>
          <span class="lg uncovered">not covered</span>
        </div>
      </section>
      <section class="right">
        <div class="tabs" role="tablist">
          {TABS.map((t) => (
            <button
              type="button"
              role="tab"
              key={t}
              aria-selected={tab === t}
              class={tab === t ? 'active' : ''}
              data-tab={t}
              onClick={() => setTab(t)}
              disabled={stored === null && ['Versions', 'Impact', 'Shadow'].includes(t)}
            >
              {t}
            </button>
          ))}
        </div>
        <div class="panel">
          {tab === 'Edit' && (
            <div>
              {selected && doc.steps[selected] && (
                <StepForm id={selected} doc={doc} findings={stepFindings} onChange={edit} onClose={() => setSelected(null)} />
              )}
              {!selected && <p class="muted">Select a step on the graph (click, or Tab and Enter) to edit it in a form.</p>}
              <div class="editorbar">
                <strong>Document</strong>
                <span class="spacer" />
                <label>
                  <input type="radio" name="fmt" checked={format === 'json'} onChange={() => switchFormat('json')} /> JSON
                </label>
                <label>
                  <input type="radio" name="fmt" checked={format === 'yaml'} onChange={() => switchFormat('yaml')} /> YAML
                </label>
              </div>
              <textarea
                id="doc-editor"
                class="code"
                spellcheck={false}
                value={text}
                onInput={(e) => onText(e.currentTarget.value)}
                aria-label="ruleset document"
              />
              {parseError && <p class="error">{parseError}</p>}
              {general.length > 0 && (
                <ul class="findings" id="general-problems">
                  {general.map((p, i) => (
                    <li key={i} class="error">
                      {p.path || '(document)'}: {p.message}
                    </li>
                  ))}
                </ul>
              )}
              {validation && (validation.problems.length > 0 || validation.warnings.length > 0) && (
                <ul class="findings" id="findings">
                  {validation.problems.map((p, i) => (
                    <li key={`p${i}`} class="error">
                      <button type="button" class="link" onClick={() => setSelected(stepOfPath(p.path))}>
                        {p.path}
                      </button>
                      : {p.message}
                    </li>
                  ))}
                  {validation.warnings.map((p, i) => (
                    <li key={`w${i}`} class="warn">
                      <button type="button" class="link" onClick={() => setSelected(stepOfPath(p.path))}>
                        {p.path}
                      </button>
                      : {p.code} {p.message}
                    </li>
                  ))}
                </ul>
              )}
            </div>
          )}
          {tab === 'Run' && (
            <RunPanel doc={doc} stored={stored} input={runInput} setInput={setRunInput} autoRun={autoRun} onRan={() => setAutoRun(null)} onTrace={setLit} />
          )}
          {tab === 'Tests' && <TestsPanel doc={doc} stored={stored} onCoverage={setUncovered} />}
          {tab === 'Versions' && stored && (
            <VersionsPanel
              name={stored}
              doc={doc}
              epoch={versionEpoch}
              onRolledBack={() => {
                setSaveState(null);
                call<RulesetDoc>('GET', `/api/v1/rulesets/${enc(stored)}`).then(load, (e) => setLoadError(errorText(e)));
              }}
              onWitness={(input, draft) => {
                setRunInput(JSON.stringify(input, null, 2));
                setAutoRun(draft ? 'draft' : 'stored');
                setTab('Run');
              }}
            />
          )}
          {tab === 'Impact' && stored && <ImpactPanel name={stored} doc={doc} />}
          {tab === 'Filter' && <FilterPanel doc={doc} />}
          {tab === 'Shadow' && stored && <ShadowPanel name={stored} />}
        </div>
      </section>
    </main>
  );
}
