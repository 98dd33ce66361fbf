export { BabelQueueModule } from './module.js';
export { BabelQueueClient } from './client.js';
export { OnJob, ON_JOB_METADATA, onJobRegistrations } from './on-job.js';
export type { JobMethod, JobUrn, OnJobOptions, OnJobRegistration } from './on-job.js';
export { BabelQueueWorker } from './worker.js';
export { nestLogger } from './nest-logger.js';
export { DEFAULT_NAME, getBabelQueueClientToken, getBabelQueueOptionsToken, getBabelQueueWorkerToken, InjectBabelQueue } from './tokens.js';
export type { BabelQueueCatalog, RegisteredCatalog } from './catalog.js';
export type { BabelQueueModuleAsyncOptions, BabelQueueModuleOptions, BabelQueueOptions } from './options.js';
