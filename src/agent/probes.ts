// Probes the agent runs from inside a pod: health checks (any-http, http-2xx) and "does this port answer".
import http from 'node:http';
import net from 'node:net';
import type { HealthMode } from './replica-protocol.ts';

/** Whether an HTTP answer with `statusCode` is healthy for `mode` (any-http: any answer; http-2xx: 2xx only). */
export function isHealthy(mode: HealthMode, statusCode: number): boolean {
  return mode === 'any-http' || (statusCode >= 200 && statusCode < 300);
}

export function httpHealthy(host: string, port: number, path: string, mode: HealthMode, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host, port, path, agent: false, timeout: timeoutMs }, (response) => {
      response.resume();
      resolve(isHealthy(mode, response.statusCode ?? 0));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

export function portAnswers(host: string, port: number, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: timeoutMs });
    const done = (answered: boolean) => {
      socket.destroy();
      resolve(answered);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}
