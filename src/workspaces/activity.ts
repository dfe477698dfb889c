// What keeps a workspace awake and what put it to sleep (issue 40): the kinds of use that count for the idle
// timeout, and the sentence a workspace reads with them ("asleep since 14:02 UTC: nobody used it for 30 min; last
// use: dev URL at 13:31 UTC"). Pure: the store records the uses, the API and console show them.
import { sleepReasonTexts, type SleepReason } from './lifecycle.ts';

export const useKinds = ['dev-url', 'service-address', 'custom-domain', 'editor', 'terminal', 'ssh', 'exec', 'port-forward', 'action'] as const;
export type UseKind = (typeof useKinds)[number];

/** How people name each kind of use. */
export const useKindTexts: Record<UseKind, string> = {
  'dev-url': 'dev URL',
  'service-address': 'service address',
  'custom-domain': 'custom domain',
  editor: 'editor',
  terminal: 'terminal',
  ssh: 'ssh',
  exec: 'exec',
  'port-forward': 'port-forward',
  action: 'action',
};

/** One use of a workspace: its kind and where (a host, a service or port, an action; '' when none). */
export interface Use {
  kind: UseKind;
  address: string;
}

export interface RecordedUse extends Use {
  firstAt: Date;
  lastAt: Date;
}

/** Who keeps the workspace awake and until when, as recorded (a past `until` has ended by itself). */
export interface KeepAwake {
  until: Date;
  askedBy: number | null;
  askedByEmail: string | null;
  askedAt: Date;
}

/** How long a keep-awake may last at most (asked again to go on). */
export const KEEP_AWAKE_MAX_SECONDS = 24 * 3600;
/** Uses are written at most once per this interval per workspace and use (each server keeps the rest in memory). */
export const USE_WRITE_INTERVAL_MS = 60_000;

export interface ActivityFacts {
  state: string;
  sleepReason: string | null;
  sleptAt: Date | null;
  idleTimeoutMinutes: number;
  lastActivityAt: Date | null;
  lastUse?: RecordedUse;
  keepAwake?: KeepAwake;
}

/** `14:02 UTC`: times in the sentence (clients that know the reader's zone build their own from the fields). */
export function clockTime(at: Date): string {
  return `${at.toISOString().slice(11, 16)} UTC`;
}

/** A keep-awake still in force at `now`. */
export function keepAwakeInForce(keepAwake: KeepAwake | undefined, now: Date): keepAwake is KeepAwake {
  return keepAwake !== undefined && keepAwake.until.getTime() > now.getTime();
}

function minutes(count: number): string {
  return count % 60 === 0 && count >= 60 ? `${count / 60} h` : `${count} min`;
}

function askedBy(keepAwake: KeepAwake): string {
  return keepAwake.askedByEmail ? ` by ${keepAwake.askedByEmail}` : '';
}

/** Why a sleeping workspace sleeps: "nobody used it for 30 min" (and the keep-awake that held it until then). */
export function asleepReasonText(facts: ActivityFacts): string {
  if (facts.sleepReason !== 'idle') return sleepReasonTexts[facts.sleepReason as SleepReason] ?? 'put to sleep';
  const reason = `nobody used it for ${minutes(facts.idleTimeoutMinutes)}`;
  const keepAwake = facts.keepAwake;
  const idleAt = (facts.lastActivityAt?.getTime() ?? 0) + facts.idleTimeoutMinutes * 60_000;
  // a keep-awake that held it past its idle timeout and ended before it slept
  const held = keepAwake && facts.sleptAt && keepAwake.until.getTime() <= facts.sleptAt.getTime() && keepAwake.until.getTime() > idleAt;
  return held ? `${reason}, then its keep-awake${askedBy(keepAwake)} ended at ${clockTime(keepAwake.until)}` : reason;
}

function lastUseText(use: RecordedUse | undefined): string {
  if (!use) return 'no use recorded';
  return `last use: ${useKindTexts[use.kind]}${use.address ? ` (${use.address})` : ''} at ${clockTime(use.lastAt)}`;
}

/** Why the workspace is awake or asleep, in a sentence. */
export function activityText(facts: ActivityFacts, now: Date): string {
  const last = lastUseText(facts.lastUse);
  if (facts.state === 'sleeping') return `asleep${facts.sleptAt ? ` since ${clockTime(facts.sleptAt)}` : ''}: ${asleepReasonText(facts)}; ${last}`;
  if (facts.state !== 'running') return last;
  if (keepAwakeInForce(facts.keepAwake, now)) return `kept awake until ${clockTime(facts.keepAwake.until)}${askedBy(facts.keepAwake)}; ${last}`;
  const sleepsAt = idleSleepAt(facts);
  return sleepsAt ? `awake: sleeps at ${clockTime(sleepsAt)} if nobody uses it; ${last}` : `awake; ${last}`;
}

/** The workspace's `activity` as the API shows it. */
export function activityView(facts: ActivityFacts, now: Date) {
  const sleeping = facts.state === 'sleeping';
  return {
    text: activityText(facts, now),
    last_use_at: facts.lastUse?.lastAt.toISOString(),
    last_use_kind: facts.lastUse?.kind,
    last_use_address: facts.lastUse?.address || undefined,
    asleep_since: sleeping ? facts.sleptAt?.toISOString() : undefined,
    asleep_reason_text: sleeping ? asleepReasonText(facts) : undefined,
    sleeps_at: idleSleepAt(facts)?.toISOString(),
  };
}

/** A keep-awake in force as the API shows it; undefined when none is. */
export function keepAwakeView(keepAwake: KeepAwake | undefined, now: Date) {
  if (!keepAwakeInForce(keepAwake, now)) return undefined;
  return { until: keepAwake.until.toISOString(), asked_by: keepAwake.askedBy ?? undefined, asked_by_email: keepAwake.askedByEmail ?? undefined, asked_at: keepAwake.askedAt.toISOString() };
}

/** When an idle workspace goes to sleep: its timeout after the last use, or when its keep-awake ends if later. */
export function idleSleepAt(facts: Pick<ActivityFacts, 'state' | 'lastActivityAt' | 'idleTimeoutMinutes' | 'keepAwake'>): Date | undefined {
  if (facts.state !== 'running' || !facts.lastActivityAt) return undefined;
  const idle = facts.lastActivityAt.getTime() + facts.idleTimeoutMinutes * 60_000;
  return new Date(Math.max(idle, facts.keepAwake?.until.getTime() ?? 0));
}
