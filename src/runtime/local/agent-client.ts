// The driver's side of the agent protocol: ask an agent for its status over HTTP, and check that an editor answers.
import http from 'node:http';
import { AGENT_STATUS_PATH, parseAgentStatus, type AgentStatus } from '../../agent/protocol.ts';
import { parseReplicaStatus, type ReplicaAgentStatus } from '../../agent/replica-protocol.ts';

/** The agent's status, or undefined when it does not answer (yet) or answers something else. */
export function fetchAgentStatus(host: string, port: number, timeoutMs = 1500): Promise<AgentStatus | undefined> {
  return fetchStatus(host, port, timeoutMs, parseAgentStatus);
}

/** The agent's status at its next change (its editor answered or exited), or after `waitMs` (status-server.ts). */
export function awaitAgentChange(host: string, port: number, waitMs: number): Promise<AgentStatus | undefined> {
  return fetchStatus(host, port, waitMs + 1500, parseAgentStatus, `${AGENT_STATUS_PATH}?wait=${waitMs}`);
}

/** A replica agent's status, or undefined when it does not answer (yet) or answers something else. */
export function fetchReplicaStatus(host: string, port: number, timeoutMs = 1000): Promise<ReplicaAgentStatus | undefined> {
  return fetchStatus(host, port, timeoutMs, parseReplicaStatus);
}

function fetchStatus<T>(host: string, port: number, timeoutMs: number, parse: (body: unknown) => T | undefined, path = AGENT_STATUS_PATH): Promise<T | undefined> {
  return new Promise((resolve) => {
    const request = http.get({ host, port, path, agent: false, timeout: timeoutMs }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        try {
          resolve(response.statusCode === 200 ? parse(JSON.parse(body)) : undefined);
        } catch {
          resolve(undefined);
        }
      });
      response.on('error', () => resolve(undefined));
      // A response cut off by the timeout may end without 'end' or 'error': a caller must never wait forever.
      response.on('close', () => resolve(undefined));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(undefined));
  });
}

/** Whether anything answers HTTP at host:port. */
export function answersHttp(host: string, port: number, timeoutMs = 1500): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host, port, path: '/', agent: false, timeout: timeoutMs }, (response) => {
      response.resume();
      resolve(true);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}
