/** What the analysis of a `.prompt` file reports: problems at exact ranges, with fixes as plain text edits. */
import type { LineIndex, Range, TextEdit } from './textPositions';

export type ProblemSeverity = 'error' | 'warning';

export type ProblemCode =
  | 'frontmatter-unterminated'
  | 'frontmatter-not-a-map'
  | 'yaml-syntax'
  | 'yaml-warning'
  | 'duplicate-key'
  | 'invalid-type'
  | 'invalid-value'
  | 'unknown-key'
  | 'mode-conflict'
  | 'package-runtime'
  | 'overridden-value'
  | 'unknown-secret'
  | 'duplicate-secret'
  | 'frontmatter-type';

export interface PromptFix {
  title: string;
  edits: TextEdit[];
  /** The one obvious fix (VS Code offers it first and applies it with "Auto Fix"). */
  preferred?: boolean;
}

export interface PromptProblem {
  severity: ProblemSeverity;
  code: ProblemCode;
  message: string;
  /** Offsets in the file's text. */
  start: number;
  end: number;
  range: Range;
  fixes: PromptFix[];
}

/** Collects problems, turning offsets into line/character ranges once. */
export class ProblemList {
  readonly items: PromptProblem[] = [];

  constructor(private readonly lines: LineIndex) {}

  add(
    severity: ProblemSeverity,
    code: ProblemCode,
    message: string,
    start: number,
    end: number,
    fixes: PromptFix[] = [],
  ): void {
    const [from, to] = end > start ? [start, end] : [start, Math.min(start + 1, this.lines.text.length)];
    this.items.push({
      severity,
      code,
      message,
      start: from,
      end: Math.max(from, to),
      range: this.lines.range(from, Math.max(from, to)),
      fixes,
    });
  }

  sorted(): PromptProblem[] {
    return [...this.items].sort((a, b) => a.start - b.start || a.end - b.end);
  }
}
