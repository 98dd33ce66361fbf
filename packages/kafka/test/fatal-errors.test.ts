import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import kafkajs from 'kafkajs';
import { isFatalKafkaError } from '../src/fatal-errors.js';

// kafkajs is CommonJS and builds its exports from a spread Node cannot name for ESM.
const { KafkaJSGroupCoordinatorNotFound, KafkaJSNonRetriableError, KafkaJSProtocolError, KafkaJSSASLAuthenticationError, KafkaJSConnectionError } = kafkajs;

/** A kafkajs error built as kafkajs builds it: its typings lag the constructors, which take a message and `{ cause }`. */
const make = (Class: unknown, ...args: unknown[]) => new (Class as new (...a: unknown[]) => Error)(...args);

/** A protocol error as kafkajs builds it from a broker's error code. */
const protocol = (type: string) => Object.assign(new KafkaJSProtocolError('from the broker'), { type });

const cases: { name: string; error: unknown; fatal: boolean }[] = [
  { name: 'refused SASL credentials', error: make(KafkaJSSASLAuthenticationError, 'SASL PLAIN authentication failed'), fatal: true },
  { name: 'SASL_AUTHENTICATION_FAILED from the broker', error: protocol('SASL_AUTHENTICATION_FAILED'), fatal: true },
  { name: 'a topic the ACL denies', error: protocol('TOPIC_AUTHORIZATION_FAILED'), fatal: true },
  { name: 'a group the ACL denies', error: protocol('GROUP_AUTHORIZATION_FAILED'), fatal: true },
  { name: 'a session timeout the broker refuses', error: protocol('INVALID_SESSION_TIMEOUT'), fatal: true },
  { name: 'a denied ACL wrapped by kafkajs', error: make(KafkaJSNonRetriableError, 'gave up', { cause: protocol('GROUP_AUTHORIZATION_FAILED') }), fatal: true },
  { name: 'the group coordinator look-up failing while the broker restarts', error: make(KafkaJSGroupCoordinatorNotFound, 'Failed to find group coordinator'), fatal: false },
  { name: 'a refused connection kafkajs gave up on', error: make(KafkaJSNonRetriableError, 'gave up', { cause: new KafkaJSConnectionError('connect ECONNREFUSED') }), fatal: false },
  { name: 'a coordinator still loading', error: protocol('COORDINATOR_LOAD_IN_PROGRESS'), fatal: false },
  { name: 'a TypeError from a null metadata response', error: new TypeError("Cannot read properties of null (reading 'topicMetadata')"), fatal: false },
  { name: 'not an Error', error: 'boom', fatal: false },
];

describe('which errors stop a Kafka consumer for good', () => {
  for (const c of cases) {
    it(`${c.name}: ${c.fatal ? 'ends the run' : 'the consumer is started again'}`, () => {
      assert.equal(isFatalKafkaError(c.error), c.fatal, c.name);
    });
  }
});
