export { otelInstrumentation } from './instrumentation.js';
export type { OtelOptions } from './instrumentation.js';
export { otelTraceIdOf, syntheticParentSpanId, uuidOfTraceId } from './trace-ids.js';
export { formatTraceparent, parseTraceparent, TRACEPARENT, TRACESTATE } from './traceparent.js';
export { METRIC } from './metrics.js';
export { ATTR, SYSTEM } from './attributes.js';
