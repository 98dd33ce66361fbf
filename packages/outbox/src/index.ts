export { Outbox } from './outbox.js';
export { DRAIN_CEILING, OutboxRelay, transportPublisher } from './relay.js';
export type { OutboxPublisher, OutboxRelayOptions, RelayResult } from './relay.js';
export type { OutboxRecord, OutboxStore } from './store.js';
export { MemoryOutboxStore } from './memory-store.js';
export { PostgresOutboxStore } from './postgres-store.js';
export type { PostgresOutboxStoreOptions, SqlClient } from './postgres-store.js';
