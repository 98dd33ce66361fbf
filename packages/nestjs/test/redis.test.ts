import { importCompiled } from './support/decorators.js';

const { labSuite } = await importCompiled('./cases/lab.ts', import.meta.url) as typeof import('./cases/lab.js');
labSuite('redis');
