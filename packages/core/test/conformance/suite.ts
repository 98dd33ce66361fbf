import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { repoRoot, sharedConformance } from '../support/paths.js';

/** One envelope case of a manifest (the shared shape plus the project's extension fields). */
export interface EnvelopeCase {
  name: string;
  file: string;
  valid: boolean;
  reason?: string;
  expect?: {
    urn: string;
    data: Record<string, unknown>;
    attempts: number;
    lang: string;
    schema_version: number;
    dead_letter?: Record<string, unknown>;
  };
  validator_reason?: string;
  schema_check?: string | null;
  warnings?: string[];
}

/** A reconciliation case: body attempts, one native count field, the expected result. */
export type ReconcileCase = { name: string; body_attempts: number; expected_attempts: number } & Record<string, unknown>;

interface Block {
  attempts_reconciliation?: { cases: ReconcileCase[] };
}

/** One delivery of an idempotency sequence. */
export interface IdempotencyDelivery {
  meta_id: string;
  expect_effect: 'run' | 'skip';
  outcome?: 'ok' | 'throw';
  forget_before?: boolean;
}

export interface Manifest {
  cases: EnvelopeCase[];
  idempotency?: {
    dedup_key: { envelope_file: string; key_field: string; expected_key: string };
    sequences: { cases: { name: string; deliveries: IdempotencyDelivery[]; expected_effects: number }[] };
  };
  sqs?: Block & { attribute_projection: { envelope_file: string; message_attributes: Record<string, unknown> } };
  asb?: Block & {
    property_projection: { envelope_file: string; message: Record<string, string>; application_properties: Record<string, unknown> };
  };
  pulsar?: Block & { property_projection: { envelope_file: string; properties: Record<string, string> } };
  kafka?: Block & { property_projection: { envelope_file: string; headers: Record<string, string> } };
  artemis?: Block & {
    property_projection: {
      envelope_file: string;
      jms_type_annotation: string;
      jms_type: string;
      correlation_id: string;
      properties: Record<string, string>;
    };
  };
  jms?: Block;
  redis?: { payload_identity: { envelope_file: string } };
  rabbitmq?: { property_projection: { envelope_file: string; properties: Record<string, string>; headers: Record<string, unknown> } };
  payload_schema?: { schema: object; cases: { name: string; valid: boolean; data: unknown; violation?: string }[] };
}

/** A conformance suite on disk: its manifest and a reader for its fixtures (raw bytes). */
export interface Suite {
  readonly name: string;
  readonly manifest: Manifest;
  fixture(file: string): Buffer;
}

function load(name: string, dir: string): Suite {
  return {
    name,
    manifest: JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest,
    fixture: (file) => readFileSync(join(dir, file)),
  };
}

/** The project's own suite (always present). */
export const ownSuite = load('own fixtures', resolve(repoRoot, 'packages/core/test/fixtures'));

/** The public cross-SDK suite from `../shared/conformance`, when this machine has it. */
export const sharedSuite: Suite | undefined =
  sharedConformance === undefined ? undefined : load('shared cross-SDK suite', sharedConformance);

/** Both suites, each with the `skip` option its describe block should use. */
export const suites: { suite: Suite | undefined; name: string; skip: string | false }[] = [
  { suite: ownSuite, name: ownSuite.name, skip: false },
  {
    suite: sharedSuite,
    name: 'shared cross-SDK suite',
    skip: sharedSuite === undefined ? 'SKIPPED: ../shared/conformance is not on this machine (own fixtures cover the same ground)' : false,
  },
];
