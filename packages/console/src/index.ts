export { startConsole } from './server.js';
export type { RunningConsole } from './server.js';
export type { ConsoleOptions } from './options.js';
export type { RecordDetail, RecordKind, RecordSummary } from './records.js';
export type { ActionItem, ActionResult } from './actions.js';
