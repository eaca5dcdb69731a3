/** Integer settings from the environment (core reads no process globals: callers pass `env`). */

/** An integer setting of at least `min`, or undefined when unset; anything else stops start-up. */
export function intSetting(env: Record<string, string | undefined>, name: string, min: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name} must be an integer of at least ${min}, got ${JSON.stringify(raw)}`);
  return value;
}

/** An integer setting of at least `min`, or `dflt` when unset. */
export function intFromEnv(env: Record<string, string | undefined>, name: string, dflt: number, min: number): number {
  return intSetting(env, name, min) ?? dflt;
}
