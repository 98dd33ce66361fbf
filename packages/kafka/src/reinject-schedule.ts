import { KafkaHeader, headerText, type RawHeaders } from './projection.js';

/**
 * When a retry-topic record is due back on its work topic:
 * `record.timestamp + tierMs`, clamped to `[now, now + tierMs]` so a record
 * whose timestamp lies in the future (clock skew, CreateTime topics) never
 * waits longer than one tier.
 */
export function reinjectDueAt(recordTimestamp: number, tierMs: number, now: number): number {
  const due = Number.isFinite(recordTimestamp) ? recordTimestamp + tierMs : now;
  return Math.min(Math.max(due, now), now + tierMs);
}

/** The work topic a retry-topic record returns to: `bq-original-topic`, else `workTopic`. */
export function originalTopicOf(headers: RawHeaders | undefined, workTopic: string): string {
  const text = headerText(headers, KafkaHeader.ORIGINAL_TOPIC)?.trim();
  return text !== undefined && text !== '' ? text : workTopic;
}
