/**
 * Resolves once `predicate` holds, polling every `everyMs`, or rejects after
 * `timeoutMs` naming `what`. Tests wait for an event with this instead of a
 * fixed sleep: under load a fixed sleep either wastes time or is too short.
 */
export async function until(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
  what = 'condition',
  everyMs = 25,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
