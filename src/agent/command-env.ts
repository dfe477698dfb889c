// The environment of what the agent runs (exec streams, steps of a replica).

/** The environment the agent's commands get: its own, less the settings the driver gave the agent (`SVC_*`). */
export function commandEnv(env: NodeJS.ProcessEnv, extra: Record<string, string> = {}, dropSettings = true): Record<string, string> {
  const kept = Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && !(dropSettings && entry[0].startsWith('SVC_')));
  return { ...Object.fromEntries(kept), ...extra };
}
