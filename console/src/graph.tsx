/**
 * The ruleset as a laid-out graph: dagre places the steps (top to bottom) and routes the edges;
 * each step kind has its own shape; branch edges carry their conditions. Zoom with the wheel or
 * `+`/`-`, pan by dragging or with the arrow keys, `0` fits. Steps are focusable buttons (Tab,
 * Enter selects). Marks: `lit` (the trace path), `problem`/`warning` (validation, analysis),
 * `uncovered` (what no test reached).
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import dagre from '@dagrejs/dagre';
import { edgesOf, type Edge, type RulesetDoc } from './model';

/** What the graph marks. */
export interface Marks {
  /** Steps on the trace path, and edges taken (`from>to`). */
  lit?: { steps: Set<string>; edges: Set<string> };
  /** Step id → problem messages. */
  problems?: Map<string, string[]>;
  /** Step id → warning messages. */
  warnings?: Map<string, string[]>;
  /** Document locations no test reached (`steps.x`, `steps.x.branches[1]`, `steps.x.default_next`). */
  uncovered?: Set<string>;
}

interface Props {
  doc: RulesetDoc;
  marks: Marks;
  selected: string | null;
  onSelect: (id: string) => void;
}

const W = 180;
const H = 56;

interface Laid {
  nodes: { id: string; x: number; y: number; kind: string; name: string }[];
  edges: (Edge & { points: { x: number; y: number }[]; lx: number; ly: number })[];
  width: number;
  height: number;
}

function layoutOf(doc: RulesetDoc): Laid {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 40, ranksep: 70, edgesep: 20, marginx: 20, marginy: 20 });
  g.setDefaultEdgeLabel(() => ({}));
  const ids = Object.keys(doc.steps);
  for (const id of ids) g.setNode(id, { width: W, height: H });
  const edges = edgesOf(doc);
  edges.forEach((e) => g.setEdge(e.from, e.to, { width: Math.min(170, 6 * e.label.length), height: e.label ? 18 : 0, labelpos: 'c' }, e.loc));
  dagre.layout(g);
  const graph = g.graph();
  return {
    nodes: ids.map((id) => {
      const n = g.node(id);
      const s = doc.steps[id];
      return { id, x: n.x, y: n.y, kind: String(s?.type ?? '?'), name: String(s?.name ?? id) };
    }),
    edges: edges.map((e) => {
      const l = g.edge(e.from, e.to, e.loc) as { points?: { x: number; y: number }[]; x?: number; y?: number };
      const points = l.points ?? [];
      const mid = points[Math.floor(points.length / 2)] ?? { x: 0, y: 0 };
      return { ...e, points, lx: l.x ?? mid.x, ly: l.y ?? mid.y };
    }),
    width: graph.width ?? 400,
    height: graph.height ?? 300,
  };
}

function shape(kind: string) {
  switch (kind) {
    case 'decision':
      return <polygon class="shape" points={`${W / 2},0 ${W},${H / 2} ${W / 2},${H} 0,${H / 2}`} />;
    case 'table':
      return (
        <g>
          <rect class="shape" width={W} height={H} />
          <line class="grid" x1={0} y1={18} x2={W} y2={18} />
          <line class="grid" x1={W / 3} y1={18} x2={W / 3} y2={H} />
          <line class="grid" x1={(2 * W) / 3} y1={18} x2={(2 * W) / 3} y2={H} />
        </g>
      );
    case 'call':
      return (
        <g>
          <rect class="shape" width={W} height={H} />
          <rect class="inner" x={8} y={0} width={W - 16} height={H} />
        </g>
      );
    case 'action':
      return <rect class="shape" width={W} height={H} rx={12} />;
    case 'terminal':
      return <rect class="shape" width={W} height={H} rx={H / 2} />;
    default:
      return <rect class="shape" width={W} height={H} />;
  }
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The graph view. */
export function Graph({ doc, marks, selected, onSelect }: Props) {
  const laid = useMemo(() => layoutOf(doc), [doc]);
  const box = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ k: 1, x: 0, y: 0 });
  const drag = useRef<{ x: number; y: number; vx: number; vy: number } | null>(null);

  const fit = () => {
    const el = box.current;
    if (!el) return;
    const w = el.clientWidth || 600;
    const h = el.clientHeight || 400;
    const k = Math.min(1.2, Math.max(0.2, Math.min(w / laid.width, h / laid.height)));
    setView({ k, x: (w - laid.width * k) / 2, y: Math.max(0, (h - laid.height * k) / 2) });
  };
  const shapeKey = Object.keys(doc.steps).join(',');
  useEffect(fit, [shapeKey, laid.width, laid.height]);

  const zoom = (f: number, cx?: number, cy?: number) =>
    setView((v) => {
      const k = Math.min(3, Math.max(0.15, v.k * f));
      const px = cx ?? (box.current?.clientWidth ?? 0) / 2;
      const py = cy ?? (box.current?.clientHeight ?? 0) / 2;
      return { k, x: px - ((px - v.x) * k) / v.k, y: py - ((py - v.y) * k) / v.k };
    });

  const onKey = (e: KeyboardEvent) => {
    const step = 40;
    const moves: Record<string, () => void> = {
      '+': () => zoom(1.2),
      '=': () => zoom(1.2),
      '-': () => zoom(1 / 1.2),
      '0': fit,
      ArrowLeft: () => setView((v) => ({ ...v, x: v.x + step })),
      ArrowRight: () => setView((v) => ({ ...v, x: v.x - step })),
      ArrowUp: () => setView((v) => ({ ...v, y: v.y + step })),
      ArrowDown: () => setView((v) => ({ ...v, y: v.y - step })),
    };
    const fn = moves[e.key];
    if (fn && (e.target as Element).tagName !== 'INPUT') {
      fn();
      e.preventDefault();
    }
  };

  const lit = marks.lit;
  const unc = marks.uncovered;
  return (
    <div
      class="graph"
      ref={box}
      tabIndex={0}
      aria-label="ruleset graph: + and - zoom, arrows pan, 0 fits"
      onKeyDown={onKey}
      onWheel={(e) => {
        e.preventDefault();
        const r = box.current?.getBoundingClientRect();
        zoom(e.deltaY < 0 ? 1.1 : 1 / 1.1, r ? e.clientX - r.left : undefined, r ? e.clientY - r.top : undefined);
      }}
      onPointerDown={(e) => {
        if ((e.target as Element).closest('.node')) return;
        drag.current = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y };
        (e.currentTarget as HTMLElement).setPointerCapture(e.pointerId);
      }}
      onPointerMove={(e) => {
        const d = drag.current;
        if (d) setView((v) => ({ ...v, x: d.vx + e.clientX - d.x, y: d.vy + e.clientY - d.y }));
      }}
      onPointerUp={() => (drag.current = null)}
    >
      <div class="zoom">
        <button type="button" title="zoom in (+)" onClick={() => zoom(1.2)}>
          +
        </button>
        <button type="button" title="zoom out (-)" onClick={() => zoom(1 / 1.2)}>
          −
        </button>
        <button type="button" title="fit (0)" onClick={fit}>
          fit
        </button>
      </div>
      <svg width="100%" height="100%" role="img" aria-label={`graph of ${doc.config?.name ?? 'ruleset'}`}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="10" markerHeight="10" orient="auto">
            <path d="M0,0 L10,5 L0,10 z" class="arrowhead" />
          </marker>
          <marker id="arrow-lit" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="12" markerHeight="12" orient="auto">
            <path d="M0,0 L10,5 L0,10 z" class="arrowhead lit" />
          </marker>
        </defs>
        <g transform={`translate(${view.x},${view.y}) scale(${view.k})`}>
          {laid.edges.map((e) => {
            const on = lit?.edges.has(`${e.from}>${e.to}`) === true;
            const cls = ['edge', on ? 'lit' : '', unc?.has(e.loc) ? 'uncovered' : ''].join(' ');
            const d = e.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x},${p.y}`).join(' ');
            return (
              <g class={cls} key={e.loc} data-edge={e.loc}>
                <path d={d} marker-end={on ? 'url(#arrow-lit)' : 'url(#arrow)'}>
                  <title>{e.label}</title>
                </path>
                {e.label && (
                  <text x={e.lx} y={e.ly + 4} text-anchor="middle" class="elabel">
                    {clip(e.label, 28)}
                    <title>{e.label}</title>
                  </text>
                )}
              </g>
            );
          })}
          {laid.nodes.map((n) => {
            const probs = marks.problems?.get(n.id);
            const warns = marks.warnings?.get(n.id);
            const cls = [
              'node',
              `kind-${n.kind}`,
              lit?.steps.has(n.id) ? 'lit' : '',
              probs ? 'problem' : '',
              warns ? 'warning' : '',
              unc?.has(`steps.${n.id}`) ? 'uncovered' : '',
              selected === n.id ? 'selected' : '',
              doc.config?.entry_step === n.id ? 'entry' : '',
            ].join(' ');
            return (
              <g
                key={n.id}
                class={cls}
                data-step={n.id}
                data-kind={n.kind}
                transform={`translate(${n.x - W / 2},${n.y - H / 2})`}
                tabIndex={0}
                role="button"
                aria-label={`${n.kind} step ${n.id}${probs ? `, ${probs.length} problem(s)` : ''}`}
                onClick={() => onSelect(n.id)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter' || e.key === ' ') {
                    e.preventDefault();
                    e.stopPropagation();
                    onSelect(n.id);
                  }
                }}
              >
                {shape(n.kind)}
                <text x={W / 2} y={n.kind === 'table' ? 13 : 22} text-anchor="middle" class="nname">
                  {clip(n.name, 22)}
                </text>
                <text x={W / 2} y={n.kind === 'table' ? 40 : 40} text-anchor="middle" class="nkind">
                  {n.kind}
                  {n.id !== n.name ? ` · ${clip(n.id, 14)}` : ''}
                </text>
                {(probs || warns) && (
                  <g class="badge" transform={`translate(${W - 8},-8)`}>
                    <circle r={10} />
                    <text y={4} text-anchor="middle">
                      {probs ? '!' : '?'}
                    </text>
                    <title>{[...(probs ?? []), ...(warns ?? [])].join('\n')}</title>
                  </g>
                )}
              </g>
            );
          })}
        </g>
      </svg>
    </div>
  );
}
