export { main } from './main.js';
export { nodeIo } from './io.js';
export type { CliIo } from './io.js';
export { EXIT, OperationalError, UsageError } from './errors.js';
