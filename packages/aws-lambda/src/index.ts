export { sqsHandler } from './handler.js';
export type { ProcessingApp, SqsLambdaHandler } from './handler.js';
export type { SqsHandlerOptions } from './options.js';
export { queueOfArn } from './record.js';
