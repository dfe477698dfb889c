// Isolation on the real test cluster through the NetworkPolicies the Kubernetes driver writes (kube-router enforces
// them there): a workspace's pods are out of reach of another team's pods and of another workspace of the same team,
// while svc (on the host) reaches them. Runs when the test cluster is configured (test/helpers/test-cluster.ts);
// otherwise one skipped test says why.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { builtInPlans } from '../src/capacity/plans.ts';
import { ExecChannel, parseFrame, readExecStatus } from '../src/core/channel-protocol.ts';
import type { EditorAddress, RuntimeDriver, WorkspaceRef } from '../src/runtime/driver.ts';
import { Cluster, loadKubeConfig } from '../src/runtime/kubernetes/cluster.ts';
import { createKubernetesDriver } from '../src/runtime/kubernetes/driver.ts';
import { answersHttp } from '../src/runtime/local/agent-client.ts';
import { removeTestInstallation, testClusterMissing, testClusterSettings, testInstallation } from './helpers/test-cluster.ts';

const missing = testClusterMissing();
if (missing) test(`kubernetes isolation not run: ${missing}`, { skip: missing }, () => undefined);
else {
  const installation = testInstallation('isolation');
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-kube-isolation-'));
  let driver: RuntimeDriver | undefined;
  const started: WorkspaceRef[] = [];
  after(async () => {
    for (const w of started) await driver?.stopWorkspace(w).catch(() => undefined);
    await driver?.close();
    await removeTestInstallation(installation);
    await rm(scratch, { recursive: true, force: true });
  });
  const base = 700_000 + Math.floor(Math.random() * 90_000) * 4;
  const ref = (n: number, teamId: number): WorkspaceRef => ({ id: base + n, teamId, uid: 3_200_000 + ((base + n) % 100_000), storageGib: 1 });

  const start = async (w: WorkspaceRef): Promise<EditorAddress> => {
    await driver!.createVolume(w);
    started.push(w);
    await driver!.prepareEmptyVolume(w, () => undefined);
    return driver!.startEditor(w, () => undefined);
  };

  /** Runs `script` in the editor pod of `w`; its stdout. */
  const run = async (w: WorkspaceRef, script: string): Promise<{ stdout: string; status?: { exitCode: number } | { error: string } }> => {
    const socket = await driver!.openExec(w, { kind: 'editor' }, { command: ['sh', '-c', script], tty: false, stdin: false, env: {} });
    const frames: Array<{ channel: number; data: Buffer }> = [];
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.on('message', (message: Buffer) => frames.push(parseFrame(message)!));
    socket.resume();
    await closed;
    const status = frames.find((f) => f.channel === ExecChannel.status);
    return {
      stdout: Buffer.concat(frames.filter((f) => f.channel === ExecChannel.stdout).map((f) => f.data)).toString(),
      status: status ? readExecStatus(status.data) : undefined,
    };
  };

  /**
   * From the pod of `from`, whether `to` answers HTTP: "reached" when any try connects; "refused" when none of the
   * tries does. Policies are in place before a pod is Ready, but kube-router applies them on its own watch: the first
   * tries may come before; refused is only said when the last 5 tries in a row failed (within 30 s).
   */
  const reach = async (from: WorkspaceRef, to: EditorAddress): Promise<string> => {
    const url = `http://${to.host}:${to.port}/`;
    const script = `fails=0; for i in $(seq 1 60); do if curl -s -o /dev/null -m 1 "${url}"; then fails=0; else fails=$((fails+1)); fi; ` +
      'if [ "$fails" -ge 5 ]; then echo refused; exit 0; fi; sleep 0.5; done; echo reached';
    return (await run(from, script)).stdout.trim();
  };

  test('kubernetes: a workspace is out of reach of another team\'s pods and of another workspace of its team; svc reaches it', async () => {
    driver = await createKubernetesDriver({ cluster: new Cluster(loadKubeConfig()), settings: testClusterSettings(installation), plans: builtInPlans, dataDir: scratch });
    const own = ref(1, 881_001);
    const sameTeam = ref(2, 881_001);
    const otherTeam = ref(3, 881_002);
    const [address] = await Promise.all([start(own), start(sameTeam), start(otherTeam)]);
    assert.equal(await answersHttp(address.host, address.port), true, 'svc on the host reaches the workspace');
    // the pod reaches itself (its own network) — the probe works at all
    assert.match((await run(own, `curl -s -o /dev/null -w '%{http_code}' -m 5 http://${address.host}:${address.port}/`)).stdout, /^\d{3}$/);
    const [fromOtherTeam, fromSameTeam] = await Promise.all([reach(otherTeam, address), reach(sameTeam, address)]);
    assert.equal(fromOtherTeam, 'refused', "another team's pod reaches the workspace");
    assert.equal(fromSameTeam, 'refused', 'another workspace of the same team reaches the workspace');
  });
}
