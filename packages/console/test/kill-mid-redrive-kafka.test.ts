import { killMidRedrive } from './support/kill-mid-redrive.js';

// Split in three files so each stays within the runner's per-file time-out on a busy machine.
killMidRedrive(['Kafka']);
