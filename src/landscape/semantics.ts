// Rules of svc.yml that the JSON Schema cannot express: needs, replicas against maxReplicas and the plan,
// ports, routes, health checks, mounts, resource sizes and forward targets. They run on the positioned tree
// and skip what is malformed (the schema reports that), so one pass gives every error of a file.
import type { Issue, Segment } from './codes.ts';
import { describePath, listWords, quote } from './messages.ts';
import { checkNeeds, type ServiceEntry } from './needs.ts';
import { leavesAppDirectory, healthPathProblem, routePathProblem } from './paths.ts';
import { planPattern, routePathPattern } from './names.ts';
import { sizeProblem } from './sizes.ts';
import { checkTemplates } from './template-check.ts';
import { servicePlanDefaults, type LandscapeDefaults } from './types.ts';
import { entriesOf, itemsOf, numberOf, stringOf, valueOf, type TemplatedScalar, type YamlNode } from './yaml-tree.ts';

const routePath = new RegExp(routePathPattern);
const planId = new RegExp(planPattern);

const servicePath = (service: ServiceEntry, key: string): Segment[] => ['services', service.name, key];

interface Landscape {
  issues: Issue[];
  /** Paths routed anywhere in the landscape, and where. */
  routes: Map<string, string>;
  /** Public ports of the landscape, and the service that has each. */
  publicPorts: Map<number, string>;
}

/** `templated`: the text values holding templates when the reader collected them; else the tree is searched. */
export function checkSemantics(root: YamlNode, defaults: LandscapeDefaults, templated?: readonly TemplatedScalar[]): Issue[] {
  const issues: Issue[] = [];
  const services: ServiceEntry[] = [];
  for (const entry of entriesOf(valueOf(root, 'services'))) {
    if (entry.value.kind === 'map') services.push({ name: entry.key, node: entry.value });
  }
  const landscape: Landscape = { issues, routes: new Map(), publicPorts: new Map() };
  for (const service of services) {
    const type = stringOf(valueOf(service.node, 'type'));
    if (type === 'steps' || type === 'container') checkRunningService(service, defaults, landscape);
    else if (type === 'forward') checkForwardService(service, landscape);
    else if (type === 'managed') checkResources(service, issues);
  }
  checkNeeds(services, issues);
  checkTemplates(root, services, issues, templated);
  checkNul(root, issues);
  return issues;
}

/** A NUL written as an escape ("\0", "\x00", "\u0000") reaches no command, variable or stored text. */
function checkNul(root: YamlNode, issues: Issue[]): void {
  const pending: Array<[YamlNode, Segment[]]> = [[root, []]];
  const refuse = (offset: number, path: Segment[], what: string) =>
    issues.push({ code: 'pattern', offset, path, message: `${what} holds a NUL character (U+0000), which no text in svc.yml may hold` });
  while (pending.length > 0) {
    const [node, path] = pending.pop()!;
    if (node.kind === 'scalar') {
      if (typeof node.value === 'string' && node.value.includes('\u0000')) refuse(node.offset, path, describePath(path));
    } else if (node.kind === 'seq') {
      node.items.forEach((item, index) => pending.push([item, [...path, index]]));
    } else {
      for (const entry of node.entries) {
        if (entry.key.includes('\u0000')) refuse(entry.keyOffset, [...path, entry.key], 'a key');
        else pending.push([entry.value, [...path, entry.key]]);
      }
    }
  }
}

function checkRunningService(service: ServiceEntry, defaults: LandscapeDefaults, landscape: Landscape): void {
  checkReplicas(service, defaults, landscape.issues);
  const ports = checkPorts(service, landscape);
  checkHealth(service, ports, landscape.issues);
  itemsOf(valueOf(service.node, 'mounts')).forEach((mount, index) => {
    const from = valueOf(mount, 'from');
    const path = stringOf(from);
    if (from === undefined || path === undefined || path.startsWith('/') || !leavesAppDirectory(path)) return;
    landscape.issues.push({
      code: 'path-escape',
      offset: from.offset,
      path: ['services', service.name, 'mounts', index, 'from'],
      message: `mounts[${index}].from of service ${service.name} is ${quote(path)}, which leaves /data/app; mount only what lies inside it`,
    });
  });
}

function checkReplicas(service: ServiceEntry, defaults: LandscapeDefaults, issues: Issue[]): void {
  const planNode = valueOf(service.node, 'plan');
  const named = stringOf(planNode);
  const plan = named ?? defaults.servicePlan;
  const listed = Object.hasOwn(defaults.servicePlans, plan);
  if (named !== undefined && planNode !== undefined && defaults.servicePlansComplete && !listed && planId.test(named)) {
    const plans = Object.keys(defaults.servicePlans);
    issues.push({ code: 'unknown-plan', offset: planNode.offset, path: servicePath(service, 'plan'), message: `plan ${quote(named)} of service ${service.name} is not a service plan of this installation; choose ${listWords(plans)}` });
    return;
  }
  const planMax = servicePlanDefaults(defaults, plan).maxReplicas;
  const maxNode = valueOf(service.node, 'maxReplicas');
  const max = boundedInteger(maxNode);
  if (maxNode !== undefined && max !== undefined && listed && max > planMax) {
    issues.push({ code: 'out-of-range', offset: maxNode.offset, path: servicePath(service, 'maxReplicas'), message: `maxReplicas of service ${service.name} is ${max}, more than plan ${plan} allows (${planMax})` });
    return;
  }
  const replicasNode = valueOf(service.node, 'replicas');
  const replicas = boundedInteger(replicasNode);
  if (replicasNode === undefined || replicas === undefined || (max === undefined && !listed)) return;
  const limit = max ?? planMax;
  if (replicas <= limit) return;
  const which = max === undefined ? `the default maxReplicas of plan ${plan} (${limit})` : `maxReplicas (${limit})`;
  issues.push({ code: 'out-of-range', offset: replicasNode.offset, path: servicePath(service, 'replicas'), message: `replicas of service ${service.name} is ${replicas}, more than ${which}` });
}

/** An integer within 1..100, or undefined when the schema refuses the value. */
function boundedInteger(node: YamlNode | undefined): number | undefined {
  const value = numberOf(node);
  return value !== undefined && Number.isInteger(value) && value >= 1 && value <= 100 ? value : undefined;
}

/** Checks ports and their routes; returns the port numbers of the service. */
function checkPorts(service: ServiceEntry, landscape: Landscape): Set<number> {
  const ports = new Set<number>();
  itemsOf(valueOf(service.node, 'ports')).forEach((item, index) => {
    const portNode = valueOf(item, 'port');
    const port = numberOf(portNode);
    if (portNode === undefined || port === undefined || !Number.isInteger(port) || port < 1 || port > 65535) return;
    if (ports.has(port)) {
      landscape.issues.push({ code: 'port-duplicate', offset: portNode.offset, path: portPath(service, index), message: `port ${port} is listed twice in service ${service.name}; list each port once` });
    }
    ports.add(port);
    const publicNode = valueOf(item, 'public');
    if (publicNode?.kind === 'scalar' && publicNode.value === true) {
      const owner = landscape.publicPorts.get(port);
      if (owner !== undefined) {
        const message = `port ${port} of service ${service.name} is public, but service ${owner} already makes port ${port} public; public ports are unique in a landscape`;
        landscape.issues.push({ code: 'public-port-duplicate', offset: portNode.offset, path: portPath(service, index), message });
      } else landscape.publicPorts.set(port, service.name);
    }
    const routes = valueOf(item, 'routes');
    if (routes !== undefined) checkRoutes(routes, ['services', service.name, 'ports', index, 'routes'], `port ${port} of service ${service.name}`, landscape);
  });
  return ports;
}

const portPath = (service: ServiceEntry, index: number): Segment[] => ['services', service.name, 'ports', index, 'port'];

function checkRoutes(routes: YamlNode | undefined, base: Segment[], owner: string, landscape: Landscape): void {
  itemsOf(routes).forEach((route, index) => {
    const node = valueOf(route, 'path');
    const path = stringOf(node);
    if (node === undefined || path === undefined || path.length > 256 || !routePath.test(path)) return;
    const problem = routePathProblem(path);
    if (problem !== undefined) {
      landscape.issues.push({ code: 'invalid-path', offset: node.offset, path: [...base, index, 'path'], message: `route path ${quote(path)} of ${owner} ${problem}` });
      return;
    }
    const earlier = landscape.routes.get(path);
    if (earlier !== undefined) {
      landscape.issues.push({ code: 'route-duplicate', offset: node.offset, path: [...base, index, 'path'], message: `route ${path} of ${owner} is already routed to ${earlier}; each path goes to one place` });
    } else landscape.routes.set(path, owner);
  });
}

function checkHealth(service: ServiceEntry, ports: Set<number>, issues: Issue[]): void {
  const health = valueOf(service.node, 'health');
  const portNode = valueOf(health, 'port');
  const port = numberOf(portNode);
  if (portNode !== undefined && port !== undefined && Number.isInteger(port) && port >= 1 && port <= 65535 && !ports.has(port)) {
    const listed = ports.size === 0 ? '; it lists no ports' : ` (${[...ports].join(', ')})`;
    issues.push({ code: 'port-not-declared', offset: portNode.offset, path: ['services', service.name, 'health', 'port'], message: `health check port ${port} is not among the ports of service ${service.name}${listed}` });
  }
  const pathNode = valueOf(health, 'path');
  const path = stringOf(pathNode);
  if (pathNode === undefined || path === undefined || !path.startsWith('/') || path.length > 256) return;
  const problem = healthPathProblem(path);
  if (problem !== undefined) {
    issues.push({ code: 'invalid-path', offset: pathNode.offset, path: ['services', service.name, 'health', 'path'], message: `health path ${quote(path)} of service ${service.name} ${problem}` });
  }
}

function checkForwardService(service: ServiceEntry, landscape: Landscape): void {
  checkRoutes(valueOf(service.node, 'routes'), ['services', service.name, 'routes'], `service ${service.name}`, landscape);
  const targetNode = valueOf(service.node, 'target');
  const target = stringOf(targetNode);
  if (targetNode === undefined || target === undefined || target.includes('${{') || !/^https?:\/\//.test(target)) return;
  const problem = urlProblem(target);
  if (problem !== undefined) {
    landscape.issues.push({ code: 'invalid-url', offset: targetNode.offset, path: ['services', service.name, 'target'], message: `target of service ${service.name} ${problem}` });
  }
}

function urlProblem(target: string): string | undefined {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return `is ${quote(target)}, which is not a valid URL`;
  }
  if (url.hostname === '') return 'has no host';
  if (url.username !== '' || url.password !== '') return 'holds a user name or password; keep credentials out of the file';
  return undefined;
}

function checkResources(service: ServiceEntry, issues: Issue[]): void {
  const resources = valueOf(service.node, 'resources');
  for (const entry of entriesOf(resources)) {
    const text = stringOf(entry.value);
    if (text === undefined) continue;
    const problem = sizeProblem(text);
    if (problem === undefined) continue;
    const path = ['services', service.name, 'resources', entry.key];
    issues.push({ code: 'invalid-size', offset: entry.value.offset, path, message: `${describePath(path)} is ${quote(text)}, which ${problem}` });
  }
}
