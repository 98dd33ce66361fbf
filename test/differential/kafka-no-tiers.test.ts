// Differential conformance over Kafka without retry tiers: see support/kafka-target.ts.
import { describeDifferential } from './support/driver.js';
import { kafkaTarget } from './support/kafka-target.js';

describeDifferential(kafkaTarget('kafka-no-tiers', undefined));
