// Quoting for the `bash -lc` command lines the agent and the driver build.

/** `value` as one bash word. */
export function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
