import { killMidRedrive } from './support/kill-mid-redrive.js';

// Split in four files so each stays within the runner's per-file time-out on a busy machine.
killMidRedrive(['Kafka']);
