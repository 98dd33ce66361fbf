// Rewrites the divergences list in docs/brokers.md from conformance/divergences.json:
//   node --import tsx test/differential/render-docs.ts
// (test/differential/table.test.ts fails while the two disagree).
import { readFileSync, writeFileSync } from 'node:fs';
import { DIVERGENCES } from './support/divergences.js';
import { BEGIN, END, renderDivergences } from './support/docs.js';

const file = new URL('../../docs/brokers.md', import.meta.url);
const doc = readFileSync(file, 'utf8');
const start = doc.indexOf(BEGIN);
const end = doc.indexOf(END);
if (start < 0 || end < start) throw new Error('docs/brokers.md has no divergences markers');
writeFileSync(file, `${doc.slice(0, start + BEGIN.length)}\n${renderDivergences(DIVERGENCES)}\n${doc.slice(end)}`);
