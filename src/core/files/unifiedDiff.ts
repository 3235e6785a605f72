/** Line diffs of two texts as unified hunks, and whether bytes are text. */

/** Whether bytes read as text: no NUL in the first 8 KiB, and valid UTF-8. */
export function isText(data: Uint8Array): boolean {
  if (data.subarray(0, 8192).includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(data);
    return true;
  } catch {
    return false;
  }
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else lines[lines.length - 1] += '\n\\ No newline at end of file';
  return lines;
}

type Op = { kind: ' ' | '-' | '+'; line: string };

/** Line operations from the longest common subsequence (fine for the files an agent edits). */
function diffLines(a: string[], b: string[]): Op[] {
  // Common prefix and suffix first: most edits are small.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const n = midA.length;
  const m = midB.length;
  const ops: Op[] = a.slice(0, start).map((line) => ({ kind: ' ', line }));
  if (n * m > 25_000_000) {
    for (const line of midA) ops.push({ kind: '-', line });
    for (const line of midB) ops.push({ kind: '+', line });
  } else {
    const table = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        table[i]![j] = midA[i] === midB[j] ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!);
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && midA[i] === midB[j]) {
        ops.push({ kind: ' ', line: midA[i]! });
        i++;
        j++;
      } else if (i < n && (j === m || table[i + 1]![j]! >= table[i]![j + 1]!)) {
        ops.push({ kind: '-', line: midA[i++]! });
      } else {
        ops.push({ kind: '+', line: midB[j++]! });
      }
    }
  }
  for (const line of a.slice(endA)) ops.push({ kind: ' ', line });
  return ops;
}

/** The hunks of a unified diff with three lines of context. */
export function unifiedHunks(oldText: string, newText: string, context = 3): string[] {
  const ops = diffLines(splitLines(oldText), splitLines(newText));
  const out: string[] = [];
  let index = 0;
  while (index < ops.length) {
    while (index < ops.length && ops[index]!.kind === ' ') index++;
    if (index >= ops.length) break;
    const begin = Math.max(0, index - context);
    let end = index;
    // Extend the hunk while changes are within 2 × context of each other.
    for (;;) {
      while (end < ops.length && ops[end]!.kind !== ' ') end++;
      let next = end;
      while (next < ops.length && ops[next]!.kind === ' ') next++;
      if (next < ops.length && next - end <= 2 * context) end = next;
      else break;
    }
    const stop = Math.min(ops.length, end + context);
    let oldStart = 1;
    let newStart = 1;
    for (let k = 0; k < begin; k++) {
      if (ops[k]!.kind !== '+') oldStart++;
      if (ops[k]!.kind !== '-') newStart++;
    }
    const slice = ops.slice(begin, stop);
    const oldCount = slice.filter((op) => op.kind !== '+').length;
    const newCount = slice.filter((op) => op.kind !== '-').length;
    const range = (startLine: number, count: number) =>
      count === 1 ? `${startLine}` : `${count === 0 ? startLine - 1 : startLine},${count}`;
    out.push(`@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@`);
    for (const op of slice) out.push(`${op.kind}${op.line}`);
    index = stop;
  }
  return out;
}
