/**
 * The svc web console: a single page served at /console/ that calls the public HTTP API.
 * Views (hash routes): `#/` rulesets, `#/new` a new ruleset, `#/r/<name>` one ruleset (graph,
 * editor, run, tests, versions, impact, filter, shadow).
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, apiKey, call, enc, onUnauthorized, setApiKey, setTenant, tenant } from './api';
import { RulesetPage } from './ruleset';
import './style.css';

interface Listed {
  name: string;
  version: string;
  description: string | null;
}

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

function KeyPrompt({ onDone, failed }: { onDone: () => void; failed: boolean }) {
  const [key, setKey] = useState('');
  return (
    <form
      class="keyprompt card"
      onSubmit={(e) => {
        e.preventDefault();
        setApiKey(key.trim());
        onDone();
      }}
    >
      <h2>API key</h2>
      <p>This server has authentication on. Type an API key (or JWT); it is kept in this tab only (session storage) and sent as a Bearer token.</p>
      {failed && apiKey() !== null && <p class="error">The key was refused.</p>}
      <input id="api-key" type="password" autoFocus autoComplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} aria-label="API key" />
      <button type="submit" class="primary">
        Use this key
      </button>
    </form>
  );
}

function TenantPicker({ onChange }: { onChange: () => void }) {
  // null: unknown (the key may not list tenants: a text field); 'off': no multi-tenancy (hidden).
  const [tenants, setTenants] = useState<string[] | null | 'off'>(null);
  const [value, setValue] = useState(tenant());
  useEffect(() => {
    call<unknown>('GET', '/api/v1/tenants').then(
      (t) => {
        const list = Array.isArray(t) ? t : ((t as { tenants?: unknown[] } | null)?.tenants ?? []);
        setTenants(list.map((x) => (typeof x === 'string' ? x : String((x as { id?: unknown }).id ?? ''))).filter((x) => x !== ''));
      },
      (e: unknown) => setTenants(e instanceof ApiError && e.status === 404 && tenant() === '' ? 'off' : null),
    );
  }, []);
  const pick = (v: string) => {
    setValue(v);
    setTenant(v);
    onChange();
  };
  if (tenants === 'off') return null;
  return (
    <label class="tenant">
      Tenant{' '}
      {tenants !== null && tenants.length > 0 ? (
        <select value={value} onChange={(e) => pick(e.currentTarget.value)}>
          <option value="">(none)</option>
          {tenants.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      ) : (
        <input size={12} placeholder="(none)" value={value} onChange={(e) => pick(e.currentTarget.value.trim())} aria-label="tenant id (X-Tenant-ID)" />
      )}
    </label>
  );
}

function RulesetList({ epoch }: { epoch: number }) {
  const [list, setList] = useState<Listed[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [q, setQ] = useState('');
  const [warnings, setWarnings] = useState<Record<string, number>>({});
  useEffect(() => {
    setError(null);
    call<Listed[]>('GET', '/api/v1/rulesets').then(
      (l) => {
        setList(l);
        // The time the page became usable with data, for the tests' 1 s budget (docs/console.md).
        if (performance.getEntriesByName('console:list-ready').length === 0) performance.mark('console:list-ready');
        // The warnings badge: the analysis of each listed ruleset (computed once per stored version).
        l.slice(0, 100).forEach((r) =>
          call<{ warnings: unknown[] }>('GET', `/api/v1/rulesets/${enc(r.name)}/analysis`).then(
            (a) => setWarnings((w) => ({ ...w, [r.name]: a.warnings.length })),
            () => undefined,
          ),
        );
      },
      (e: Error) => setError(e.message),
    );
  }, [epoch]);
  const shown = (list ?? []).filter((r) => (r.name + ' ' + (r.description ?? '')).toLowerCase().includes(q.toLowerCase()));
  return (
    <main class="list">
      <div class="toolbar">
        <input type="search" placeholder="Search rulesets" value={q} onInput={(e) => setQ(e.currentTarget.value)} aria-label="search rulesets" />
        <a class="button primary" href="#/new" id="new-ruleset">
          New ruleset
        </a>
      </div>
      {error && <p class="error">{error}</p>}
      {list === null && !error && <p>Loading…</p>}
      {list !== null && list.length === 0 && <p class="muted">No rulesets yet. Create one with “New ruleset”.</p>}
      <table class="rulesets">
        <thead>
          <tr>
            <th>Name</th>
            <th>Version</th>
            <th>Description</th>
            <th>Warnings</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <tr key={r.name} data-ruleset={r.name}>
              <td>
                <a href={`#/r/${enc(r.name)}`}>{r.name}</a>
              </td>
              <td>{r.version}</td>
              <td>{r.description ?? ''}</td>
              <td>{warnings[r.name] ? <span class="badge warn">{warnings[r.name]}</span> : warnings[r.name] === 0 ? <span class="muted">0</span> : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}

function App() {
  const hash = useHash();
  const [needKey, setNeedKey] = useState(false);
  const [epoch, setEpoch] = useState(0);
  useEffect(() => onUnauthorized(() => setNeedKey(true)), []);
  const refresh = () => setEpoch((e) => e + 1);
  const route = hash.replace(/^#/, '') || '/';
  let page;
  if (needKey)
    page = (
      <KeyPrompt
        failed={apiKey() !== null}
        onDone={() => {
          setNeedKey(false);
          refresh();
        }}
      />
    );
  else if (route === '/new') page = <RulesetPage key={`new-${epoch}`} name={null} />;
  else if (route.startsWith('/r/')) page = <RulesetPage key={`${route}-${epoch}`} name={decodeURIComponent(route.slice(3))} />;
  else page = <RulesetList epoch={epoch} />;
  return (
    <div class="app">
      <header>
        <a href="#/" class="brand">
          svc console
        </a>
        <nav>
          <a href="#/">Rulesets</a>
        </nav>
        <span class="spacer" />
        <TenantPicker key={epoch} onChange={refresh} />
        {apiKey() !== null && (
          <button
            type="button"
            onClick={() => {
              setApiKey(null);
              setNeedKey(true);
            }}
          >
            Forget key
          </button>
        )}
      </header>
      {page}
    </div>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
