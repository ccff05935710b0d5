/**
 * The form of one step: its name, and by kind the branches (condition, target) and default of
 * a decision, the result of a terminal, the next step of an action or a call; the other keys
 * (actions, table rows, call inputs) as JSON. Each change rewrites the document, which is
 * validated as the editor's text is.
 */
import { useEffect, useState } from 'preact/hooks';
import type { RulesetDoc, Step } from './model';

interface Props {
  id: string;
  doc: RulesetDoc;
  findings: { text: string; warn: boolean }[];
  onChange: (doc: RulesetDoc) => void;
  onClose: () => void;
}

function StepSelect({
  doc,
  value,
  onChange,
  label,
  allowNone,
}: {
  doc: RulesetDoc;
  value: string | undefined;
  onChange: (v: string | undefined) => void;
  label: string;
  allowNone?: boolean;
}) {
  const ids = Object.keys(doc.steps);
  return (
    <select aria-label={label} value={value ?? ''} onChange={(e) => onChange(e.currentTarget.value === '' ? undefined : e.currentTarget.value)}>
      {(allowNone || value === undefined) && <option value="">(none)</option>}
      {value !== undefined && !ids.includes(value) && <option value={value}>{value} (unknown)</option>}
      {ids.map((s) => (
        <option key={s} value={s}>
          {s}
        </option>
      ))}
    </select>
  );
}

/** A JSON field of a step: kept as text until it parses. */
function JsonField({ label, value, onChange }: { label: string; value: unknown; onChange: (v: unknown) => void }) {
  const [text, setText] = useState(JSON.stringify(value ?? null, null, 2));
  const [err, setErr] = useState<string | null>(null);
  useEffect(() => setText(JSON.stringify(value ?? null, null, 2)), [JSON.stringify(value)]);
  return (
    <label class="field">
      {label}
      <textarea
        class="code small"
        spellcheck={false}
        value={text}
        onInput={(e) => {
          const t = e.currentTarget.value;
          setText(t);
          try {
            const v: unknown = JSON.parse(t);
            setErr(null);
            onChange(v);
          } catch (x) {
            setErr((x as Error).message);
          }
        }}
      />
      {err && <span class="error">{err}</span>}
    </label>
  );
}

/** The step form. */
export function StepForm({ id, doc, findings, onChange, onClose }: Props) {
  const step = doc.steps[id] as Step;
  const set = (patch: Partial<Step>) => {
    const next: Step = { ...step, ...patch };
    for (const [k, v] of Object.entries(patch)) if (v === undefined) delete next[k];
    onChange({ ...doc, steps: { ...doc.steps, [id]: next } });
  };
  const branches = Array.isArray(step.branches) ? step.branches : [];
  const setBranch = (i: number, patch: Partial<{ condition: string; next_step: string }>) =>
    set({ branches: branches.map((b, j) => (j === i ? { ...b, ...patch } : b)) });
  const result = (step.result ?? {}) as Record<string, unknown>;
  const firstStep = Object.keys(doc.steps).find((s) => s !== id) ?? id;
  return (
    <div class="stepform card" id="step-form" data-step={id}>
      <div class="formhead">
        <strong>
          {step.type} <code>{id}</code>
        </strong>
        {doc.config.entry_step === id && <span class="badge">entry</span>}
        <span class="spacer" />
        <button type="button" onClick={onClose} aria-label="close the step form">
          ×
        </button>
      </div>
      {findings.length > 0 && (
        <ul class="findings step-findings">
          {findings.map((f, i) => (
            <li key={i} class={f.warn ? 'warn' : 'error'}>
              {f.text}
            </li>
          ))}
        </ul>
      )}
      <label class="field">
        Name
        <input value={step.name ?? ''} placeholder={id} onInput={(e) => set({ name: e.currentTarget.value === '' ? undefined : e.currentTarget.value })} />
      </label>
      {step.type === 'decision' && (
        <div>
          <div class="sub">Branches (first that holds wins)</div>
          {branches.map((b, i) => (
            <div class="branch" key={i}>
              <input
                class="cond"
                aria-label={`condition of branch ${i}`}
                data-branch={i}
                value={b.condition}
                onInput={(e) => setBranch(i, { condition: e.currentTarget.value })}
              />
              <StepSelect doc={doc} label={`target of branch ${i}`} value={b.next_step} onChange={(v) => setBranch(i, { next_step: v ?? '' })} />
              <button type="button" aria-label={`remove branch ${i}`} onClick={() => set({ branches: branches.filter((_, j) => j !== i) })}>
                −
              </button>
            </div>
          ))}
          <button type="button" onClick={() => set({ branches: [...branches, { condition: 'true', next_step: firstStep }] })}>
            Add branch
          </button>
          <label class="field">
            Default
            <StepSelect doc={doc} label="default_next" allowNone value={step.default_next} onChange={(v) => set({ default_next: v })} />
          </label>
        </div>
      )}
      {step.type === 'terminal' && (
        <div>
          <label class="field">
            Code
            <input value={String(result['code'] ?? '')} onInput={(e) => set({ result: { ...result, code: e.currentTarget.value } })} />
          </label>
          <label class="field">
            Message
            <input value={String(result['message'] ?? '')} onInput={(e) => set({ result: { ...result, message: e.currentTarget.value } })} />
          </label>
          <JsonField label="Output expressions (key → expression)" value={step['output'] ?? {}} onChange={(v) => set({ output: v })} />
        </div>
      )}
      {step.type === 'action' && <JsonField label="Actions" value={step.actions ?? []} onChange={(v) => set({ actions: v as unknown[] })} />}
      {step.type === 'call' && (
        <div>
          <label class="field">
            Ruleset
            <input value={String(step.ruleset ?? '')} onInput={(e) => set({ ruleset: e.currentTarget.value })} />
          </label>
          <label class="field">
            Result variable
            <input value={String(step.result ?? '')} onInput={(e) => set({ result: e.currentTarget.value })} />
          </label>
          <JsonField label="Input (key → expression)" value={step['input'] ?? {}} onChange={(v) => set({ input: v })} />
        </div>
      )}
      {step.type === 'table' && (
        <div>
          <JsonField label="Inputs (columns)" value={step.inputs ?? []} onChange={(v) => set({ inputs: v as string[] })} />
          <JsonField label="Rows" value={step.rows ?? []} onChange={(v) => set({ rows: v as Step['rows'] })} />
          {step.next_step === undefined && (
            <label class="field">
              Default
              <StepSelect doc={doc} label="default_next" allowNone value={step.default_next} onChange={(v) => set({ default_next: v })} />
            </label>
          )}
        </div>
      )}
      {(step.type === 'action' || step.type === 'call' || (step.type === 'table' && step.hit_policy !== undefined)) && (
        <label class="field">
          Next step
          <StepSelect doc={doc} label="next_step" value={step.next_step} onChange={(v) => set({ next_step: v })} />
        </label>
      )}
    </div>
  );
}
