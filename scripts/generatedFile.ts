/**
 * What every generator (tools, settings, the README tool table) does with its result: with --check,
 * compare and exit 1 on drift, naming the command that fixes it; otherwise write the file when it changed.
 */
import { writeFileSync } from 'node:fs';

export interface Generated {
  /** What is generated, as the messages name it: "package.json languageModelTools". */
  what: string;
  file: string;
  /** The file as it is, and as it should be. */
  text: string;
  next: string;
  /** One line per difference, when the generator can say what differs. */
  drift?: readonly string[];
  /** The command that regenerates it. */
  rerun: string;
  /** What the write changed, for its message: "10 tools". */
  summary: string;
}

export function applyGenerated(generated: Generated, check: boolean): number {
  const { what, text, next, drift = [] } = generated;
  const are = what.endsWith('s') ? 'are' : 'is';
  if (next === text) {
    console.log(`${what} ${are} up to date.`);
    return 0;
  }
  if (check) {
    console.error(
      `${what} ${are} out of date${drift.length ? `:\n  ${drift.join('\n  ')}` : '.'}\nRun: ${generated.rerun}`,
    );
    return 1;
  }
  writeFileSync(generated.file, next);
  console.log(`Updated ${what} (${generated.summary})${drift.length ? `:\n  ${drift.join('\n  ')}` : '.'}`);
  return 0;
}
