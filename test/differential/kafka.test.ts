// Differential conformance over Kafka with one retry tier (1 s): see support/kafka-target.ts.
import { describeDifferential } from './support/driver.js';
import { kafkaTarget, TIERS } from './support/kafka-target.js';

describeDifferential(kafkaTarget('kafka', TIERS));
