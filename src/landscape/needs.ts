// `needs` between services: unknown names, a service needing itself, and cycles (with the cycle's path).
import type { Issue, Segment } from './codes.ts';
import { closestName } from './messages.ts';
import { editorServiceName, isServiceName } from './names.ts';
import { itemsOf, stringOf, valueOf, type MapNode } from './yaml-tree.ts';

export interface ServiceEntry {
  name: string;
  node: MapNode;
}

interface Need {
  name: string;
  offset: number;
  index: number;
}

export function checkNeeds(services: readonly ServiceEntry[], issues: Issue[]): void {
  const index = new Map(services.map((service, i) => [service.name, i]));
  const edges: Need[][] = services.map(() => []);
  for (let i = 0; i < services.length; i++) {
    const service = services[i];
    const needs = itemsOf(valueOf(service.node, 'needs'));
    const seen: string[] = [];
    for (let position = 0; position < needs.length; position++) {
      const item = needs[position];
      const name = stringOf(item);
      // Malformed names, ide and duplicates are the schema's errors.
      if (name === undefined || !isServiceName(name) || name === editorServiceName || seen.includes(name)) continue;
      seen.push(name);
      const path: Segment[] = ['services', service.name, 'needs', position];
      if (name === service.name) {
        issues.push({ code: 'needs-cycle', offset: item.offset, path, message: `service ${name} needs itself; remove ${name} from its needs` });
      } else if (!index.has(name)) {
        const typo = closestName(name, index.keys());
        const hint = typo === undefined ? '' : `; did you mean ${typo}?`;
        issues.push({ code: 'needs-unknown', offset: item.offset, path, message: `service ${service.name} needs ${name}, which is not a service of this file${hint}` });
      } else {
        edges[i].push({ name, offset: item.offset, index: position });
      }
    }
  }
  for (const component of cyclicComponents(edges.map((needs) => needs.map((need) => index.get(need.name)!)))) {
    reportCycle(services, edges, index, component, issues);
  }
}

/** One error per group of services that need each other, at the need that starts the shortest cycle. */
function reportCycle(services: readonly ServiceEntry[], edges: Need[][], index: Map<string, number>, component: number[], issues: Issue[]): void {
  const members = new Set(component);
  const start = Math.min(...component);
  const previous = new Map<number, number>();
  const queue = [start];
  let closing = -1;
  for (let head = 0; head < queue.length && closing === -1; head++) {
    const at = queue[head];
    for (const need of edges[at]) {
      const next = index.get(need.name)!;
      if (!members.has(next)) continue;
      if (next === start) {
        closing = at;
        break;
      }
      if (!previous.has(next)) {
        previous.set(next, at);
        queue.push(next);
      }
    }
  }
  const cycle = [start];
  for (let at = closing; at !== start; at = previous.get(at)!) cycle.splice(1, 0, at);
  const names = [...cycle, start].map((i) => services[i].name);
  const first = edges[start].find((need) => need.name === names[1])!;
  issues.push({
    code: 'needs-cycle',
    offset: first.offset,
    path: ['services', services[start].name, 'needs', first.index],
    message: `services need each other in a cycle: ${names.join(' → ')}; remove one of these needs`,
  });
}

/** Strongly connected components with more than one member (Tarjan, without recursion). */
export function cyclicComponents(graph: number[][]): number[][] {
  const order = new Array<number>(graph.length).fill(-1);
  const low = new Array<number>(graph.length).fill(0);
  const onStack = new Array<boolean>(graph.length).fill(false);
  const stack: number[] = [];
  const components: number[][] = [];
  let counter = 0;
  for (let root = 0; root < graph.length; root++) {
    if (order[root] !== -1) continue;
    const work: { node: number; edge: number }[] = [{ node: root, edge: 0 }];
    order[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = true;
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const next = graph[frame.node][frame.edge++];
      if (next !== undefined) {
        if (order[next] === -1) {
          order[next] = low[next] = counter++;
          stack.push(next);
          onStack[next] = true;
          work.push({ node: next, edge: 0 });
        } else if (onStack[next]) low[frame.node] = Math.min(low[frame.node], order[next]);
        continue;
      }
      work.pop();
      if (work.length > 0) low[work[work.length - 1].node] = Math.min(low[work[work.length - 1].node], low[frame.node]);
      if (low[frame.node] !== order[frame.node]) continue;
      const component: number[] = [];
      let member: number;
      do {
        member = stack.pop()!;
        onStack[member] = false;
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1) components.push(component.sort((a, b) => a - b));
    }
  }
  return components.sort((a, b) => a[0] - b[0]);
}
