// The package.json a workspace is packed with. The repository's manifest
// serves the workspace; a tarball installed in another project needs three
// changes to it:
// - the "source" export condition goes: it points into src/, which is not
//   shipped, and a project that resolves with a "source" condition of its own
//   (a common monorepo setup) would be sent to a file that is not there;
// - a dependency on a sibling workspace is pinned to the exact version packed
//   beside it: the tarballs of one pack are a set, and a binding accepts only
//   its own core, never some other @babelqueue/core (the public registry has
//   none of ours);
// - scripts and devDependencies, meaningful only in the repository, go.

const DEPENDENCY_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies'];
const DROPPED_CONDITION = 'source';

/**
 * The manifest to pack. `siblings` maps each packed workspace's name to its
 * version; a dependency on a workspace not among them (a private one) is an
 * error, since no tarball could satisfy it.
 */
export function publishedManifest(manifest, siblings, privateNames) {
  const { scripts: _scripts, devDependencies: _dev, ...published } = JSON.parse(JSON.stringify(manifest));
  if (published.exports !== undefined) published.exports = withoutCondition(published.exports);
  for (const field of DEPENDENCY_FIELDS) {
    const deps = published[field];
    if (deps === undefined) continue;
    for (const name of Object.keys(deps)) {
      if (privateNames.has(name)) throw new Error(`${manifest.name} depends on ${name}, a private workspace that is not packed`);
      if (siblings.has(name)) deps[name] = siblings.get(name);
    }
  }
  return published;
}

/** Every file the manifest points at (main, types, exports, bin) that is not among `files` (paths relative to the package). */
export function missingTargets(manifest, files) {
  const have = new Set([...files].map((f) => f.replace(/^\.\//, '')));
  return targets(manifest)
    .filter((t) => !t.includes('*'))
    .map((t) => t.replace(/^\.\//, ''))
    .filter((t) => !have.has(t));
}

function targets(manifest) {
  const found = [];
  for (const field of ['main', 'types', 'typings', 'module']) {
    if (typeof manifest[field] === 'string') found.push(manifest[field]);
  }
  if (typeof manifest.bin === 'string') found.push(manifest.bin);
  else if (manifest.bin) found.push(...Object.values(manifest.bin));
  const walk = (value) => {
    if (typeof value === 'string') found.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(manifest.exports);
  return found;
}

function withoutCondition(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value)
    .filter(([key]) => key !== DROPPED_CONDITION)
    .map(([key, inner]) => [key, withoutCondition(inner)]));
}
