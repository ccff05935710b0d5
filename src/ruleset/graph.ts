/**
 * Facts about the step graph of a compiled ruleset, computed once at compile time from the step
 * semantics (steps.ts): successors, predecessors, terminals by code, the steps reachable from the
 * entry step, and the steps that lie on a cycle.
 */
import type { StepInfo } from './step-info.js';
import { stepSuccessors } from './steps.js';

/** The graph facts of a compiled ruleset (read-only). */
export interface RulesetGraph {
  /** Step id → the steps it can go to next, distinct, in evaluation order. */
  readonly successors: ReadonlyMap<string, readonly string[]>;
  /** Step id → the steps that lead to it, distinct, in document order. */
  readonly predecessors: ReadonlyMap<string, readonly string[]>;
  /** Terminal code → the terminal steps with that code, in document order. */
  readonly terminalsByCode: ReadonlyMap<string, readonly string[]>;
  /** The steps reachable from the entry step (the entry included). */
  readonly reachable: ReadonlySet<string>;
  /** The steps that lie on a cycle (an execution could come back to them). */
  readonly cyclic: ReadonlySet<string>;
}

const NONE: readonly string[] = Object.freeze([]);

/** Computes the graph facts of `steps` (every target must name a step: validation proved it). */
export function buildGraph(steps: ReadonlyMap<string, StepInfo>, entry: string): RulesetGraph {
  const successors = new Map<string, readonly string[]>();
  const predecessors = new Map<string, string[]>();
  const terminalsByCode = new Map<string, string[]>();
  for (const step of steps.values()) {
    const next = [...new Set(stepSuccessors(step))];
    successors.set(step.id, Object.freeze(next));
    for (const to of next) {
      const list = predecessors.get(to);
      if (list === undefined) predecessors.set(to, [step.id]);
      else list.push(step.id);
    }
    if (step.type === 'terminal') {
      const list = terminalsByCode.get(step.code);
      if (list === undefined) terminalsByCode.set(step.code, [step.id]);
      else list.push(step.id);
    }
  }
  for (const list of predecessors.values()) Object.freeze(list);
  for (const list of terminalsByCode.values()) Object.freeze(list);
  return Object.freeze({
    successors,
    predecessors,
    terminalsByCode,
    reachable: closure([entry], successors),
    cyclic: cyclicSteps(steps.keys(), successors, predecessors),
  });
}

/** The steps from which a terminal with one of `codes` can be reached (those terminals included). */
export function stepsReaching(graph: RulesetGraph, codes: Iterable<string>): Set<string> {
  const start: string[] = [];
  for (const code of codes) start.push(...(graph.terminalsByCode.get(code) ?? NONE));
  return closure(start, graph.predecessors);
}

/** Every step reachable from `start` along `edges` (`start` included). */
function closure(start: readonly string[], edges: ReadonlyMap<string, readonly string[]>): Set<string> {
  const seen = new Set<string>(start);
  const queue = [...seen];
  while (queue.length > 0) {
    for (const next of edges.get(queue.pop()!) ?? NONE) {
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return seen;
}

/**
 * The steps on a cycle: the members of strongly connected components with more than one step,
 * and steps that go to themselves. Kosaraju's algorithm, iterative (a long chain of steps must
 * not overflow the call stack).
 */
function cyclicSteps(
  ids: Iterable<string>,
  successors: ReadonlyMap<string, readonly string[]>,
  predecessors: ReadonlyMap<string, readonly string[]>,
): Set<string> {
  const finished: string[] = [];
  const seen = new Set<string>();
  for (const root of ids) {
    if (seen.has(root)) continue;
    seen.add(root);
    const stack: Array<{ id: string; next: number }> = [{ id: root, next: 0 }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const out = successors.get(top.id) ?? NONE;
      if (top.next < out.length) {
        const to = out[top.next++]!;
        if (!seen.has(to)) {
          seen.add(to);
          stack.push({ id: to, next: 0 });
        }
      } else {
        stack.pop();
        finished.push(top.id);
      }
    }
  }
  const cyclic = new Set<string>();
  const assigned = new Set<string>();
  for (let i = finished.length - 1; i >= 0; i--) {
    const root = finished[i]!;
    if (assigned.has(root)) continue;
    assigned.add(root);
    const component = [root];
    for (let j = 0; j < component.length; j++) {
      for (const from of predecessors.get(component[j]!) ?? NONE) {
        if (!assigned.has(from)) {
          assigned.add(from);
          component.push(from);
        }
      }
    }
    if (component.length > 1 || (successors.get(root) ?? NONE).includes(root)) for (const id of component) cyclic.add(id);
  }
  return cyclic;
}
