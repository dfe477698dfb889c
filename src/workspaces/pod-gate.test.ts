import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openGate, PodGates, stepGate, type GateEffect, type GateEvent, type GateState, type PodWork } from './pod-gate.ts';

const request = (id: number, work: PodWork): GateEvent => ({ type: 'request', ticket: { id, work } });
const release = (id: number): GateEvent => ({ type: 'release', id });

function replay(events: GateEvent[]): { state: GateState; effects: GateEffect[] } {
  return events.reduce<{ state: GateState; effects: GateEffect[] }>(
    (soFar, event) => {
      const next = stepGate(soFar.state, event);
      return { state: next.state, effects: [...soFar.effects, ...next.effects] };
    },
    { state: openGate, effects: [] },
  );
}

test('an open gate lets the first one through; the next waits and goes through on release', () => {
  const { state, effects } = replay([request(1, 'stop'), request(2, 'start'), release(1)]);
  assert.deepEqual(effects, [{ type: 'grant', id: 1 }, { type: 'grant', id: 2 }]);
  assert.deepEqual(state, { holder: { id: 2, work: 'start' }, waiting: [] });
  assert.deepEqual(stepGate(state, release(2)).state, { holder: undefined, waiting: [] });
});

test('a stop is refused at once while a start holds the gate or waits for it: it never waits behind a pod start', () => {
  assert.deepEqual(replay([request(1, 'start'), request(2, 'stop')]).effects, [{ type: 'grant', id: 1 }, { type: 'refuse', id: 2 }]);
  const startWaiting = replay([request(1, 'stop'), request(2, 'start'), request(3, 'stop')]);
  assert.deepEqual(startWaiting.effects, [{ type: 'grant', id: 1 }, { type: 'refuse', id: 3 }]);
  assert.deepEqual(startWaiting.state.waiting, [{ id: 2, work: 'start' }]);
});

test('stops wait behind a stop, in order; a start waits behind them', () => {
  const { state, effects } = replay([request(1, 'stop'), request(2, 'stop'), request(3, 'start'), release(1), release(2)]);
  assert.deepEqual(effects, [{ type: 'grant', id: 1 }, { type: 'grant', id: 2 }, { type: 'grant', id: 3 }]);
  assert.equal(state.holder?.id, 3);
});

test('a release by someone who does not hold the gate changes nothing', () => {
  const held = replay([request(1, 'stop'), request(2, 'stop')]).state;
  assert.deepEqual(stepGate(held, release(2)), { state: held, effects: [] });
});

test('PodGates: a stop asked during a start answers 409 before the start ends; the start then ends normally', async () => {
  const gates = new PodGates();
  let finishStart!: () => void;
  const start = gates.run(7, 'start', () => new Promise<string>((resolve) => (finishStart = () => resolve('started'))));
  const stop = await gates.run(7, 'stop', async () => 'stopped').then(
    () => 'ran',
    (error: { status?: number; detail?: string }) => `${error.status} ${error.detail}`,
  );
  assert.equal(stop, '409 The workspace is busy (waking up); try again when it has finished.');
  finishStart();
  assert.equal(await start, 'started');
  assert.equal(await gates.run(7, 'stop', async () => 'stopped'), 'stopped', 'the gate is open again');
});

test('PodGates: a failing work releases the gate; other workspaces are not held', async () => {
  const gates = new PodGates();
  await assert.rejects(gates.run(1, 'stop', async () => Promise.reject(new Error('boom'))), /boom/);
  let release!: () => void;
  const holding = gates.run(1, 'start', () => new Promise<void>((resolve) => (release = resolve)));
  assert.equal(await gates.run(2, 'stop', async () => 'other workspace'), 'other workspace');
  release();
  await holding;
});
