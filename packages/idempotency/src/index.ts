export { RedisIdempotencyStore } from './redis-store.js';
export type { RedisCommandClient, RedisIdempotencyStoreOptions } from './redis-store.js';
export { PostgresIdempotencyStore } from './postgres-store.js';
export type { PostgresIdempotencyStoreOptions, SqlClient } from './postgres-store.js';
