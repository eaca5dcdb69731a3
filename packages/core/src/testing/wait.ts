/**
 * Waiting in tests for a condition rather than for a time: a fixed sleep followed by an exact
 * count fails on a loaded machine (2 shared cores) or passes by luck. The deadline is generous on
 * purpose: it only bounds how long a broken build takes to fail, it is not a speed check (those
 * live in `bench/`).
 */

/** Default deadline of `waitFor`: long enough for a machine under `stress --cpu 2`. */
export const WAIT_MS = 30_000;

/**
 * Resolves once `cond()` is true (it may be async), polling every `everyMs`; throws naming `what`
 * when `timeoutMs` passes first.
 */
export async function waitFor(
  cond: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = WAIT_MS,
  everyMs = 10,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
