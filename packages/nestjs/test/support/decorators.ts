/**
 * Loads a test module of this package compiled by TypeScript with decorator
 * metadata (see typescript-hook.mjs). Each *.test.ts here is a plain entry
 * that imports its cases through this, so the decorated classes are compiled
 * as a NestJS application's are.
 */
import './register-hook.mjs';

/** Imports `specifier` (relative to `parent`) with the hook in place. */
export function importCompiled(specifier: string, parent: string): Promise<unknown> {
  return import(new URL(specifier, parent).href);
}
