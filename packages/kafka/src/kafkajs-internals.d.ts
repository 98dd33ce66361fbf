// kafkajs ships types for its public API only; the request queue is patched by request-queue-timer.ts.
declare module 'kafkajs/src/network/requestQueue/index.js' {
  const RequestQueue: { prototype: object };
  export default RequestQueue;
}
