// A module load hook for this package's tests: its TypeScript files (src/ and
// test/) are compiled by TypeScript with the package's tsconfig.json, as a
// NestJS application is (nest build, tsc). tsx, which runs every other test,
// compiles with esbuild: it takes experimentalDecorators from a tsconfig but
// never emits decorator metadata (design:paramtypes), without which Nest cannot
// inject a constructor parameter by its type. tsx still resolves the files.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
const ts = require('typescript');

const config = ts.getParsedCommandLineOfConfigFile(join(pkg, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
const compilerOptions = {
  ...config.options,
  noEmit: false,
  declaration: false,
  sourceMap: false,
  inlineSourceMap: true,
  inlineSources: true,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
};

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:')) return nextLoad(url, context);
  const file = fileURLToPath(url);
  if (!file.startsWith(`${pkg}/`) || !file.endsWith('.ts') || file.includes('/node_modules/')) return nextLoad(url, context);
  const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions, fileName: file });
  return { format: 'module', source: outputText, shortCircuit: true };
}
