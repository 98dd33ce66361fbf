export { PayloadSchemas } from './payload-schemas.js';
export type { PayloadSchemaSource, RegistryEntry } from './payload-schemas.js';
export { InvalidPayloadError } from './invalid-payload-error.js';
export type { PayloadViolation, PayloadViolationReason } from './violation.js';
