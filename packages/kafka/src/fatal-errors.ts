/**
 * Kafka error codes no retry can cure: refused credentials, a denied ACL, a
 * group or session setting the broker rejects. kafkajs reports them as
 * protocol errors with these types.
 */
const FATAL_TYPES = new Set([
  'SASL_AUTHENTICATION_FAILED',
  'ILLEGAL_SASL_STATE',
  'UNSUPPORTED_SASL_MECHANISM',
  'TOPIC_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'INVALID_GROUP_ID',
  'INVALID_SESSION_TIMEOUT',
]);

/** kafkajs error classes of the same kind (a SASL mechanism it refuses locally, a feature it lacks). */
const FATAL_NAMES = new Set(['KafkaJSSASLAuthenticationError', 'KafkaJSNotImplemented']);

/**
 * Whether an error that stopped a consumer is one starting it again cannot
 * help (see FATAL_TYPES). Everything else, kafkajs' "non-retriable" group
 * coordinator look-up that fails while the broker restarts included, is a
 * fault of the moment. The error's `cause` chain is searched.
 */
export function isFatalKafkaError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 10; e = (e as { cause?: unknown }).cause, depth++) {
    if (FATAL_NAMES.has(e.name)) return true;
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string' && FATAL_TYPES.has(type)) return true;
  }
  return false;
}
