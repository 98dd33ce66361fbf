import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (tests run from source). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/** Our own conformance tables (`conformance/` in the repository). */
export const ownConformance = join(repoRoot, 'conformance');

/** The shared cross-SDK suite, when this machine has it (`../shared/conformance`). */
export const sharedConformance: string | undefined = (() => {
  const dir = resolve(repoRoot, '../shared/conformance');
  return existsSync(join(dir, 'manifest.json')) ? dir : undefined;
})();
