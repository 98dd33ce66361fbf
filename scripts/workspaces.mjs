// The workspaces the root package.json lists, read from it directly (npm's
// own `npm query .workspace` leaves out one that is listed but not installed
// yet). An entry is a folder, or a pattern with `*` standing for one folder
// name (`packages/*`).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Each workspace: its folder relative to `root` (`location`), absolute `path`, and package.json. */
export function workspaces(root) {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const entries = Array.isArray(manifest.workspaces) ? manifest.workspaces : manifest.workspaces?.packages ?? [];
  const locations = new Set(entries.flatMap((entry) => expand(root, entry.replace(/^\.\//, '').replace(/\/$/, '').split('/'))));
  return [...locations].sort().map((location) => {
    const path = join(root, location);
    return { location, path, manifest: JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) };
  });
}

function expand(root, segments, at = '') {
  if (segments.length === 0) return existsSync(join(root, at, 'package.json')) ? [at] : [];
  const [segment, ...rest] = segments;
  if (segment === '**' || /[?[\]{}!]/.test(segment)) throw new Error(`workspace pattern "${segments.join('/')}": only * for one folder name is supported`);
  if (!segment.includes('*')) return expand(root, rest, at === '' ? segment : `${at}/${segment}`);
  const pattern = new RegExp(`^${segment.split('*').map((s) => s.replace(/[.+^$()|\\]/g, '\\$&')).join('[^/]*')}$`);
  const dir = join(root, at);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && pattern.test(d.name))
    .flatMap((d) => expand(root, rest, at === '' ? d.name : `${at}/${d.name}`));
}
