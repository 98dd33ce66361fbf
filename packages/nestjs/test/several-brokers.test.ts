import { importCompiled } from './support/decorators.js';

await importCompiled('./cases/several-brokers.ts', import.meta.url);
