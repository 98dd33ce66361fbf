import { importCompiled } from './support/decorators.js';

await importCompiled('./cases/module.ts', import.meta.url);
