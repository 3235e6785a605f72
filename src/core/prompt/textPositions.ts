/** Offsets in a file's text as editors name them: 0-based line and character (UTF-16 units, as VS Code counts). */
export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

/** A replacement of the text between two offsets. */
export interface TextEdit {
  start: number;
  end: number;
  newText: string;
}

export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(readonly text: string) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.starts.push(i + 1);
  }

  get lineCount(): number {
    return this.starts.length;
  }

  lineStart(line: number): number {
    return this.starts[Math.max(0, Math.min(line, this.starts.length - 1))]!;
  }

  /** The line's text without its line break. */
  lineText(line: number): string {
    const start = this.lineStart(line);
    const next = line + 1 < this.starts.length ? this.starts[line + 1]! - 1 : this.text.length;
    return this.text.slice(start, next).replace(/\r$/, '');
  }

  position(offset: number): Position {
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.starts[middle]! <= clamped) low = middle;
      else high = middle - 1;
    }
    return { line: low, character: clamped - this.starts[low]! };
  }

  offset(position: Position): number {
    return Math.min(this.lineStart(position.line) + position.character, this.text.length);
  }

  range(start: number, end: number): Range {
    return { start: this.position(start), end: this.position(end) };
  }
}

/** Applies non-overlapping edits to a text (in any order). */
export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  let result = text;
  for (const edit of [...edits].sort((a, b) => b.start - a.start))
    result = result.slice(0, edit.start) + edit.newText + result.slice(edit.end);
  return result;
}
